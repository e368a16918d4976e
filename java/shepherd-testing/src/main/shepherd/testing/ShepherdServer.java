package shepherd.testing;

import java.io.Closeable;
import java.io.File;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A Shepherd server for a test: a {@code shepherd serve} process on free loopback ports, with
 * Curator {@code TestingServer}'s methods and meanings ({@link #getConnectString},
 * {@link #getPort}, {@link #getTempDirectory}, {@link #start}, {@link #stop}, {@link #restart},
 * {@link #close}) and the server-side test controls that {@code TestingServer} lacks: expire,
 * cut, freeze and thaw a session, and stop, start, partition and heal ensemble members
 * (numbered {@code 1..n}, like ZooKeeper's {@code myid}).
 *
 * <pre>{@code
 * try (ShepherdServer server = new ShepherdServer()) {
 *     CuratorFramework client = CuratorFrameworkFactory.newClient(server.getConnectString(), retry);
 *     ...
 *     server.expireSession(client.getZookeeperClient().getZooKeeper().getSessionId());
 * }
 * }</pre>
 *
 * <p>Invariant: a started server is a process that ends with this object ({@link #close}), with
 * the JVM (a shutdown hook), or, if the JVM is killed, by itself when its stdin closes
 * ({@code --exit-with-stdin}). It never opens a port nobody asked for: port 0 everywhere, no
 * AdminServer. The data directory is a temporary one unless {@link ShepherdServerBuilder#dataDir} names one;
 * it is kept across {@link #stop}/{@link #start} and {@link #restart}, and a temporary one is
 * deleted by {@link #close}. It is written with {@code forceSync=no} unless a setting says
 * otherwise: it survives a restart, not a power cut.
 *
 * <p>The binary is the one {@link ShepherdServerBuilder#binary} names, else {@code SHEPHERD_BIN}, else
 * {@code shepherd} on {@code PATH}, else the one bundled in this jar (linux-x86_64).
 */
public final class ShepherdServer implements Closeable {
    private final ShepherdServerBuilder config;
    private final Path dataDir;
    private final boolean ownsDataDir;
    private ServerProcess process;
    private Controls controls;
    private List<Integer> ports = Collections.emptyList();
    private String connectString;

    /**
     * Starts a single server on a free port with a temporary data directory, as
     * {@code new TestingServer()} does.
     *
     * @throws ShepherdException if the binary cannot be found or started
     */
    public ShepherdServer() {
        this(builder(), true);
    }

    /**
     * A single server on {@code port} (0: a free one), as {@code new TestingServer(port, start)}.
     *
     * @param port the client port, 0 for a free one
     * @param start whether to start it now
     */
    public ShepherdServer(int port, boolean start) {
        this(builder().port(port), start);
    }

    ShepherdServer(ShepherdServerBuilder config, boolean start) {
        this.config = config.copy();
        if (config.dataDir != null) {
            this.dataDir = config.dataDir;
            this.ownsDataDir = false;
        } else if (config.inMemory) {
            this.dataDir = null;
            this.ownsDataDir = false;
        } else {
            this.dataDir = TempDir.create();
            this.ownsDataDir = true;
        }
        if (start) {
            try {
                start();
            } catch (RuntimeException e) {
                // Nobody gets this object to close: the directory made for it goes now.
                if (ownsDataDir) {
                    deleteTree(dataDir);
                }
                throw e;
            }
        }
    }

    /**
     * A builder for a server with other settings: {@code ShepherdServer.builder().members(3).build()}.
     *
     * @return a builder with the defaults of {@code new ShepherdServer()}
     */
    public static ShepherdServerBuilder builder() {
        return new ShepherdServerBuilder();
    }

    /**
     * Starts the server, on the port it had before if it ran before (so that clients find it
     * again), with the same data directory. Does nothing if it is running.
     *
     * @throws ShepherdException if the binary cannot be found or started, with the reason, the
     *     command line and the tail of its stderr
     */
    public synchronized void start() {
        if (process != null && process.isAlive()) {
            return;
        }
        process = ServerProcess.start(command());
        controls = new Controls(process.ready.controlsUrl, process.ready.controlsToken);
        ports = process.ready.ports;
        connectString = process.ready.connectString;
    }

    /** Stops the server and keeps its data directory; {@link #start} brings it back. */
    public synchronized void stop() {
        if (process != null) {
            process.stop();
        }
    }

    /** Stops the server and starts it again on the same ports, with the data it had. */
    public synchronized void restart() {
        stop();
        start();
    }

    /** Stops the server and deletes its data directory if it was a temporary one. */
    @Override
    public synchronized void close() {
        stop();
        process = null;
        if (ownsDataDir) {
            deleteTree(dataDir);
        }
    }

    /**
     * Whether the server process is running.
     *
     * @return true while it runs
     */
    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /**
     * The connect string.
     *
     * @return {@code 127.0.0.1:PORT}, one entry per member
     */
    public synchronized String getConnectString() {
        return connectString;
    }

    /**
     * The client port.
     *
     * @return the port (member 1's in an ensemble)
     */
    public synchronized int getPort() {
        return ports.isEmpty() ? config.port : ports.get(0);
    }

    /**
     * Every member's client port.
     *
     * @return the ports, member 1 first
     */
    public synchronized List<Integer> getPorts() {
        return ports;
    }

    /**
     * The data directory.
     *
     * @return the directory, or null for a server kept in memory ({@link ShepherdServerBuilder#inMemory})
     */
    public File getTempDirectory() {
        return dataDir == null ? null : dataDir.toFile();
    }

    /**
     * Ends a session on the server now, exactly as its timeout would: its ephemerals go, its
     * connection is closed, and its client then sees it expired (Curator: {@code LOST}).
     *
     * @param sessionId the session, e.g. {@code ZooKeeper.getSessionId()}
     * @throws ShepherdException with status 404 if the server has no such session
     */
    public void expireSession(long sessionId) {
        sessionControl(sessionId, "expire");
    }

    /**
     * Drops a session's connection and keeps the session: its client reconnects and resumes it.
     *
     * @param sessionId the session
     * @throws ShepherdException with 404 for an unknown session, 409 if it has no connection
     */
    public void closeConnection(long sessionId) {
        sessionControl(sessionId, "close");
    }

    /**
     * Neither reads nor writes the session's connection until {@link #thawSession}; its timeout
     * keeps running, so a freeze longer than the timeout expires it.
     *
     * @param sessionId the session
     */
    public void freezeSession(long sessionId) {
        sessionControl(sessionId, "freeze");
    }

    /**
     * Ends a freeze; what was queued is delivered in order.
     *
     * @param sessionId the session
     */
    public void thawSession(long sessionId) {
        sessionControl(sessionId, "thaw");
    }

    /**
     * The member a session's connection came in on, or 0 if it has no connection now.
     *
     * @param sessionId the session
     * @return the member id, {@code 1..n}, or 0
     */
    public int memberOf(long sessionId) {
        Object member = controls().get("/sessions/" + Controls.session(sessionId)).get("member");
        return member instanceof Number ? ((Number) member).intValue() : 0;
    }

    /**
     * Closes a member's listener and its connections (sessions live on, and move to the others).
     *
     * @param member the member, {@code 1..n}
     */
    public void stopMember(int member) {
        memberControl(member, "stop");
    }

    /**
     * Listens again on a stopped member's port.
     *
     * @param member the member, {@code 1..n}
     */
    public void startMember(int member) {
        memberControl(member, "start");
    }

    /**
     * Keeps a member's connections open but unanswered, so that clients time out and move.
     *
     * @param member the member, {@code 1..n}
     */
    public void partitionMember(int member) {
        memberControl(member, "partition");
    }

    /**
     * Ends a member's partition or isolation.
     *
     * @param member the member, {@code 1..n}
     */
    public void healMember(int member) {
        memberControl(member, "heal");
    }

    /**
     * Cuts a member off from its peers, not its clients: after syncLimit it looks alone (its
     * clients are dropped), and if it led, the others elect another leader.
     *
     * @param member the member, {@code 1..n}
     */
    public void isolateMember(int member) {
        memberControl(member, "isolate");
    }

    /**
     * Forces an election that a member wins: every member looks (every client is
     * disconnected), and after the election time it leads.
     *
     * @param member the member, {@code 1..n}
     */
    public void electMember(int member) {
        memberControl(member, "elect");
    }

    /**
     * The watch notifications delivered so far: {@code total} and one count per event type
     * ({@code NodeCreated}, {@code NodeDeleted}, {@code NodeDataChanged},
     * {@code NodeChildrenChanged}).
     *
     * @return the counts by name
     */
    public Map<String, Long> notificationCounts() {
        Map<String, Long> counts = new LinkedHashMap<>();
        for (Map.Entry<String, Object> entry : controls().get("/notifications").entrySet()) {
            if (entry.getValue() instanceof Number) {
                counts.put(entry.getKey(), ((Number) entry.getValue()).longValue());
            }
        }
        return counts;
    }

    @Override
    public String toString() {
        return "ShepherdServer[" + connectString + "]";
    }

    private void sessionControl(long sessionId, String action) {
        controls().post("/sessions/" + Controls.session(sessionId) + "/" + action);
    }

    private void memberControl(int member, String action) {
        if (member < 1 || member > config.members) {
            throw new IllegalArgumentException("member " + member + " is not in 1.." + config.members);
        }
        controls().post("/members/" + member + "/" + action);
    }

    private synchronized Controls controls() {
        if (process == null || !process.isAlive()) {
            throw new IllegalStateException("the server is not running");
        }
        return controls;
    }

    /** The command line: ports from the last run if there was one, so a restart keeps them. */
    private List<String> command() {
        List<String> command = new ArrayList<>();
        command.add(BinaryLocator.locate(config.binary).toString());
        command.add("serve");
        command.add("--ready-json");
        command.add("--exit-with-stdin");
        command.add("--test-controls");
        command.add("--bind");
        command.add("127.0.0.1");
        if (ports.size() > 1) {
            // A restarted ensemble: each member back on its own port, consecutive or not.
            command.add("--member-ports");
            command.add(ports.stream().map(String::valueOf).collect(Collectors.joining(",")));
        } else {
            command.add("--port");
            command.add(String.valueOf(ports.isEmpty() ? config.port : ports.get(0)));
            if (config.members > 1) {
                command.add("--members");
                command.add(String.valueOf(config.members));
            }
        }
        if (dataDir != null) {
            command.add("--data-dir");
            command.add(dataDir.toString());
        }
        for (Map.Entry<String, String> setting : config.settings.entrySet()) {
            command.add("--set");
            command.add(setting.getKey() + "=" + setting.getValue());
        }
        return command;
    }

    private static void deleteTree(Path root) {
        if (root == null || !Files.exists(root)) {
            return;
        }
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<Path>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.delete(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                    Files.delete(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException ignored) {
            // A temporary directory left behind is harmless; a failing close() is not.
        }
    }
}
