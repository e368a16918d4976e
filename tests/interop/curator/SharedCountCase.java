import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.SharedCountListener;
import org.apache.curator.framework.recipes.shared.SharedCountReader;
import org.apache.curator.framework.state.ConnectionState;

/**
 * SharedCount, Curator's compare-and-set counter (setData with the version last read): several
 * clients incrementing at once lose no increment, and a listener on another client sees the
 * final value.
 */
final class SharedCountCase implements Check.Case {
    static final int CLIENTS = 3;
    static final int INCREMENTS = 10;

    @Override
    public String name() {
        return "SharedCount";
    }

    @Override
    public void run(String connect) throws Exception {
        String path = Check.base("shared-count") + "/count";
        List<CuratorFramework> clients = new ArrayList<>();
        List<SharedCount> counts = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
        CuratorFramework observer = Check.client(connect);
        SharedCount watched = new SharedCount(observer, path, 0);
        Semaphore changes = new Semaphore(0);
        try {
            watched.addListener(new SharedCountListener() {
                @Override
                public void countHasChanged(SharedCountReader reader, int value) {
                    changes.release();
                }

                @Override
                public void stateChanged(CuratorFramework client, ConnectionState state) {}
            });
            watched.start();
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                CuratorFramework client = Check.client(connect);
                clients.add(client);
                SharedCount count = new SharedCount(client, path, 0);
                counts.add(count);
                count.start();
                done.add(pool.submit(() -> {
                    for (int n = 0; n < INCREMENTS; n++) {
                        int attempts = 0;
                        while (true) {
                            var seen = count.getVersionedValue();
                            if (count.trySetCount(seen, seen.getValue() + 1)) {
                                break;
                            }
                            Check.that(++attempts < 1000, "an increment went through within 1000 attempts");
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(2 * Check.WAIT_SECONDS, TimeUnit.SECONDS);
            }
            int total = CLIENTS * INCREMENTS;
            Check.until(() -> watched.getCount() == total, changes, Check.WAIT_SECONDS,
                    "the observer's SharedCount to reach " + total + " (at " + watched.getCount() + ")");
            Check.equal(total, watched.getCount(), "the count seen by the observer");
            Check.equal(total, observer.checkExists().forPath(path).getVersion(), "setData calls that went through");
        } finally {
            pool.shutdownNow();
            for (SharedCount c : counts) {
                c.close();
            }
            watched.close();
            clients.forEach(CuratorFramework::close);
            observer.close();
        }
    }
}
