package shepherd.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;

/**
 * {@code restart()} and {@code stop()}/{@code start()} keep the port (every member's) and the
 * data, as curator-test's {@code TestingServer.restart()} does.
 */
class RestartTest {
    private static final byte[] DATA = "kept".getBytes(StandardCharsets.UTF_8);

    @Test
    void restartKeepsPortAndData() throws Exception {
        try (ShepherdServer server = new ShepherdServer()) {
            int port = server.getPort();
            try (CuratorFramework client = Clients.connected(server.getConnectString())) {
                client.create().creatingParentsIfNeeded().forPath("/restart/node", DATA);
            }
            server.restart();
            assertEquals(port, server.getPort(), "the same port after a restart");
            try (CuratorFramework client = Clients.connected(server.getConnectString())) {
                assertArrayEquals(DATA, client.getData().forPath("/restart/node"));
            }
        }
    }

    /**
     * Three members on free ports, which need not be consecutive: each comes back on its own
     * port, and the data is there.
     */
    @Test
    void anEnsembleOnFreePortsRestartsOnTheSamePorts() throws Exception {
        try (ShepherdServer server = ShepherdServer.builder().members(3).build()) {
            String connect = server.getConnectString();
            try (CuratorFramework client = Clients.connected(connect)) {
                client.create().forPath("/ensemble-restart", DATA);
            }
            server.restart();
            assertEquals(connect, server.getConnectString(), "every member on its port again");
            try (CuratorFramework client = Clients.connected(server.getConnectString())) {
                assertArrayEquals(DATA, client.getData().forPath("/ensemble-restart"));
            }
        }
    }

    @Test
    void stopThenStartKeepsData() throws Exception {
        try (ShepherdServer server = new ShepherdServer()) {
            try (CuratorFramework client = Clients.connected(server.getConnectString())) {
                client.create().forPath("/stopped", DATA);
            }
            server.stop();
            assertFalse(server.isRunning());
            server.start();
            assertTrue(server.isRunning());
            try (CuratorFramework client = Clients.connected(server.getConnectString())) {
                assertArrayEquals(DATA, client.getData().forPath("/stopped"));
            }
        }
    }
}
