import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;

/**
 * Container parents (`creatingParentContainersIfNeeded`, as Curator's lock and leader recipes
 * make them): a container stays while it has a child, and is reaped within one check interval
 * (`znode.container.checkIntervalMs`) of its last child going; a container that never had a
 * child is left alone.
 */
final class ContainerCase implements Check.Case {
    /** The servers' `znode.container.checkIntervalMs`; both CI servers run with 1000. */
    static final long CHECK_INTERVAL_MS = Long.getLong("curator.suite.containerCheckMs", 1000);

    /**
     * Slack on top of one interval: the reaper's pass, the delete and the notification, on a
     * CI machine whose two CPUs may be busy for a second or more.
     */
    static final long SLACK_MS = 3000;

    @Override
    public String name() {
        return "container reaping";
    }

    @Override
    public void run(String connect) throws Exception {
        String base = Check.base("container");
        String box = base + "/box";
        String empty = base + "/never-filled";
        CuratorFramework client = Check.client(connect);
        try {
            client.create().creatingParentsIfNeeded().forPath(base);
            client.create().creatingParentContainersIfNeeded().forPath(box + "/child");
            client.create().withMode(CreateMode.CONTAINER).forPath(empty);
            Stat stat = client.checkExists().forPath(box);
            Check.that(stat != null, "the container parent was made");
            // ZooKeeper 3.8 `DataNode.getClientEphemeralOwner`: clients see 0 for a container.
            Check.equal(0L, stat.getEphemeralOwner(), "a container's ephemeralOwner as clients see it");

            CountDownLatch reaped = Watches.deleted(client, box);
            // More than an interval with a child: at least one reaper pass must leave it.
            Check.that(!reaped.await(CHECK_INTERVAL_MS + 500, TimeUnit.MILLISECONDS),
                    "a container with a child was reaped");

            long start = System.nanoTime();
            client.delete().forPath(box + "/child");
            Check.that(reaped.await(CHECK_INTERVAL_MS + SLACK_MS, TimeUnit.MILLISECONDS),
                    "the empty container reaped within " + (CHECK_INTERVAL_MS + SLACK_MS) + " ms of its last child going");
            long took = (System.nanoTime() - start) / 1_000_000;
            Check.that(client.checkExists().forPath(box) == null, "the reaped container is gone (" + took + " ms)");
            Check.that(client.checkExists().forPath(empty) != null,
                    "a container that never had a child is left alone");
            System.out.printf("     container reaped %d ms after its last child went%n", took);
        } finally {
            client.close();
        }
    }
}
