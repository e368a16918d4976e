package shepherd.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import shepherd.testing.junit.ShepherdExtension;

/**
 * The controls a test reaches through {@code ShepherdServer} beyond expiry: a cut connection
 * that the client resumes with its session, and the server's count of the notifications it
 * delivered. Uses the extension, as most tests would.
 */
@ExtendWith(ShepherdExtension.class)
class ControlsTest {
    @Test
    void closedConnectionResumesTheSession(ShepherdServer server) throws Exception {
        try (CuratorFramework client = Clients.connected(server.getConnectString())) {
            BlockingQueue<ConnectionState> states = Clients.states(client);
            long session = Clients.sessionId(client);

            server.closeConnection(session);

            Clients.await(states, ConnectionState.SUSPENDED);
            Clients.await(states, ConnectionState.RECONNECTED);
            assertEquals(session, Clients.sessionId(client), "the same session after the cut");
        }
    }

    @Test
    void notificationCountsSeeADataWatch(ShepherdServer server) throws Exception {
        try (CuratorFramework client = Clients.connected(server.getConnectString())) {
            client.create().forPath("/watched", new byte[0]);
            CountDownLatch fired = new CountDownLatch(1);
            client.getData().usingWatcher((org.apache.zookeeper.Watcher) event -> fired.countDown())
                    .forPath("/watched");
            client.setData().forPath("/watched", new byte[] {1});
            assertEquals(true, fired.await(Clients.WAIT_SECONDS, TimeUnit.SECONDS), "the watch fired");

            Map<String, Long> counts = server.notificationCounts();
            assertEquals(1L, counts.get("total"), counts.toString());
            assertEquals(1L, counts.get("NodeDataChanged"), counts.toString());
        }
    }
}
