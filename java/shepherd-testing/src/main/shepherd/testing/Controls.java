package shepherd.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

/**
 * The client side of {@code shepherd serve --test-controls} (docs/test-controls.md): one call
 * per control, with the launch's token, over {@code java.net.http}. A 2xx answer is returned as
 * its JSON object; any other status throws {@link ShepherdException} carrying the status and the
 * server's message, so that a control on an unknown session fails at once with 404 rather than
 * being ignored. Every call has a timeout: none can hang a test.
 */
final class Controls {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /**
     * The client, made on the first control call rather than at the first start: building an
     * {@code HttpClient} sets up TLS defaults, about half a second in a fresh JVM, which a test
     * that never calls a control should not pay (docs/java.md, "Startup").
     */
    private static final class Http {
        static final HttpClient CLIENT = HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(10))
                .build();
    }

    private final String url;
    private final String token;

    Controls(String url, String token) {
        if (url == null || token == null) {
            throw new ShepherdException("the server's ready line has no test controls URL or token");
        }
        this.url = url;
        this.token = token;
    }

    Map<String, Object> get(String path) {
        return send(HttpRequest.newBuilder(URI.create(url + path)).GET(), path);
    }

    Map<String, Object> post(String path) {
        return send(HttpRequest.newBuilder(URI.create(url + path))
                .POST(HttpRequest.BodyPublishers.noBody()), path);
    }

    private Map<String, Object> send(HttpRequest.Builder request, String path) {
        HttpResponse<String> response;
        try {
            response = Http.CLIENT.send(request.timeout(TIMEOUT)
                    .header("Authorization", "Bearer " + token)
                    .build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new ShepherdException("test control " + path + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ShepherdException("interrupted during test control " + path, e);
        }
        int status = response.statusCode();
        if (status / 100 != 2) {
            throw new ShepherdException("test control " + path + " answered " + status + ": "
                    + response.body(), status, null);
        }
        try {
            return Json.object(response.body());
        } catch (IllegalArgumentException e) {
            throw new ShepherdException("test control " + path + " answered " + status
                    + " with a body that is not JSON: " + response.body(), status, e);
        }
    }

    /** A session id as the controls read it: ZooKeeper's hex form, as an unsigned number. */
    static String session(long id) {
        return "0x" + Long.toHexString(id);
    }
}
