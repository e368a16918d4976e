import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;

/**
 * InterProcessSemaphoreMutex: a mutex that is NOT reentrant (the holder itself is kept out),
 * keeps other clients out, and is free again after release.
 */
final class SemaphoreMutexCase implements Check.Case {
    @Override
    public String name() {
        return "InterProcessSemaphoreMutex";
    }

    @Override
    public void run(String connect) throws Exception {
        String path = Check.base("semaphore-mutex") + "/lock";
        CuratorFramework a = Check.client(connect);
        CuratorFramework b = Check.client(connect);
        try {
            InterProcessSemaphoreMutex mine = new InterProcessSemaphoreMutex(a, path);
            InterProcessSemaphoreMutex theirs = new InterProcessSemaphoreMutex(b, path);
            Check.that(mine.acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS), "first acquisition");
            Check.that(mine.isAcquiredInThisProcess(), "held after acquire");
            Check.that(!mine.acquire(Check.BRIEF_MS, TimeUnit.MILLISECONDS), "not reentrant: the holder is kept out");
            Check.that(!theirs.acquire(Check.BRIEF_MS, TimeUnit.MILLISECONDS), "another client is kept out");
            mine.release();
            Check.that(!mine.isAcquiredInThisProcess(), "free after release");
            Check.that(theirs.acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS), "another client gets it after release");
            Check.that(!mine.acquire(Check.BRIEF_MS, TimeUnit.MILLISECONDS), "the first is kept out in turn");
            theirs.release();
            Check.that(mine.acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS), "the first gets it back");
            mine.release();
        } finally {
            a.close();
            b.close();
        }
    }
}
