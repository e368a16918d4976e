package shepherd.testing;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * Curator clients for the tests, and the one bound every wait in them has. Each wait is on an
 * event (a connection state, an acquisition), never a sleep.
 */
final class Clients {
    /** The bound on every wait for an event. */
    static final long WAIT_SECONDS = 30;

    private Clients() {}

    /** A started Curator client on {@code connect}, connected, with a 6 s session timeout. */
    static CuratorFramework connected(String connect) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.newClient(connect, 6_000, 10_000,
                new ExponentialBackoffRetry(100, 10));
        client.start();
        if (!client.blockUntilConnected((int) WAIT_SECONDS, TimeUnit.SECONDS)) {
            client.close();
            throw new AssertionError("Curator did not connect to " + connect + " in " + WAIT_SECONDS + " s");
        }
        return client;
    }

    /** Every connection state the client reports from now on, in order. */
    static BlockingQueue<ConnectionState> states(CuratorFramework client) {
        BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
        client.getConnectionStateListenable().addListener((c, state) -> states.add(state));
        return states;
    }

    /** Waits for {@code wanted} among the states, skipping others; fails after the bound. */
    static void await(BlockingQueue<ConnectionState> states, ConnectionState wanted) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (true) {
            long left = deadline - System.nanoTime();
            ConnectionState state = left > 0 ? states.poll(left, TimeUnit.NANOSECONDS) : null;
            if (state == null) {
                throw new AssertionError("no " + wanted + " within " + WAIT_SECONDS + " s");
            }
            if (state == wanted) {
                return;
            }
        }
    }

    static long sessionId(CuratorFramework client) throws Exception {
        return client.getZookeeperClient().getZooKeeper().getSessionId();
    }
}
