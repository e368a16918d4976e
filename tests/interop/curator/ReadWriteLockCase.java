import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;

/**
 * InterProcessReadWriteLock: readers share, a writer waits for every reader and keeps readers
 * out while it holds, and a writer may take the read lock too (Curator's downgrade).
 */
final class ReadWriteLockCase implements Check.Case {
    @Override
    public String name() {
        return "InterProcessReadWriteLock";
    }

    @Override
    public void run(String connect) throws Exception {
        String path = Check.base("rwlock") + "/lock";
        CuratorFramework a = Check.client(connect);
        CuratorFramework b = Check.client(connect);
        CuratorFramework c = Check.client(connect);
        try {
            InterProcessReadWriteLock ra = new InterProcessReadWriteLock(a, path);
            InterProcessReadWriteLock rb = new InterProcessReadWriteLock(b, path);
            InterProcessReadWriteLock wc = new InterProcessReadWriteLock(c, path);

            Check.that(ra.readLock().acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS), "first reader");
            Check.that(rb.readLock().acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS), "second reader beside the first");
            Check.that(!wc.writeLock().acquire(Check.BRIEF_MS, TimeUnit.MILLISECONDS), "writer kept out by two readers");
            ra.readLock().release();
            Check.that(!wc.writeLock().acquire(Check.BRIEF_MS, TimeUnit.MILLISECONDS), "writer kept out by one reader");
            rb.readLock().release();
            Check.that(wc.writeLock().acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS), "writer once the readers left");

            Check.that(!ra.readLock().acquire(Check.BRIEF_MS, TimeUnit.MILLISECONDS), "reader kept out by the writer");
            Check.that(!rb.writeLock().acquire(Check.BRIEF_MS, TimeUnit.MILLISECONDS), "second writer kept out");
            Check.that(wc.readLock().acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS), "the writer also takes the read lock");
            wc.writeLock().release();
            Check.that(ra.readLock().acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS), "reader beside the downgraded holder");
            Check.that(!rb.writeLock().acquire(Check.BRIEF_MS, TimeUnit.MILLISECONDS), "writer kept out by the downgraded holder");
            wc.readLock().release();
            ra.readLock().release();
            Check.that(rb.writeLock().acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS), "writer once all are gone");
            rb.writeLock().release();
            Check.equal(0, Check.count(() -> a.getChildren().forPath(path)), "lock nodes left after every release");
        } finally {
            a.close();
            b.close();
            c.close();
        }
    }
}
