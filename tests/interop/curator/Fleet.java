import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;

/**
 * The mixed fleet: our Curator-compatible locks (`shepherd_recipes::curator`, driven through
 * the `curator_fleet` binary) and Curator's own contend on the same paths.
 * `java -cp "$CURATOR_CP" Fleet HOST:PORT PATH/TO/curator_fleet`.
 *
 * <p>For each pairing of a Rust kind with a Curator kind that excludes it, three checks: Rust
 * holds first and Curator waits in line behind it; Curator holds first and Rust waits; and both
 * sides churn at once. Every holder marks itself atomically right after taking the lock (see
 * {@link FleetMarker}), so two holders at once fail the check; each side also counts its
 * acquisitions, which must all happen. Prints `fleet: N passed`, or names what failed and
 * exits 1.
 */
public final class Fleet {
    static final int OWNERS = 3;
    static final int ROUNDS = 8;

    /** Rust kind, Curator kind: the pairs that must exclude each other. */
    static final String[][] PAIRS = {
        {"mutex", "mutex"},
        {"semaphore-mutex", "semaphore-mutex"},
        {"rw-write", "rw-write"},
        {"rw-read", "rw-write"},
        {"rw-write", "rw-read"},
        {"multi-lock", "multi-lock"},
    };

    private final String connect;
    private final RustSide rust;
    private final CuratorFramework client;
    private int ids;

    private Fleet(String connect, RustSide rust, CuratorFramework client) {
        this.connect = connect;
        this.rust = rust;
        this.client = client;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: Fleet HOST:PORT PATH/TO/curator_fleet");
            System.exit(2);
        }
        int passed = 0;
        List<String> failed = new ArrayList<>();
        CuratorFramework client;
        try {
            client = Check.client(args[0]);
        } catch (Check.Failed e) {
            System.out.printf("FAIL connect: %s%nfleet: 0 passed, 1 failed (connect)%n", e.getMessage());
            System.out.flush();
            System.exit(1);
            return;
        }
        try (RustSide rust = new RustSide(args[1], args[0])) {
            Fleet fleet = new Fleet(args[0], rust, client);
            for (String[] pair : PAIRS) {
                String title = "Rust " + pair[0] + " / Curator " + pair[1];
                String base = "/fleet/" + Check.RUN + "/" + pair[0] + "-vs-" + pair[1];
                String[] orders = {"Rust first", "Curator first", "both churning"};
                for (int i = 0; i < orders.length; i++) {
                    String name = title + ", " + orders[i];
                    String path = base + "/" + i;
                    long start = System.nanoTime();
                    try {
                        FleetMarker.prepare(client, path);
                        if (i == 0) {
                            fleet.rustFirst(pair[0], pair[1], path);
                        } else if (i == 1) {
                            fleet.curatorFirst(pair[0], pair[1], path);
                        } else {
                            fleet.churn(pair[0], pair[1], path);
                        }
                        FleetMarker.checkClear(client, path);
                        passed++;
                        System.out.printf("ok   %s (%d ms)%n", name, (System.nanoTime() - start) / 1_000_000);
                    } catch (Check.Failed e) {
                        failed.add(name);
                        System.out.printf("FAIL %s: %s%n", name, e.getMessage());
                    } catch (ExecutionException e) {
                        failed.add(name);
                        System.out.printf("FAIL %s: %s%n", name, e.getCause());
                    }
                    System.out.flush();
                }
            }
        } finally {
            client.close();
        }
        if (failed.isEmpty()) {
            System.out.printf("fleet: %d passed%n", passed);
            System.out.flush();
            System.exit(0);
        }
        System.out.printf("fleet: %d passed, %d failed (%s)%n", passed, failed.size(), String.join("; ", failed));
        System.out.flush();
        System.exit(1);
    }

    private String id(String prefix) {
        return prefix + (++ids);
    }

    /** Rust holds; Curator is kept out, waits in line, gets it on release; then Rust is kept out. */
    private void rustFirst(String rustKind, String javaKind, String path) throws Exception {
        String h = id("h");
        rust.send("hold " + h + " " + rustKind + " " + path);
        rust.expect(h, "held", "Rust took the free lock");
        try (FleetHolder java = new FleetHolder(client, javaKind, path)) {
            Check.that(!java.acquire(Check.BRIEF_MS), "Curator kept out while Rust holds");
            Future<Boolean> waiting = java.acquireAsync(Check.WAIT_SECONDS * 1000);
            try {
                waiting.get(Check.BRIEF_MS, TimeUnit.MILLISECONDS);
                throw new Check.Failed("Curator took the lock while Rust held it");
            } catch (TimeoutException expected) {
                // Still in line, as it must be.
            }
            rust.send("release " + h);
            rust.expect(h, "released", "Rust released");
            Check.that(waiting.get(Check.WAIT_SECONDS, TimeUnit.SECONDS), "Curator took it after Rust released");
            String t = id("t");
            rust.send("try " + t + " " + rustKind + " " + path);
            rust.expect(t, "busy", "Rust kept out while Curator holds");
            java.release();
        }
        // A hold, not a try: a try waits only briefly, and a busy machine may take longer to
        // grant even a free lock.
        String last = id("h");
        rust.send("hold " + last + " " + rustKind + " " + path);
        rust.expect(last, "held", "Rust takes it once Curator released");
        rust.send("release " + last);
        rust.expect(last, "released", "Rust released");
    }

    /** Curator holds; Rust is kept out, waits in line, gets it on release; then Curator is kept out. */
    private void curatorFirst(String rustKind, String javaKind, String path) throws Exception {
        try (FleetHolder java = new FleetHolder(client, javaKind, path)) {
            Check.that(java.acquire(Check.WAIT_SECONDS * 1000), "Curator took the free lock");
            String t = id("t");
            rust.send("try " + t + " " + rustKind + " " + path);
            rust.expect(t, "busy", "Rust kept out while Curator holds");
            String h = id("h");
            rust.send("hold " + h + " " + rustKind + " " + path);
            rust.silent(h, "Rust waits in line while Curator holds");
            java.release();
            rust.expect(h, "held", "Rust took it after Curator released");
            Check.that(!java.acquire(Check.BRIEF_MS), "Curator kept out while Rust holds");
            rust.send("release " + h);
            rust.expect(h, "released", "Rust released");
            Check.that(java.acquire(Check.WAIT_SECONDS * 1000), "Curator takes it once Rust released");
            java.release();
        }
    }

    /** Both sides, several owners each, take the lock over and over at once. */
    private void churn(String rustKind, String javaKind, String path) throws Exception {
        String c = id("c");
        rust.send("churn " + c + " " + rustKind + " " + path + " " + OWNERS + " " + ROUNDS);
        AtomicInteger taken = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(OWNERS);
        List<CuratorFramework> clients = new ArrayList<>();
        try {
            List<Future<?>> owners = new ArrayList<>();
            for (int o = 0; o < OWNERS; o++) {
                CuratorFramework own = Check.client(connect);
                clients.add(own);
                owners.add(pool.submit(() -> {
                    try (FleetHolder java = new FleetHolder(own, javaKind, path)) {
                        for (int r = 0; r < ROUNDS; r++) {
                            Check.that(java.acquire(Check.WAIT_SECONDS * 1000), "a Curator owner got its turn");
                            taken.incrementAndGet();
                            Thread.sleep(2); // hold a moment, so that holders would overlap if they could
                            java.release();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : owners) {
                try {
                    f.get(2 * Check.WAIT_SECONDS, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause() instanceof ExecutionException ? e.getCause().getCause() : e.getCause();
                    throw cause instanceof Check.Failed ? (Check.Failed) cause : new Check.Failed("Curator owner: " + cause);
                }
            }
        } finally {
            pool.shutdownNow();
            clients.forEach(CuratorFramework::close);
        }
        Check.equal(OWNERS * ROUNDS, taken.get(), "Curator's acquisitions");
        Check.equal("churned " + (OWNERS * ROUNDS) + " violations 0", rust.reply(c), "the Rust side's churn");
    }
}
