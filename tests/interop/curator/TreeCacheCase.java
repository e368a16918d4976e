import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.TreeCache;
import org.apache.curator.framework.recipes.cache.TreeCacheEvent;

/**
 * TreeCache, the older subtree cache that sets one-shot data and child watches on every node
 * (many Curator users still run it): initial load, then adds, updates and removals two levels
 * down arrive in order, each with the data the server holds. Deprecated in Curator 5 in favour
 * of CuratorCache, which is why this class is exempt from the deprecation lint.
 */
@SuppressWarnings("deprecation")
final class TreeCacheCase implements Check.Case {
    @Override
    public String name() {
        return "TreeCache";
    }

    @Override
    public void run(String connect) throws Exception {
        String root = Check.base("tree-cache") + "/tree";
        CuratorFramework watcher = Check.client(connect);
        CuratorFramework writer = Check.client(connect);
        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        TreeCache cache = TreeCache.newBuilder(watcher, root).build();
        try {
            writer.create().creatingParentsIfNeeded().forPath(root, bytes("root"));
            cache.getListenable().addListener((c, e) -> events.add(describe(e)));
            cache.start();
            Check.equal("NODE_ADDED " + root + " root", Check.next(events, "the root loaded"), "first event");
            Check.equal("INITIALIZED", Check.next(events, "the cache initialized"), "second event");

            writer.create().forPath(root + "/a", bytes("a0"));
            expect(events, "NODE_ADDED " + root + "/a a0");
            writer.create().forPath(root + "/a/b", bytes("b0"));
            expect(events, "NODE_ADDED " + root + "/a/b b0");
            writer.setData().forPath(root + "/a/b", bytes("b1"));
            expect(events, "NODE_UPDATED " + root + "/a/b b1");
            writer.setData().forPath(root + "/a", bytes("a1"));
            expect(events, "NODE_UPDATED " + root + "/a a1");
            writer.delete().forPath(root + "/a/b");
            expect(events, "NODE_REMOVED " + root + "/a/b b1");
            writer.delete().forPath(root + "/a");
            expect(events, "NODE_REMOVED " + root + "/a a1");
            Check.equal(0, cache.getCurrentChildren(root).size(), "children in the cache at the end");
            Check.that(events.isEmpty(), "no events beyond those expected: " + events);
        } finally {
            cache.close();
            watcher.close();
            writer.close();
        }
    }

    private static String describe(TreeCacheEvent e) {
        if (e.getData() == null) {
            return e.getType().toString();
        }
        byte[] data = e.getData().getData();
        return e.getType() + " " + e.getData().getPath() + " " + (data == null ? "" : new String(data, StandardCharsets.UTF_8));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static void expect(BlockingQueue<String> events, String wanted) throws InterruptedException {
        Check.equal(wanted, Check.next(events, "event " + wanted), "the next cache event");
    }
}
