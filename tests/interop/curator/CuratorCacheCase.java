import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.CreateMode;

/**
 * CuratorCache, which keeps a subtree with one persistent recursive watch (`addWatch`,
 * ZooKeeper 3.6+): it loads what is there, then sees another client create, change and
 * delete nodes at any depth below its root, in order, and its view matches the server's.
 */
final class CuratorCacheCase implements Check.Case {
    @Override
    public String name() {
        return "CuratorCache";
    }

    /** One event as the listener saw it: "TYPE path data". */
    private static String describe(CuratorCacheListener.Type type, ChildData oldData, ChildData data) {
        ChildData d = data != null ? data : oldData;
        String bytes = d.getData() == null ? "" : new String(d.getData(), StandardCharsets.UTF_8);
        return type + " " + d.getPath() + " " + bytes;
    }

    @Override
    public void run(String connect) throws Exception {
        String root = Check.base("curator-cache") + "/tree";
        CuratorFramework watcher = Check.client(connect);
        CuratorFramework writer = Check.client(connect);
        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        CountDownLatch initialized = new CountDownLatch(1);
        CuratorCache cache = CuratorCache.build(watcher, root);
        try {
            writer.create().creatingParentsIfNeeded().forPath(root, bytes("root"));
            writer.create().forPath(root + "/before", bytes("b0"));
            cache.listenable().addListener(new CuratorCacheListener() {
                @Override
                public void event(Type type, ChildData oldData, ChildData data) {
                    events.add(describe(type, oldData, data));
                }

                @Override
                public void initialized() {
                    initialized.countDown();
                }
            });
            cache.start();
            Check.await(initialized, "the cache's initial load");
            // The initial load reads the root and its children concurrently: any order.
            java.util.Set<String> loaded = new java.util.TreeSet<>();
            loaded.add(Check.next(events, "the first loaded node"));
            loaded.add(Check.next(events, "the second loaded node"));
            Check.equal(new java.util.TreeSet<>(java.util.List.of("NODE_CREATED " + root + " root",
                    "NODE_CREATED " + root + "/before b0")), loaded, "the initial load");

            writer.create().forPath(root + "/a", bytes("a0"));
            expect(events, "NODE_CREATED " + root + "/a a0");
            writer.create().withMode(CreateMode.PERSISTENT).forPath(root + "/a/b", bytes("b0"));
            expect(events, "NODE_CREATED " + root + "/a/b b0");
            writer.create().forPath(root + "/a/b/c", bytes("c0"));
            expect(events, "NODE_CREATED " + root + "/a/b/c c0");
            writer.setData().forPath(root + "/a/b", bytes("b1"));
            expect(events, "NODE_CHANGED " + root + "/a/b b1");
            writer.setData().forPath(root + "/a/b/c", bytes("c1"));
            expect(events, "NODE_CHANGED " + root + "/a/b/c c1");
            writer.delete().forPath(root + "/a/b/c");
            expect(events, "NODE_DELETED " + root + "/a/b/c c1");
            writer.delete().deletingChildrenIfNeeded().forPath(root + "/a");
            expect(events, "NODE_DELETED " + root + "/a/b b1", "NODE_DELETED " + root + "/a a0");
            writer.setData().forPath(root, bytes("root1"));
            expect(events, "NODE_CHANGED " + root + " root1");

            Check.equal(2L, cache.stream().count(), "nodes in the cache at the end");
            Check.equal("root1", new String(cache.get(root).orElseThrow().getData(), StandardCharsets.UTF_8),
                    "the root's data in the cache");
            Check.that(cache.get(root + "/a").isEmpty(), "a deleted node is gone from the cache");
            Check.that(events.isEmpty(), "no events beyond those expected: " + events);
        } finally {
            cache.close();
            watcher.close();
            writer.close();
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** The next events are exactly these, in this order. */
    private static void expect(BlockingQueue<String> events, String... wanted) throws InterruptedException {
        for (String w : wanted) {
            Check.equal(w, Check.next(events, "event " + w), "the next cache event");
        }
    }
}
