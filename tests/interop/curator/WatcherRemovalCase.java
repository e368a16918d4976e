import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/**
 * Curator 5's watcher API: a persistent recursive watch (`watchers().add()`) fires for every
 * change below it, and `watchers().remove()` (removeWatches) stops it, with the
 * `PersistentWatchRemoved` event ZooKeeper 3.8 delivers.
 */
final class WatcherRemovalCase implements Check.Case {
    @Override
    public String name() {
        return "watchers add and remove";
    }

    @Override
    public void run(String connect) throws Exception {
        String base = Check.base("watchers");
        CuratorFramework client = Check.client(connect);
        CuratorFramework writer = Check.client(connect);
        try {
            client.create().creatingParentsIfNeeded().forPath(base);
            CountDownLatch twoChanges = new CountDownLatch(2);
            CountDownLatch removed = new CountDownLatch(1);
            CountDownLatch afterRemoval = new CountDownLatch(1);
            CuratorWatcher watcher = new CuratorWatcher() {
                @Override
                public void process(WatchedEvent e) {
                    if (e.getType() == Watcher.Event.EventType.PersistentWatchRemoved) {
                        removed.countDown();
                    } else if (e.getType() != Watcher.Event.EventType.None) {
                        if (removed.getCount() == 0) {
                            afterRemoval.countDown();
                        }
                        twoChanges.countDown();
                    }
                }
            };
            client.watchers().add().withMode(AddWatchMode.PERSISTENT_RECURSIVE).usingWatcher(watcher).forPath(base);
            writer.create().forPath(base + "/a");
            writer.create().forPath(base + "/a/b");
            Check.await(twoChanges, "two events from one persistent recursive watch");
            client.watchers().remove(watcher).forPath(base);
            Check.await(removed, "PersistentWatchRemoved after watchers().remove()");
            writer.create().forPath(base + "/c");
            writer.sync().forPath(base); // ordered after the create on the writer's session
            Check.that(!afterRemoval.await(Check.BRIEF_MS, TimeUnit.MILLISECONDS), "an event after the watch was removed");
        } finally {
            client.close();
            writer.close();
        }
    }
}
