package shepherd.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One running {@code shepherd serve} process: started, read up to its ready line, and stopped.
 *
 * <p>Invariant: no process outlives the JVM that started it. Every process is started with
 * {@code --exit-with-stdin} and its stdin held open by this object, so the server stops by
 * itself if the JVM dies in any way; a shutdown hook destroys whatever is still running at a
 * normal exit; {@link #stop} ends it and waits for it.
 *
 * <p>stdout carries only the ready line (then is drained); stderr is drained into a bounded tail
 * that launch failures quote.
 */
final class ServerProcess {
    /** How long a server may take to print its ready line before the launch is given up. */
    static final long READY_TIMEOUT_MS = 30_000;
    /** How long a clean stop (stdin closed, then SIGTERM) may take before the process is killed. */
    private static final long STOP_TIMEOUT_MS = 10_000;
    private static final int TAIL_LINES = 40;
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            for (Process process : LIVE) {
                process.destroyForcibly();
            }
        }, "shepherd-testing-shutdown"));
    }

    final ReadyLine ready;
    private final Process process;
    private final Deque<String> stderrTail;

    private ServerProcess(Process process, ReadyLine ready, Deque<String> stderrTail) {
        this.process = process;
        this.ready = ready;
        this.stderrTail = stderrTail;
    }

    /**
     * Runs {@code command} and waits for its ready line. Throws {@link ShepherdException}
     * naming the reason, the command line and the tail of stderr if the binary cannot be run,
     * exits first, prints something else, or is silent for {@link #READY_TIMEOUT_MS}.
     */
    static ServerProcess start(List<String> command) {
        Process process;
        try {
            process = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.PIPE).start();
        } catch (IOException e) {
            throw new ShepherdException("cannot start the shepherd binary (" + e.getMessage()
                    + "); command: " + String.join(" ", command), e);
        }
        LIVE.add(process);
        Deque<String> tail = new ArrayDeque<>();
        Thread stderr = drain(process.getErrorStream(), tail, "shepherd-stderr");
        CompletableFuture<String> firstLine = new CompletableFuture<>();
        Thread stdout = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                firstLine.complete(in.readLine());
                // Nothing else is printed in --ready-json mode; read to the end all the same,
                // so that the process can never block on a full pipe.
                while (in.readLine() != null) {
                    continue;
                }
            } catch (IOException e) {
                firstLine.complete(null);
            }
        }, "shepherd-stdout");
        stdout.setDaemon(true);
        stdout.start();
        String reason;
        try {
            String line = firstLine.get(READY_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            if (line != null) {
                try {
                    return new ServerProcess(process, ReadyLine.parse(line), tail);
                } catch (IllegalArgumentException | ClassCastException e) {
                    reason = "it printed something other than a ready line: " + line;
                }
            } else {
                reason = "it exited with status " + waitBriefly(process) + " before its ready line";
            }
        } catch (TimeoutException e) {
            reason = "no ready line within " + READY_TIMEOUT_MS + " ms";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            reason = "interrupted while waiting for its ready line";
        } catch (ExecutionException e) {
            reason = "reading its output failed: " + e.getCause();
        }
        // Killed through its handle first: Process.destroy closes the process's streams, and
        // the stderr reader would lose what it has not read yet, the reason for the failure.
        process.toHandle().destroyForcibly();
        exited(process, STOP_TIMEOUT_MS);
        try {
            // The process has ended: its stderr reaches end of file promptly.
            stderr.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        kill(process);
        String lines;
        synchronized (tail) {
            lines = String.join("\n  ", tail);
        }
        throw new ShepherdException("shepherd did not start: " + reason + "; command: "
                + String.join(" ", command) + (lines.isEmpty() ? "" : "; stderr:\n  " + lines));
    }

    /** Whether the process is still running. */
    boolean isAlive() {
        return process.isAlive();
    }

    /**
     * Stops the server cleanly (its stdin closed, which {@code --exit-with-stdin} turns into the
     * same stop as SIGTERM, then SIGTERM itself), and kills it if it has not ended in
     * {@link #STOP_TIMEOUT_MS}. Returns once it has exited.
     */
    void stop() {
        try {
            process.getOutputStream().close();
        } catch (IOException ignored) {
            // Already closed: the process is ending anyway.
        }
        if (!exited(process, STOP_TIMEOUT_MS / 2)) {
            process.destroy();
            if (!exited(process, STOP_TIMEOUT_MS / 2)) {
                kill(process);
            }
        }
        LIVE.remove(process);
    }

    /** The last lines the server wrote on stderr. */
    List<String> stderrTail() {
        synchronized (stderrTail) {
            return Collections.unmodifiableList(new ArrayList<>(stderrTail));
        }
    }

    private static void kill(Process process) {
        process.destroyForcibly();
        exited(process, STOP_TIMEOUT_MS);
        LIVE.remove(process);
    }

    private static boolean exited(Process process, long ms) {
        try {
            return process.waitFor(ms, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !process.isAlive();
        }
    }

    private static String waitBriefly(Process process) {
        return exited(process, 5_000) ? String.valueOf(process.exitValue()) : "(still running)";
    }

    private static Thread drain(InputStream stream, Deque<String> tail, String name) {
        Thread thread = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    synchronized (tail) {
                        if (tail.size() == TAIL_LINES) {
                            tail.removeFirst();
                        }
                        tail.addLast(line);
                    }
                }
            } catch (IOException ignored) {
                // The process ended; the tail has what it wrote.
            }
        }, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }
}
