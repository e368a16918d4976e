import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.zookeeper.KeeperException;

/**
 * LeaderLatch among three clients: exactly one leader at a time, and when the leader's latch
 * closes the leadership moves to one of the others, until the last one holds it.
 */
final class LeaderLatchCase implements Check.Case {
    static final int CLIENTS = 3;

    @Override
    public String name() {
        return "LeaderLatch";
    }

    @Override
    public void run(String connect) throws Exception {
        String path = Check.base("leader-latch") + "/latch";
        List<CuratorFramework> clients = new ArrayList<>();
        List<LeaderLatch> latches = new ArrayList<>();
        BlockingQueue<String> elected = new LinkedBlockingQueue<>();
        try {
            for (int i = 0; i < CLIENTS; i++) {
                CuratorFramework client = Check.client(connect);
                clients.add(client);
                String id = "member-" + i;
                LeaderLatch latch = new LeaderLatch(client, path, id);
                latch.addListener(new LeaderLatchListener() {
                    @Override
                    public void isLeader() {
                        elected.add(id);
                    }

                    @Override
                    public void notLeader() {}
                });
                latches.add(latch);
                latch.start();
            }
            // start() creates each latch's node in the background: the first leader can be
            // elected before the last latch has joined, so the counts below wait for all of them.
            CuratorFramework observer = clients.get(0);
            Semaphore changes = new Semaphore(0);
            Check.until(() -> participants(observer, path, changes) == CLIENTS, changes,
                    Check.WAIT_SECONDS, "every latch's node under " + path);
            List<String> gone = new ArrayList<>();
            for (int round = 0; round < CLIENTS; round++) {
                String leader = Check.next(elected, "a leader in round " + round);
                Check.that(!gone.contains(leader), "a closed latch was elected: " + leader);
                LeaderLatch latch = latches.get(Integer.parseInt(leader.substring("member-".length())));
                Check.that(latch.hasLeadership(), leader + " was told it leads but says it does not");
                long leading = latches.stream().filter(l -> !gone.contains(l.getId()) && l.hasLeadership()).count();
                Check.equal(1L, leading, "leaders at once in round " + round);
                Check.equal(leader, latch.getLeader().getId(), "the leader every member sees");
                Check.equal(CLIENTS - round, latch.getParticipants().size(), "participants in round " + round);
                latch.close();
                gone.add(leader);
            }
            Check.that(elected.isEmpty(), "a leader after every latch closed: " + elected);
        } finally {
            for (LeaderLatch l : latches) {
                if (l.getState() == LeaderLatch.State.STARTED) {
                    l.close();
                }
            }
            clients.forEach(CuratorFramework::close);
        }
    }

    /** The nodes under `path`, with a watch that releases a permit of `changes` when they change. */
    private static int participants(CuratorFramework client, String path, Semaphore changes) {
        CuratorWatcher release = event -> changes.release();
        try {
            return client.getChildren().usingWatcher(release).forPath(path).size();
        } catch (KeeperException.NoNodeException e) {
            try {
                // Not created yet: watch for its creation, and look again if it came meanwhile.
                if (client.checkExists().usingWatcher(release).forPath(path) != null) {
                    changes.release();
                }
                return 0;
            } catch (Exception again) {
                throw new IllegalStateException(again);
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
