import java.util.Collection;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;

/**
 * What every Curator check shares: assertions that name what failed, waits that are always
 * bounded, a Curator client configured for tests, and a fresh path per run.
 *
 * <p>A failed check throws {@link Failed}; the runner prints its message and the run exits
 * nonzero. No wait here sleeps for a condition: each one blocks on a latch or a queue, up to
 * {@link #WAIT_SECONDS}.
 */
final class Check {
    /** The longest any single wait may take before the check fails. */
    static final long WAIT_SECONDS = 20;

    /** How long a check that something does NOT happen waits (a contender stays out...). */
    static final long BRIEF_MS = 300;

    /** Session timeout of every test client: short enough that a lost session shows quickly. */
    static final int SESSION_MS = 10_000;

    /** One prefix per run, so that reruns against the same server never meet old nodes. */
    static final String RUN = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);

    private Check() {}

    /** A check that did not hold; the message says which. */
    static final class Failed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Failed(String message) {
            super(message);
        }
    }

    /** One named check, run against a connect string. */
    interface Case {
        String name();

        void run(String connect) throws Exception;
    }

    static void that(boolean condition, String what) {
        if (!condition) {
            throw new Failed(what);
        }
    }

    static void equal(Object expected, Object actual, String what) {
        if (expected == null ? actual != null : !expected.equals(actual)) {
            throw new Failed(what + ": expected " + expected + ", got " + actual);
        }
    }

    /**
     * How many nodes `list` finds; none when their parent is gone. The parent of an emptied lock
     * or semaphore is a container, which the server may reap between the last release and this
     * read.
     */
    static int count(Callable<? extends Collection<?>> list) throws Exception {
        try {
            return list.call().size();
        } catch (KeeperException.NoNodeException reaped) {
            return 0;
        }
    }

    /** Waits for the latch, failing with `what` after {@link #WAIT_SECONDS}. */
    static void await(CountDownLatch latch, String what) throws InterruptedException {
        if (!latch.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new Failed("timed out after " + WAIT_SECONDS + " s waiting for " + what);
        }
    }

    /** Takes the next item, failing with `what` after {@link #WAIT_SECONDS}. */
    static <T> T next(BlockingQueue<T> queue, String what) throws InterruptedException {
        T item = queue.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        if (item == null) {
            throw new Failed("timed out after " + WAIT_SECONDS + " s waiting for " + what);
        }
        return item;
    }

    /**
     * Takes the next item that matches, dropping others, within `seconds`; fails naming `what`.
     * For event streams where unrelated events (another node's) may come first.
     */
    static <T> T nextMatching(BlockingQueue<T> queue, Predicate<T> match, long seconds, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            long left = deadline - System.nanoTime();
            T item = left > 0 ? queue.poll(left, TimeUnit.NANOSECONDS) : null;
            if (item == null) {
                throw new Failed("timed out after " + seconds + " s waiting for " + what);
            }
            if (match.test(item)) {
                return item;
            }
        }
    }

    /**
     * Waits until `condition` holds, checking it each time `changes` is signalled (a watcher
     * releases one permit per event), bounded by `seconds`.
     */
    static void until(BooleanSupplier condition, Semaphore changes, long seconds, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.getAsBoolean()) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || !changes.tryAcquire(left, TimeUnit.NANOSECONDS)) {
                if (condition.getAsBoolean()) {
                    return;
                }
                throw new Failed("timed out after " + seconds + " s waiting for " + what);
            }
        }
    }

    /** A started client, connected; fails if it cannot connect within {@link #WAIT_SECONDS}. */
    static CuratorFramework client(String connect) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs(SESSION_MS)
                .connectionTimeoutMs(5_000)
                .retryPolicy(new ExponentialBackoffRetry(100, 5))
                .build();
        client.start();
        if (!client.blockUntilConnected((int) WAIT_SECONDS, TimeUnit.SECONDS)) {
            client.close();
            throw new Failed("no connection to " + connect + " within " + WAIT_SECONDS + " s");
        }
        return client;
    }

    /** The root of one case's nodes in this run: `/curator-suite/RUN/NAME`. */
    static String base(String name) {
        return "/curator-suite/" + RUN + "/" + name;
    }
}
