import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;

/**
 * LeaderSelector among three clients: one `takeLeadership` runs at a time, and leadership
 * moves on both ways a leader ends: by returning from `takeLeadership`, and by closing.
 */
final class LeaderSelectorCase implements Check.Case {
    static final int CLIENTS = 3;

    @Override
    public String name() {
        return "LeaderSelector";
    }

    @Override
    public void run(String connect) throws Exception {
        String path = Check.base("leader-selector") + "/election";
        List<CuratorFramework> clients = new ArrayList<>();
        Map<String, LeaderSelector> selectors = new HashMap<>();
        Map<String, CountDownLatch> resign = new HashMap<>();
        BlockingQueue<String> elected = new LinkedBlockingQueue<>();
        AtomicInteger leading = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        try {
            for (int i = 0; i < CLIENTS; i++) {
                CuratorFramework client = Check.client(connect);
                clients.add(client);
                String id = "member-" + i;
                CountDownLatch done = new CountDownLatch(1);
                resign.put(id, done);
                LeaderSelector selector = new LeaderSelector(client, path, new LeaderSelectorListenerAdapter() {
                    @Override
                    public void takeLeadership(CuratorFramework c) throws Exception {
                        most.accumulateAndGet(leading.incrementAndGet(), Math::max);
                        elected.add(id);
                        try {
                            done.await(); // until told to resign, or interrupted by close()
                        } finally {
                            leading.decrementAndGet();
                        }
                    }
                });
                selector.setId(id);
                selectors.put(id, selector);
            }
            selectors.values().forEach(LeaderSelector::start);

            String first = Check.next(elected, "the first leader");
            Check.that(selectors.get(first).hasLeadership(), first + " leads but says it does not");
            Check.equal(first, selectors.get(first).getLeader().getId(), "the leader the participants name");
            resign.get(first).countDown(); // returning from takeLeadership gives it up (no requeue)

            String second = Check.next(elected, "a leader after the first returned");
            Check.that(!second.equals(first), "the leader that returned was elected again");
            selectors.remove(second).close(); // closing interrupts takeLeadership

            String third = Check.next(elected, "a leader after the second closed");
            Check.that(!third.equals(first) && !third.equals(second), "a departed member was elected: " + third);
            Check.equal(1, most.get(), "most leaders at once");
            Check.equal(third, selectors.get(third).getLeader().getId(), "the last leader the participants name");
            resign.get(third).countDown();
        } finally {
            resign.values().forEach(CountDownLatch::countDown);
            selectors.values().forEach(LeaderSelector::close);
            clients.forEach(CuratorFramework::close);
        }
    }
}
