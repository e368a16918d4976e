package shepherd.testing;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The one JSON line {@code shepherd serve --ready-json} prints on stdout once every listener is
 * bound (docs/java.md, "The launch contract"): the pid, the client port of every member in
 * member order, the connect string and the test controls' URL and token. Fields the launcher
 * does not use are not kept.
 */
final class ReadyLine {
    final long pid;
    final List<Integer> ports;
    final String connectString;
    final String controlsUrl;
    final String controlsToken;

    private ReadyLine(long pid, List<Integer> ports, String connectString, String controlsUrl,
            String controlsToken) {
        this.pid = pid;
        this.ports = ports;
        this.connectString = connectString;
        this.controlsUrl = controlsUrl;
        this.controlsToken = controlsToken;
    }

    /** Reads a ready line; anything that is not one throws {@link IllegalArgumentException}. */
    static ReadyLine parse(String line) {
        Map<String, Object> json = Json.object(line);
        if (!"ready".equals(json.get("shepherd"))) {
            throw new IllegalArgumentException("not a ready line: " + line);
        }
        List<Integer> ports = new ArrayList<>();
        Object list = json.get("ports");
        if (list instanceof List) {
            for (Object port : (List<?>) list) {
                ports.add(((Number) port).intValue());
            }
        }
        if (ports.isEmpty()) {
            throw new IllegalArgumentException("a ready line without ports: " + line);
        }
        Object pid = json.get("pid");
        return new ReadyLine(pid instanceof Number ? ((Number) pid).longValue() : -1,
                Collections.unmodifiableList(ports), (String) json.get("connect_string"),
                (String) json.get("controls_url"), (String) json.get("controls_token"));
    }
}
