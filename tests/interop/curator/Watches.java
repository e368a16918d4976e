import java.util.concurrent.CountDownLatch;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/**
 * One-shot latches on a node's existence, from `exists` watches: the checks that time the
 * server (a container reaped, a TTL node expired) wait on these, never on a sleep.
 */
final class Watches {
    private Watches() {}

    /** A latch that opens when `path` is deleted; `path` must exist now. */
    static CountDownLatch deleted(CuratorFramework client, String path) throws Exception {
        CountDownLatch latch = new CountDownLatch(1);
        Check.that(client.checkExists().usingWatcher(rearming(client, path, Watcher.Event.EventType.NodeDeleted, latch))
                .forPath(path) != null, path + " exists before the wait");
        return latch;
    }

    /** A latch that opens when `path` is created; open at once if it exists already. */
    static CountDownLatch created(CuratorFramework client, String path) throws Exception {
        CountDownLatch latch = new CountDownLatch(1);
        if (client.checkExists().usingWatcher(rearming(client, path, Watcher.Event.EventType.NodeCreated, latch))
                .forPath(path) != null) {
            latch.countDown();
        }
        return latch;
    }

    /**
     * Opens the latch on `wanted`; on any other change of the node (its data) sets the watch
     * again. A failure to re-arm opens the latch too: the caller's next check says what is true.
     */
    private static Watcher rearming(CuratorFramework client, String path, Watcher.Event.EventType wanted,
            CountDownLatch latch) {
        return new Watcher() {
            @Override
            public void process(WatchedEvent e) {
                if (e.getType() == wanted) {
                    latch.countDown();
                } else if (e.getType() != Event.EventType.None) {
                    try {
                        client.checkExists().usingWatcher(this).forPath(path);
                    } catch (Exception ex) {
                        latch.countDown();
                    }
                }
            }
        };
    }
}
