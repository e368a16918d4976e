import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;

/**
 * InterProcessMutex: exclusion among several clients (a counter of holders never passes one,
 * and every acquisition happens), reentrancy (two acquisitions by one thread need two
 * releases before anyone else gets it), and release (the lock node goes, a waiter gets it).
 */
final class MutexCase implements Check.Case {
    static final int CLIENTS = 4;
    static final int ROUNDS = 5;

    @Override
    public String name() {
        return "InterProcessMutex";
    }

    @Override
    public void run(String connect) throws Exception {
        String path = Check.base("mutex") + "/lock";
        List<CuratorFramework> clients = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
        try {
            for (int i = 0; i < CLIENTS; i++) {
                clients.add(Check.client(connect));
            }
            exclusion(clients, path, pool);
            reentrancy(clients.get(0), clients.get(1), path);
        } finally {
            pool.shutdownNow();
            clients.forEach(CuratorFramework::close);
        }
    }

    private static void exclusion(List<CuratorFramework> clients, String path, ExecutorService pool)
            throws Exception {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger acquisitions = new AtomicInteger();
        List<Future<?>> done = new ArrayList<>();
        for (CuratorFramework client : clients) {
            done.add(pool.submit(() -> {
                InterProcessMutex lock = new InterProcessMutex(client, path);
                for (int r = 0; r < ROUNDS; r++) {
                    Check.that(lock.acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS), "a contender got the lock in time");
                    most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                    acquisitions.incrementAndGet();
                    Thread.sleep(2); // hold a moment, so that holders would overlap if they could
                    inside.decrementAndGet();
                    lock.release();
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get(2 * Check.WAIT_SECONDS, TimeUnit.SECONDS);
        }
        Check.equal(1, most.get(), "most holders at once");
        Check.equal(CLIENTS * ROUNDS, acquisitions.get(), "acquisitions");
        Check.equal(0, new InterProcessMutex(clients.get(0), path).getParticipantNodes().size(),
                "lock nodes left after every release");
    }

    private static void reentrancy(CuratorFramework a, CuratorFramework b, String path) throws Exception {
        InterProcessMutex mine = new InterProcessMutex(a, path);
        InterProcessMutex theirs = new InterProcessMutex(b, path);
        Check.that(mine.acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS), "first acquisition");
        Check.that(mine.acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS), "reentrant acquisition by the holder");
        Check.equal(1, mine.getParticipantNodes().size(), "lock nodes for a reentrant hold");
        mine.release();
        Check.that(mine.isAcquiredInThisProcess(), "still held after one of two releases");
        Check.that(!theirs.acquire(Check.BRIEF_MS, TimeUnit.MILLISECONDS), "another client is kept out while held");
        mine.release();
        Check.that(!mine.isAcquiredInThisProcess(), "free after the second release");
        Check.that(theirs.acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS), "another client gets it after release");
        theirs.release();
    }
}
