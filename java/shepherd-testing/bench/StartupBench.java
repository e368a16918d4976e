import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import shepherd.testing.ShepherdServer;
import shepherd.testing.ShepherdServerBuilder;

/**
 * Start-to-connected-client of {@code ShepherdServer} against curator-test's
 * {@code TestingServer} and {@code TestingCluster(3)}, side by side in one JVM: each case
 * 1 discarded run and 5 measured, every run and the median printed (docs/java.md). A
 * benchmark, never a test: it asserts nothing.
 *
 * <pre>
 * java -cp CP StartupBench            all four cases, in one JVM
 * java -cp CP StartupBench first      only the first ShepherdServer of a fresh JVM
 * java -cp CP StartupBench first-zk   only the first TestingServer of a fresh JVM
 * </pre>
 *
 * A run is: build and start the server, then a Curator client connected to it (its
 * {@code blockUntilConnected}). Closing the client and the server is not timed. For ShepherdServer the part until the
 * server's ready line is also printed, to show where the time goes.
 */
public final class StartupBench {
    private static final int DISCARDED = 1;
    private static final int MEASURED = 5;

    private StartupBench() {}

    /** One start: returns {total ms, ms until the server was up}. */
    interface Case {
        double[] run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "all";
        if (mode.equals("first")) {
            double[] t = shepherd(ShepherdServer.builder()).run();
            System.out.printf(Locale.ROOT, "first ShepherdServer of a fresh JVM: %.1f ms (server up %.1f ms)%n", t[0], t[1]);
            System.exit(0);
        }
        if (mode.equals("first-zk")) {
            double[] t = testingServer().run();
            System.out.printf(Locale.ROOT, "first TestingServer of a fresh JVM: %.1f ms%n", t[0]);
            System.exit(0);
        }
        double single = median("ShepherdServer()", shepherd(ShepherdServer.builder()));
        median("ShepherdServer in memory", shepherd(ShepherdServer.builder().inMemory()));
        double zk = median("TestingServer()", testingServer());
        double ensemble = median("ShepherdServer members(3)", shepherd(ShepherdServer.builder().members(3)));
        double cluster = median("TestingCluster(3)", StartupBench::testingCluster);
        System.out.printf(Locale.ROOT, "ratio single: %.1f ms / %.1f ms = 1/%.0f (target 1/50)%n", single, zk, zk / single);
        System.out.printf(Locale.ROOT, "ratio three members: %.1f ms / %.1f ms = 1/%.0f (target 1/100)%n", ensemble,
                cluster, cluster / ensemble);
        // curator-test's servers leave non-daemon threads behind (CURATOR-601).
        System.exit(0);
    }

    private static double median(String name, Case c) throws Exception {
        List<Double> runs = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < DISCARDED + MEASURED; i++) {
            double[] t = c.run();
            if (i < DISCARDED) {
                line.append(String.format(Locale.ROOT, "(discarded %.1f) ", t[0]));
                continue;
            }
            runs.add(t[0]);
            line.append(String.format(Locale.ROOT, t[1] > 0 ? "%.1f (up %.1f) " : "%.1f ", t[0], t[1]));
        }
        Collections.sort(runs);
        double median = runs.get(runs.size() / 2);
        System.out.printf(Locale.ROOT, "%-26s median %8.1f ms   runs: %s%n", name, median, line.toString().trim());
        return median;
    }

    private static Case shepherd(ShepherdServerBuilder builder) {
        return () -> {
            long start = System.nanoTime();
            try (ShepherdServer server = builder.build()) {
                long up = System.nanoTime();
                try (CuratorFramework client = connect(server.getConnectString())) {
                    return new double[] {ms(System.nanoTime() - start), ms(up - start)};
                }
            }
        };
    }

    private static Case testingServer() {
        return () -> {
            long start = System.nanoTime();
            try (TestingServer server = new TestingServer();
                    CuratorFramework client = connect(server.getConnectString())) {
                return new double[] {ms(System.nanoTime() - start), 0};
            }
        };
    }

    private static double[] testingCluster() throws Exception {
        long start = System.nanoTime();
        try (TestingCluster cluster = new TestingCluster(3)) {
            cluster.start();
            try (CuratorFramework client = connect(cluster.getConnectString())) {
                return new double[] {ms(System.nanoTime() - start), 0};
            }
        }
    }

    /** A started Curator client, connected to {@code connect}; the caller closes it (untimed). */
    private static CuratorFramework connect(String connect) throws Exception {
        CuratorFramework client = CuratorFrameworkFactory.newClient(connect, new RetryOneTime(10));
        client.start();
        if (!client.blockUntilConnected(60, TimeUnit.SECONDS)) {
            client.close();
            throw new IllegalStateException("no connection to " + connect + " in 60 s");
        }
        return client;
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }
}
