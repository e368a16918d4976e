package shepherd.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.junit.jupiter.api.Test;

/**
 * Failover across a three-member {@code ShepherdServer}: the member the client is connected to
 * is stopped; the client moves to another member with its session, and its data is there.
 */
class EnsembleFailoverTest {
    @Test
    void clientMovesWithItsSession() throws Exception {
        try (ShepherdServer ensemble = ShepherdServer.builder().members(3).build()) {
            assertEquals(3, ensemble.getPorts().size());
            assertEquals(3, ensemble.getConnectString().split(",").length);
            try (CuratorFramework client = Clients.connected(ensemble.getConnectString())) {
                BlockingQueue<ConnectionState> states = Clients.states(client);
                byte[] data = "before".getBytes(StandardCharsets.UTF_8);
                client.create().forPath("/failover", data);
                long session = Clients.sessionId(client);
                int member = ensemble.memberOf(session);
                assertTrue(member >= 1 && member <= 3, "the session is on a member: " + member);

                ensemble.stopMember(member);

                Clients.await(states, ConnectionState.SUSPENDED);
                Clients.await(states, ConnectionState.RECONNECTED);
                assertEquals(session, Clients.sessionId(client), "the same session after failover");
                int now = ensemble.memberOf(session);
                assertNotEquals(member, now, "the session moved off the stopped member");
                assertArrayEquals(data, client.getData().forPath("/failover"));

                ensemble.startMember(member);
            }
        }
    }

    /**
     * A forced election suspends every Curator client, whichever member it is on, as a real
     * ensemble's members all go LOOKING; the client reconnects with its session.
     */
    @Test
    void aForcedElectionSuspendsEveryClient() throws Exception {
        try (ShepherdServer ensemble = ShepherdServer.builder().members(3).build()) {
            try (CuratorFramework client = Clients.connected(ensemble.getConnectString())) {
                BlockingQueue<ConnectionState> states = Clients.states(client);
                long session = Clients.sessionId(client);

                ensemble.electMember(1);

                Clients.await(states, ConnectionState.SUSPENDED);
                Clients.await(states, ConnectionState.RECONNECTED);
                assertEquals(session, Clients.sessionId(client), "the same session after the election");
            }
        }
    }
}
