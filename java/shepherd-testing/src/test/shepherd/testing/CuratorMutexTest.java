package shepherd.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.junit.jupiter.api.Test;

/**
 * Curator's {@link InterProcessMutex} on a {@code new ShepherdServer()}, contended by four
 * threads, each with its own client: never two holders at once, and every acquisition made.
 */
class CuratorMutexTest {
    private static final int THREADS = 4;
    private static final int ROUNDS = 5;

    @Test
    void mutexExcludesAcrossThreads() throws Exception {
        try (ShepherdServer server = new ShepherdServer()) {
            AtomicInteger holders = new AtomicInteger();
            AtomicInteger maxHolders = new AtomicInteger();
            AtomicInteger acquired = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            List<Future<?>> runs = new ArrayList<>();
            try {
                for (int t = 0; t < THREADS; t++) {
                    runs.add(pool.submit(() -> {
                        try (CuratorFramework client = Clients.connected(server.getConnectString())) {
                            InterProcessMutex mutex = new InterProcessMutex(client, "/locks/mutex");
                            for (int round = 0; round < ROUNDS; round++) {
                                assertTrue(mutex.acquire(Clients.WAIT_SECONDS, TimeUnit.SECONDS), "acquired in time");
                                try {
                                    int now = holders.incrementAndGet();
                                    maxHolders.accumulateAndGet(now, Math::max);
                                    acquired.incrementAndGet();
                                    Thread.yield();
                                    holders.decrementAndGet();
                                } finally {
                                    mutex.release();
                                }
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> run : runs) {
                    run.get(2 * Clients.WAIT_SECONDS, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            assertEquals(1, maxHolders.get(), "at most one holder at any time");
            assertEquals(THREADS * ROUNDS, acquired.get());
        }
    }
}
