import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.Watcher;

/**
 * Watches across a dropped connection (the session lives on): on reconnecting, the client
 * re-sets its watches with the last zxid it saw (SetWatches2), and the server fires at once
 * those whose node changed meanwhile, as ZooKeeper 3.8 `DataTree.setWatches` does: a data
 * watch on a changed node (NodeDataChanged) or a deleted one (NodeDeleted), an exists watch on a node now there (NodeCreated),
 * a child watch on a parent whose children changed (NodeChildrenChanged). A persistent
 * recursive watch is set again without replaying what it missed, and fires for what follows.
 */
final class ReconnectCase implements Check.Case {
    @Override
    public String name() {
        return "watches across a reconnect";
    }

    @Override
    public void run(String connect) throws Exception {
        String base = Check.base("reconnect");
        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
        CuratorWatcher record = e -> {
            if (e.getType() != Watcher.Event.EventType.None) {
                events.add(e.getType() + " " + e.getPath());
            }
        };
        try (Proxy proxy = new Proxy(connect)) {
            CuratorFramework writer = Check.client(connect);
            CuratorFramework client = CuratorFrameworkFactory.builder()
                    .connectString(proxy.connectString())
                    .sessionTimeoutMs(Check.SESSION_MS)
                    .connectionTimeoutMs(5_000)
                    .retryPolicy(new ExponentialBackoffRetry(100, 5))
                    .build();
            try {
                client.getConnectionStateListenable().addListener((c, s) -> states.add(s));
                client.start();
                Check.nextMatching(states, s -> s == ConnectionState.CONNECTED, Check.WAIT_SECONDS, "connected through the proxy");
                writer.create().creatingParentsIfNeeded().forPath(base + "/data", new byte[] {1});
                writer.create().forPath(base + "/children");
                writer.create().forPath(base + "/tree");
                writer.create().forPath(base + "/gone");
                client.getData().usingWatcher(record).forPath(base + "/gone");
                client.getData().usingWatcher(record).forPath(base + "/data");
                Check.that(client.checkExists().usingWatcher(record).forPath(base + "/later") == null, "the exists watch's node is absent");
                client.getChildren().usingWatcher(record).forPath(base + "/children");
                client.watchers().add().withMode(AddWatchMode.PERSISTENT_RECURSIVE).usingWatcher(record).forPath(base + "/tree");
                long session = client.getZookeeperClient().getZooKeeper().getSessionId();

                proxy.cut();
                Check.nextMatching(states, s -> s == ConnectionState.SUSPENDED, Check.WAIT_SECONDS, "the client's connection dropped");
                writer.setData().forPath(base + "/data", new byte[] {2});
                writer.create().forPath(base + "/later");
                writer.create().forPath(base + "/children/one");
                writer.create().forPath(base + "/tree/missed");
                writer.delete().forPath(base + "/gone");
                Check.that(events.isEmpty(), "events while disconnected: " + events);
                proxy.restore();
                Check.nextMatching(states, s -> s == ConnectionState.RECONNECTED, Check.WAIT_SECONDS, "the client reconnected");
                Check.equal(session, client.getZookeeperClient().getZooKeeper().getSessionId(), "the session after reconnecting");

                Set<String> fired = new TreeSet<>();
                for (int i = 0; i < 4; i++) {
                    fired.add(Check.next(events, "the watches fired on reconnecting"));
                }
                Check.equal(new TreeSet<>(List.of(
                        "NodeDataChanged " + base + "/data",
                        "NodeDeleted " + base + "/gone",
                        "NodeCreated " + base + "/later",
                        "NodeChildrenChanged " + base + "/children")), fired, "the watches fired on reconnecting");
                writer.create().forPath(base + "/tree/after");
                Check.equal("NodeCreated " + base + "/tree/after", Check.next(events, "the persistent watch after reconnecting"),
                        "the persistent watch's next event (what it missed is not replayed)");
            } finally {
                client.close();
                writer.close();
            }
        }
    }
}
