import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * The mixed fleet's check that catches two holders, the same on both sides (the Rust side's is
 * in verify's `curator_fleet`). Right after taking a lock a holder marks itself under
 * `/fleet-check<PATH>`, atomically, so that the mark fails if a conflicting one exists: an
 * exclusive holder runs `multi(create holder EPHEMERAL, delete readers)` (NodeExists: a second
 * exclusive holder; NotEmpty: a reader beside it), a shared holder creates `readers/r-`
 * EPHEMERAL_SEQUENTIAL (NoNode: an exclusive holder beside it). Leaving undoes the mark
 * before the lock is released.
 */
final class FleetMarker {
    static final String ROOT = "/fleet-check";

    private final ZooKeeper zk;
    private final String dir;
    private final boolean shared;
    private String readerNode;

    FleetMarker(CuratorFramework client, String lockPath, boolean shared) throws Exception {
        this.zk = client.getZookeeperClient().getZooKeeper();
        this.dir = ROOT + lockPath;
        this.shared = shared;
    }

    /** Creates `/fleet-check<PATH>` and its `readers` child: once per lock path, before any holder. */
    static void prepare(CuratorFramework client, String lockPath) throws Exception {
        client.create().creatingParentsIfNeeded().forPath(ROOT + lockPath + "/readers");
    }

    /** Marks this holder; throws {@link Check.Failed} naming the violation if another conflicts. */
    void enter() throws Exception {
        byte[] java = "java".getBytes(StandardCharsets.UTF_8);
        if (shared) {
            try {
                readerNode = zk.create(dir + "/readers/r-", java, ZooDefs.Ids.OPEN_ACL_UNSAFE,
                        CreateMode.EPHEMERAL_SEQUENTIAL);
            } catch (KeeperException.NoNodeException e) {
                throw new Check.Failed("violation: a reader beside an exclusive holder");
            }
            return;
        }
        try {
            zk.multi(List.of(
                    Op.create(dir + "/holder", java, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL),
                    Op.delete(dir + "/readers", -1)));
        } catch (KeeperException e) {
            List<OpResult> results = e.getResults();
            if (results != null && results.size() == 2) {
                if (failedWith(results.get(0), KeeperException.Code.NODEEXISTS)) {
                    throw new Check.Failed("violation: two exclusive holders");
                }
                if (failedWith(results.get(1), KeeperException.Code.NOTEMPTY)) {
                    throw new Check.Failed("violation: an exclusive holder beside a reader");
                }
            }
            throw e;
        }
    }

    /** Undoes {@link #enter}. */
    void leave() throws Exception {
        if (shared) {
            zk.delete(readerNode, -1);
            return;
        }
        zk.multi(List.of(
                Op.create(dir + "/readers", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT),
                Op.delete(dir + "/holder", -1)));
    }

    /** No holder marked, no reader marked: what every scenario must end with. */
    static void checkClear(CuratorFramework client, String lockPath) throws Exception {
        String dir = ROOT + lockPath;
        Check.that(client.checkExists().forPath(dir + "/holder") == null, "an exclusive mark left at " + dir);
        Check.equal(0, client.getChildren().forPath(dir + "/readers").size(), "reader marks left at " + dir);
    }

    private static boolean failedWith(OpResult result, KeeperException.Code code) {
        return result instanceof OpResult.ErrorResult && ((OpResult.ErrorResult) result).getErr() == code.intValue();
    }
}
