import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.nodes.PersistentTtlNode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;

/**
 * TTL nodes (`zookeeper.extendedTypesEnabled=true` on the server), on time: a childless TTL
 * node goes no sooner than its TTL after its last change and within one container check
 * interval after that; one with a child stays; and PersistentTtlNode keeps its node alive
 * while it runs (touching a TTL child), then lets it expire after close.
 */
final class TtlCase implements Check.Case {
    static final long TTL_MS = 1500;
    /** PersistentTtlNode touches every TTL / 2: a JVM stalled that long on a loaded CI machine
     *  must not look like a server that expired a live node. */
    static final long KEEPALIVE_TTL_MS = 1500;

    @Override
    public String name() {
        return "TTL nodes and PersistentTtlNode";
    }

    @Override
    public void run(String connect) throws Exception {
        String base = Check.base("ttl");
        CuratorFramework client = Check.client(connect);
        try {
            client.create().creatingParentsIfNeeded().forPath(base);
            plainTtl(client, base);
            persistentTtlNode(client, base + "/kept-alive");
        } finally {
            client.close();
        }
    }

    private static void plainTtl(CuratorFramework client, String base) throws Exception {
        String lone = base + "/lone";
        String parent = base + "/with-child";
        long start = System.nanoTime();
        client.create().withTtl(TTL_MS).withMode(CreateMode.PERSISTENT_WITH_TTL).forPath(lone);
        client.create().withTtl(TTL_MS / 3).withMode(CreateMode.PERSISTENT_WITH_TTL).forPath(parent);
        client.create().forPath(parent + "/child");
        Stat stat = client.checkExists().forPath(lone);
        Check.that(stat != null, "the TTL node was made");
        // ZooKeeper 3.8 `DataNode.getClientEphemeralOwner`: clients see 0 for a TTL node.
        Check.equal(0L, stat.getEphemeralOwner(), "a TTL node's ephemeralOwner as clients see it");

        CountDownLatch gone = Watches.deleted(client, lone);
        long bound = TTL_MS + ContainerCase.CHECK_INTERVAL_MS + ContainerCase.SLACK_MS;
        Check.that(gone.await(bound, TimeUnit.MILLISECONDS), "the TTL node expired within " + bound + " ms");
        long took = (System.nanoTime() - start) / 1_000_000;
        Check.that(took >= TTL_MS, "the TTL node went after " + took + " ms, before its TTL of " + TTL_MS);
        Check.that(client.checkExists().forPath(parent) != null, "a TTL node with a child is kept past its TTL");
        System.out.printf("     TTL node (%d ms) expired after %d ms%n", TTL_MS, took);
    }

    private static void persistentTtlNode(CuratorFramework client, String path) throws Exception {
        String touch = path + "/" + PersistentTtlNode.DEFAULT_CHILD_NODE_NAME;
        long bound = KEEPALIVE_TTL_MS + 2 * ContainerCase.CHECK_INTERVAL_MS + ContainerCase.SLACK_MS;
        long took;
        PersistentTtlNode node = new PersistentTtlNode(client, path, KEEPALIVE_TTL_MS,
                "alive".getBytes(StandardCharsets.UTF_8));
        boolean closed = false;
        try {
            node.start();
            Check.that(node.waitForInitialCreate(Check.WAIT_SECONDS, TimeUnit.SECONDS), "PersistentTtlNode's first create");
            Check.await(Watches.created(client, touch), "PersistentTtlNode's TTL child");
            CountDownLatch gone = Watches.deleted(client, path);
            // Past its TTL, and past two reaper passes after that, while it runs: its touches
            // must keep it.
            Check.that(!gone.await(KEEPALIVE_TTL_MS + 2 * ContainerCase.CHECK_INTERVAL_MS, TimeUnit.MILLISECONDS),
                    "a running PersistentTtlNode's node expired");
            Check.equal("alive", new String(client.getData().forPath(path), StandardCharsets.UTF_8),
                    "PersistentTtlNode's data");
            long start = System.nanoTime();
            node.close();
            closed = true;
            // The child expires a TTL after its last touch, then the emptied container is reaped.
            Check.that(gone.await(bound, TimeUnit.MILLISECONDS),
                    "the closed PersistentTtlNode's node went within " + bound + " ms");
            took = (System.nanoTime() - start) / 1_000_000;
        } finally {
            if (!closed) {
                node.close();
            }
        }
        Check.that(client.checkExists().forPath(path) == null, "the closed PersistentTtlNode's node is gone");
        System.out.printf("     PersistentTtlNode (%d ms) gone %d ms after close%n", KEEPALIVE_TTL_MS, took);
    }
}
