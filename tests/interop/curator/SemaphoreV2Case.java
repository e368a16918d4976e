import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;

/**
 * InterProcessSemaphoreV2 with a fixed number of leases: no more than that many are out at
 * once, a contender waits while they are all out, and a returned lease goes to a waiter.
 */
final class SemaphoreV2Case implements Check.Case {
    static final int LEASES = 2;
    static final int CLIENTS = 4;
    static final int ROUNDS = 4;

    @Override
    public String name() {
        return "InterProcessSemaphoreV2";
    }

    @Override
    public void run(String connect) throws Exception {
        String path = Check.base("semaphore-v2") + "/sem";
        List<CuratorFramework> clients = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
        try {
            for (int i = 0; i < CLIENTS; i++) {
                clients.add(Check.client(connect));
            }
            limit(clients, path);
            churn(clients, path, pool);
        } finally {
            pool.shutdownNow();
            clients.forEach(CuratorFramework::close);
        }
    }

    private static void limit(List<CuratorFramework> clients, String path) throws Exception {
        InterProcessSemaphoreV2 s0 = new InterProcessSemaphoreV2(clients.get(0), path, LEASES);
        InterProcessSemaphoreV2 s1 = new InterProcessSemaphoreV2(clients.get(1), path, LEASES);
        InterProcessSemaphoreV2 s2 = new InterProcessSemaphoreV2(clients.get(2), path, LEASES);
        Lease l0 = s0.acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS);
        Check.that(l0 != null, "first lease");
        Lease l1 = s1.acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS);
        Check.that(l1 != null, "second lease");
        Check.equal(LEASES, s0.getParticipantNodes().size(), "leases out");
        Check.that(s2.acquire(Check.BRIEF_MS, TimeUnit.MILLISECONDS) == null, "a third lease is refused while two are out");
        Collection<Lease> two = s2.acquire(2, Check.BRIEF_MS, TimeUnit.MILLISECONDS);
        Check.that(two == null, "two more leases are refused while two are out");
        s0.returnLease(l0);
        Lease l2 = s2.acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS);
        Check.that(l2 != null, "a returned lease goes to the waiter");
        s1.returnLease(l1);
        s2.returnLease(l2);
        Check.equal(0, Check.count(s0::getParticipantNodes), "leases out after every return");
    }

    private static void churn(List<CuratorFramework> clients, String path, ExecutorService pool) throws Exception {
        AtomicInteger out = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger leases = new AtomicInteger();
        List<Future<?>> done = new ArrayList<>();
        for (CuratorFramework client : clients) {
            done.add(pool.submit(() -> {
                InterProcessSemaphoreV2 sem = new InterProcessSemaphoreV2(client, path, LEASES);
                for (int r = 0; r < ROUNDS; r++) {
                    Lease lease = sem.acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS);
                    Check.that(lease != null, "a contender got a lease in time");
                    most.accumulateAndGet(out.incrementAndGet(), Math::max);
                    leases.incrementAndGet();
                    Thread.sleep(5); // hold a moment, so that more holders would overlap if they could
                    out.decrementAndGet();
                    sem.returnLease(lease);
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get(2 * Check.WAIT_SECONDS, TimeUnit.SECONDS);
        }
        Check.that(most.get() <= LEASES, "at most " + LEASES + " leases out at once, saw " + most.get());
        Check.equal(CLIENTS * ROUNDS, leases.get(), "leases granted");
    }
}
