package shepherd.testing;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How to build a {@link ShepherdServer}: {@code ShepherdServer.builder().members(3)
 * .setting("maxClientCnxns", "10").build()}.
 */
public final class ShepherdServerBuilder {
    int port;
    Path dataDir;
    boolean inMemory;
    int members = 1;
    Path binary;
    final Map<String, String> settings = new LinkedHashMap<>();

    ShepherdServerBuilder() {
        // A test's data has to survive restart(), a process exit, not a power cut: the
        // page cache keeps it. Not waiting for the disk saves 15-25 ms of every start
        // (docs/java.md, "Startup"). setting("forceSync", "yes") restores it.
        settings.put("forceSync", "no");
    }

    /**
     * The client port (member 1's; member i listens on {@code port + i - 1}); 0, the
     * default, picks free ports.
     *
     * @param port the port
     * @return this
     */
    public ShepherdServerBuilder port(int port) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is not in 0..65535");
        }
        this.port = port;
        return this;
    }

    /**
     * Keep the data in this directory (kept by {@link ShepherdServer#close}); the default
     * is a temporary one, deleted by {@code close}.
     *
     * @param dir the data directory
     * @return this
     */
    public ShepherdServerBuilder dataDir(Path dir) {
        this.dataDir = dir;
        this.inMemory = false;
        return this;
    }

    /**
     * Keep everything in memory: the fastest start, but {@link ShepherdServer#restart}
     * then starts empty.
     *
     * @return this
     */
    public ShepherdServerBuilder inMemory() {
        this.inMemory = true;
        this.dataDir = null;
        return this;
    }

    /**
     * An in-process ensemble of {@code n} members, {@code 1..n}, sharing one state.
     *
     * @param n 1 to 255
     * @return this
     */
    public ShepherdServerBuilder members(int n) {
        if (n < 1 || n > 255) {
            throw new IllegalArgumentException("members " + n + " is not in 1..255");
        }
        this.members = n;
        return this;
    }

    /**
     * Any zoo.cfg key ({@code shepherd serve --set KEY=VALUE}); an unknown key makes
     * {@link #build} fail naming it.
     *
     * @param key the zoo.cfg key
     * @param value its value
     * @return this
     */
    public ShepherdServerBuilder setting(String key, String value) {
        settings.put(key, value);
        return this;
    }

    /**
     * The {@code shepherd} binary to run, instead of {@code SHEPHERD_BIN}, PATH or the
     * bundled one.
     *
     * @param binary the binary's path
     * @return this
     */
    public ShepherdServerBuilder binary(Path binary) {
        this.binary = binary;
        return this;
    }

    /**
     * Builds the server and starts it.
     *
     * @return the running server
     * @throws ShepherdException if it cannot be started
     */
    public ShepherdServer build() {
        return new ShepherdServer(this, true);
    }

    /**
     * Builds the server without starting it; {@link ShepherdServer#start} starts it.
     *
     * @return the server, not running
     */
    public ShepherdServer buildUnstarted() {
        return new ShepherdServer(this, false);
    }

    int members() {
        return members;
    }

    ShepherdServerBuilder copy() {
        ShepherdServerBuilder copy = new ShepherdServerBuilder();
        copy.port = port;
        copy.dataDir = dataDir;
        copy.inMemory = inMemory;
        copy.members = members;
        copy.binary = binary;
        copy.settings.putAll(settings);
        return copy;
    }
}
