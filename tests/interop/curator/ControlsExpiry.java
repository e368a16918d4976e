import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;

/**
 * An {@link InterProcessMutex} whose holder's session is expired on the server, through
 * Shepherd's test controls (docs/test-controls.md): not Curator's {@code KillSession}, which
 * ends the session from a second client handle, but {@code POST /sessions/{id}/expire}, which
 * ends it exactly as its timeout would. The holder must see {@link ConnectionState#LOST}, and a
 * second client waiting on the same mutex must then acquire it, with one lock node left.
 *
 * <pre>SHEPHERD_CONTROLS_TOKEN=TOKEN java -cp "$CURATOR_CP" ControlsExpiry HOST:PORT CONTROLS_URL</pre>
 *
 * Prints {@code controls curator: 1 passed}; exits 1 on failure. Every wait is bounded and
 * waits on an event (a state change, an acquisition), never a sleep.
 */
final class ControlsExpiry {
    private ControlsExpiry() {}

    public static void main(String[] args) throws Exception {
        String token = System.getenv("SHEPHERD_CONTROLS_TOKEN");
        if (args.length != 2 || token == null || token.isEmpty()) {
            System.err.println("usage: SHEPHERD_CONTROLS_TOKEN=TOKEN ControlsExpiry HOST:PORT CONTROLS_URL");
            System.exit(2);
        }
        try {
            run(args[0], args[1], token);
        } catch (Exception e) {
            System.err.println("controls curator: mutex expiry FAILED: " + e);
            System.out.println("controls curator: 0 passed");
            System.exit(1);
        }
        System.out.println("controls curator: mutex expiry ok");
        System.out.println("controls curator: 1 passed");
        // Curator's and ZooKeeper's threads are not all daemons.
        System.exit(0);
    }

    private static void run(String connect, String controls, String token) throws Exception {
        String path = Check.base("controls-expiry") + "/lock";
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        CuratorFramework holder = Check.client(connect);
        CuratorFramework contender = Check.client(connect);
        BlockingQueue<ConnectionState> states = new LinkedBlockingQueue<>();
        holder.getConnectionStateListenable().addListener((c, state) -> states.add(state));
        try {
            InterProcessMutex mine = new InterProcessMutex(holder, path);
            Check.that(mine.acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS), "the holder acquires the mutex");

            // A mutex belongs to the thread that acquired it: the contender's thread acquires,
            // reports, and releases when told.
            InterProcessMutex theirs = new InterProcessMutex(contender, path);
            BlockingQueue<Object> acquired = new LinkedBlockingQueue<>();
            CountDownLatch release = new CountDownLatch(1);
            Thread waiter = new Thread(() -> {
                try {
                    boolean got = theirs.acquire(Check.WAIT_SECONDS, TimeUnit.SECONDS);
                    acquired.add(got);
                    if (got && release.await(Check.WAIT_SECONDS, TimeUnit.SECONDS)) {
                        theirs.release();
                        acquired.add("released");
                    }
                } catch (Exception e) {
                    acquired.add(e);
                }
            }, "contender");
            waiter.setDaemon(true);
            waiter.start();
            Check.that(acquired.poll(Check.BRIEF_MS, TimeUnit.MILLISECONDS) == null,
                    "the contender stays out while the mutex is held");

            // Java's session id is a long: the controls take it in decimal as well as in hex.
            long session = holder.getZookeeperClient().getZooKeeper().getSessionId();
            String hex = "0x" + Long.toHexString(session);
            HttpResponse<String> listed = call(http, controls, token, "GET", "/sessions/" + session);
            Check.equal(200, listed.statusCode(), "GET /sessions/" + session + " (" + listed.body() + ")");
            Check.that(listed.body().contains("\"id\":\"" + hex + "\""), "the session is listed in hex: " + listed.body());
            HttpResponse<String> expired = call(http, controls, token, "POST", "/sessions/" + hex + "/expire");
            Check.equal(200, expired.statusCode(), "POST /sessions/" + hex + "/expire (" + expired.body() + ")");

            Check.nextMatching(states, s -> s == ConnectionState.LOST, Check.WAIT_SECONDS,
                    "ConnectionState.LOST on the holder");
            Object outcome = Check.next(acquired, "the contender's acquire to return");
            Check.equal(Boolean.TRUE, outcome, "the contender acquired the mutex after the expiry");
            Check.that(theirs.isAcquiredInThisProcess(), "the contender holds the mutex");
            List<String> nodes = contender.getChildren().forPath(path);
            Check.equal(1, nodes.size(), "lock nodes left (only the contender's): " + nodes);
            HttpResponse<String> gone = call(http, controls, token, "GET", "/sessions/" + hex);
            Check.equal(404, gone.statusCode(), "the expired session is gone (" + gone.body() + ")");
            release.countDown();
            Check.equal("released", Check.next(acquired, "the contender's release"), "the contender released");
        } finally {
            holder.close();
            contender.close();
        }
    }

    /** One test-controls call with the bearer token; bounded by 10 s. */
    private static HttpResponse<String> call(HttpClient http, String controls, String token, String method, String path)
            throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(controls + path))
                .timeout(Duration.ofSeconds(10))
                .header("Authorization", "Bearer " + token)
                .method(method, HttpRequest.BodyPublishers.noBody())
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
