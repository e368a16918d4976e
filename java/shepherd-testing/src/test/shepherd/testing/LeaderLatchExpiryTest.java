package shepherd.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.state.ConnectionState;
import org.junit.jupiter.api.Test;

/**
 * A Curator {@link LeaderLatch} whose session the server expires ({@code expireSession}, not
 * curator-test's client-side {@code KillSession}): Curator reports {@code LOST}, the latch
 * loses leadership, and a second latch on the same path becomes leader.
 */
class LeaderLatchExpiryTest {
    @Test
    void serverSideExpiryIsSeenAsLost() throws Exception {
        try (ShepherdServer server = new ShepherdServer();
                CuratorFramework leader = Clients.connected(server.getConnectString());
                CuratorFramework other = Clients.connected(server.getConnectString())) {
            BlockingQueue<ConnectionState> states = Clients.states(leader);
            CountDownLatch lostLeadership = new CountDownLatch(1);
            try (LeaderLatch first = new LeaderLatch(leader, "/leader", "first")) {
                first.addListener(new LeaderLatchListener() {
                    @Override
                    public void isLeader() {}

                    @Override
                    public void notLeader() {
                        lostLeadership.countDown();
                    }
                });
                first.start();
                assertTrue(first.await(Clients.WAIT_SECONDS, TimeUnit.SECONDS), "the first latch leads");
                try (LeaderLatch second = new LeaderLatch(other, "/leader", "second")) {
                    second.start();

                    server.expireSession(Clients.sessionId(leader));

                    Clients.await(states, ConnectionState.LOST);
                    assertTrue(lostLeadership.await(Clients.WAIT_SECONDS, TimeUnit.SECONDS),
                            "the first latch is told it no longer leads");
                    assertTrue(second.await(Clients.WAIT_SECONDS, TimeUnit.SECONDS),
                            "the second latch takes over");
                }
            }
        }
    }
}
