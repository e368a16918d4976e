import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Apache Curator's recipes against one server: `java -cp "$CURATOR_CP" CuratorSuite HOST:PORT
 * [CASE...]`. Runs every case (or the named ones) in order, one line each, then prints
 * `curator: N passed` and exits 0, or `curator: N passed, M failed (names)` and exits 1.
 *
 * <p>The server must allow TTL nodes (`zookeeper.extendedTypesEnabled=true`) and reap
 * containers every {@link ContainerCase#CHECK_INTERVAL_MS} ms (`znode.container.checkIntervalMs`),
 * as both servers in `.ci/run` do. A watchdog ends the run if one case outlives its budget, so
 * that a hung recipe fails the run rather than CI's clock.
 */
public final class CuratorSuite {
    /** Longest a single case may run before the watchdog fails the whole run. */
    private static final long CASE_BUDGET_MS = 60_000;

    private CuratorSuite() {}

    static List<Check.Case> cases() {
        return List.of(
                new MutexCase(),
                new ReadWriteLockCase(),
                new SemaphoreMutexCase(),
                new SemaphoreV2Case(),
                new MultiLockCase(),
                new LeaderLatchCase(),
                new LeaderSelectorCase(),
                new CuratorCacheCase(),
                new TreeCacheCase(),
                new SharedCountCase(),
                new TransactionCase(),
                new WatcherRemovalCase(),
                new ReconnectCase(),
                new ContainerCase(),
                new TtlCase(),
                new SessionEndCase());
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length < 1) {
            System.err.println("usage: CuratorSuite HOST:PORT [CASE...]");
            System.exit(2);
        }
        String connect = args[0];
        List<String> only = Arrays.asList(args).subList(1, args.length);
        try {
            Check.client(connect).close(); // one bounded wait for a dead address, not one per case
        } catch (Check.Failed e) {
            System.out.printf("FAIL connect: %s%ncurator: 0 passed, 1 failed (connect)%n", e.getMessage());
            System.out.flush();
            System.exit(1);
        }
        int passed = 0;
        List<String> failed = new ArrayList<>();
        for (Check.Case c : cases()) {
            if (!only.isEmpty() && !only.contains(c.name())) {
                continue;
            }
            Thread watchdog = watchdog(c.name());
            long start = System.nanoTime();
            try {
                c.run(connect);
                passed++;
                System.out.printf("ok   %s (%d ms)%n", c.name(), (System.nanoTime() - start) / 1_000_000);
            } catch (Check.Failed e) {
                failed.add(c.name());
                System.out.printf("FAIL %s: %s%n", c.name(), e.getMessage());
            } catch (java.util.concurrent.ExecutionException e) {
                // A check failed in one of the case's worker threads.
                failed.add(c.name());
                Throwable cause = e.getCause();
                System.out.printf("FAIL %s: %s%n", c.name(),
                        cause instanceof Check.Failed ? cause.getMessage() : String.valueOf(cause));
                if (!(cause instanceof Check.Failed)) {
                    e.printStackTrace(System.out);
                }
            } catch (Exception e) {
                failed.add(c.name());
                System.out.printf("FAIL %s: %s%n", c.name(), e);
                e.printStackTrace(System.out);
            } finally {
                watchdog.interrupt();
            }
            System.out.flush();
        }
        if (failed.isEmpty()) {
            System.out.printf("curator: %d passed%n", passed);
            System.out.flush();
            // Curator's and ZooKeeper's threads are not all daemons: end explicitly.
            System.exit(passed > 0 ? 0 : 1);
        }
        System.out.printf("curator: %d passed, %d failed (%s)%n", passed, failed.size(), String.join(", ", failed));
        System.out.flush();
        System.exit(1);
    }

    private static Thread watchdog(String name) {
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(CASE_BUDGET_MS);
            } catch (InterruptedException e) {
                return; // the case finished
            }
            System.out.printf("FAIL %s: still running after %d ms%n", name, CASE_BUDGET_MS);
            System.out.println("curator: run aborted by the watchdog");
            System.out.flush();
            Runtime.getRuntime().halt(1);
        }, "watchdog-" + name);
        t.setDaemon(true);
        t.start();
        return t;
    }
}
