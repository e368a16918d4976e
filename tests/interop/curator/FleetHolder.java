import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;

/**
 * One Curator lock holder of the mixed fleet, on its own thread (Curator's mutexes belong to
 * the thread that took them, so taking and releasing both run there). A kind is named as the
 * Rust side names it (`mutex`, `semaphore-mutex`, `rw-read`, `rw-write`, `multi-lock`) and laid
 * out on the same nodes: a multi-lock on PATH holds the mutexes PATH/a and PATH/b.
 */
final class FleetHolder implements AutoCloseable {
    private final InterProcessLock lock;
    private final FleetMarker marker;
    private final ExecutorService thread = Executors.newSingleThreadExecutor();

    FleetHolder(CuratorFramework client, String kind, String path) throws Exception {
        this.lock = build(client, kind, path);
        this.marker = new FleetMarker(client, path, kind.equals("rw-read"));
    }

    static InterProcessLock build(CuratorFramework client, String kind, String path) {
        switch (kind) {
            case "mutex":
                return new InterProcessMutex(client, path);
            case "semaphore-mutex":
                return new InterProcessSemaphoreMutex(client, path);
            case "rw-read":
                return new InterProcessReadWriteLock(client, path).readLock();
            case "rw-write":
                return new InterProcessReadWriteLock(client, path).writeLock();
            case "multi-lock":
                return new InterProcessMultiLock(client, List.of(path + "/a", path + "/b"));
            default:
                throw new IllegalArgumentException("unknown lock kind " + kind);
        }
    }

    /** Starts taking the lock (then marking) on the holder's thread; true if taken within `ms`. */
    Future<Boolean> acquireAsync(long ms) {
        return thread.submit(() -> {
            if (!lock.acquire(ms, TimeUnit.MILLISECONDS)) {
                return false;
            }
            try {
                marker.enter();
            } catch (Exception e) {
                lock.release(); // the other side must not wait behind a failed check
                throw e;
            }
            return true;
        });
    }

    /** Takes the lock within `ms`: true if taken (and marked). */
    boolean acquire(long ms) throws Exception {
        return acquireAsync(ms).get(ms + Check.WAIT_SECONDS * 1000, TimeUnit.MILLISECONDS);
    }

    /** Unmarks, then releases, on the holder's thread. */
    void release() throws Exception {
        thread.submit(() -> {
            marker.leave();
            lock.release();
            return null;
        }).get(Check.WAIT_SECONDS, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
