import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/**
 * A session ended by the server, the portable way: a second raw handle attaches to the
 * Curator client's session (same id and password) and closes it, so the server closes the
 * session for real. The Curator client must see LOST, its ephemeral node must be gone, and
 * it must carry on with a new session.
 */
final class SessionEndCase implements Check.Case {
    @Override
    public String name() {
        return "session ended server-side";
    }

    @Override
    public void run(String connect) throws Exception {
        String base = Check.base("session-end");
        String mine = base + "/ephemeral";
        CuratorFramework client = Check.client(connect);
        CuratorFramework observer = Check.client(connect);
        BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
        try {
            client.getConnectionStateListenable().addListener((c, state) -> states.add(state));
            client.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(mine);
            ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
            long sessionId = zk.getSessionId();
            byte[] password = zk.getSessionPasswd();
            CountDownLatch gone = Watches.deleted(observer, mine);

            CountDownLatch attached = new CountDownLatch(1);
            ZooKeeper second = new ZooKeeper(connect, Check.SESSION_MS, e -> {
                if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                    attached.countDown();
                }
            }, sessionId, password);
            try {
                Check.await(attached, "the second handle attached to the session");
                Check.equal(sessionId, second.getSessionId(), "the second handle's session");
            } finally {
                second.close(); // closeSession: the server ends the session, for both handles
            }

            Check.nextMatching(states, s -> s == ConnectionState.LOST, Check.WAIT_SECONDS,
                    "ConnectionState.LOST on the Curator client");
            Check.await(gone, "the ended session's ephemeral node deleted");
            Check.that(observer.checkExists().forPath(mine) == null, "the ended session's ephemeral node is gone");
            Check.nextMatching(states, s -> s == ConnectionState.RECONNECTED, Check.WAIT_SECONDS,
                    "the Curator client reconnected with a new session");
            long now = client.getZookeeperClient().getZooKeeper().getSessionId();
            Check.that(now != sessionId, "the client has a new session");
            client.create().withMode(CreateMode.EPHEMERAL).forPath(mine);
            Check.that(observer.checkExists().forPath(mine).getEphemeralOwner() == now,
                    "the new session owns a new ephemeral node");
        } finally {
            client.close();
            observer.close();
        }
    }
}
