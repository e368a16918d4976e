import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;

/**
 * InterProcessMultiLock: holding it holds every path; a multi-lock that cannot get one path
 * gets none (what it took is given back), and releasing frees them all.
 */
final class MultiLockCase implements Check.Case {
    @Override
    public String name() {
        return "InterProcessMultiLock";
    }

    @Override
    public void run(String connect) throws Exception {
        String p1 = Check.base("multi-lock") + "/one";
        String p2 = Check.base("multi-lock") + "/two";
        CuratorFramework a = Check.client(connect);
        CuratorFramework b = Check.client(connect);
        try {
            InterProcessMultiLock both = new InterProcessMultiLock(a, List.of(p1, p2));
            InterProcessMutex one = new InterProcessMutex(b, p1);
            InterProcessMutex two = new InterProcessMutex(b, p2);

            Check.that(both.acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS), "multi-lock on two free paths");
            Check.that(!one.acquire(Check.BRIEF_MS, TimeUnit.MILLISECONDS), "first path is held by the multi-lock");
            Check.that(!two.acquire(Check.BRIEF_MS, TimeUnit.MILLISECONDS), "second path is held by the multi-lock");
            both.release();
            Check.that(!both.isAcquiredInThisProcess(), "multi-lock free after release");

            Check.that(two.acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS), "second path alone after release");
            Check.that(!both.acquire(Check.BRIEF_MS, TimeUnit.MILLISECONDS), "multi-lock refused while one path is held");
            Check.that(one.acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS),
                    "first path free: a refused multi-lock gives back what it took");
            one.release();
            two.release();
            Check.that(both.acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS), "multi-lock once both are free");
            both.release();
            Check.equal(0, Check.count(() -> a.getChildren().forPath(p1)) + Check.count(() -> a.getChildren().forPath(p2)),
                    "lock nodes left after every release");
        } finally {
            a.close();
            b.close();
        }
    }
}
