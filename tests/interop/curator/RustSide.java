import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The Rust half of the mixed fleet: the `curator_fleet` binary (testkit), started as a child
 * process and driven over its stdin, one command a line. Its replies, tagged with the
 * command's id, are sorted into one queue per id by a reader thread, so that a reply may be
 * awaited (or its absence checked) long after the command went.
 */
final class RustSide implements AutoCloseable {
    private final Process process;
    private final PrintWriter commands;
    private final Map<String, BlockingQueue<String>> replies = new ConcurrentHashMap<>();

    RustSide(String binary, String connect) throws IOException {
        process = new ProcessBuilder(List.of(binary, connect))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        commands = new PrintWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8), true);
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = out.readLine()) != null) {
                    int space = line.indexOf(' ');
                    String id = space < 0 ? line : line.substring(0, space);
                    String text = space < 0 ? "" : line.substring(space + 1);
                    queue(id).add(text);
                }
            } catch (IOException e) {
                queue("-").add("error: reading the Rust side: " + e);
            }
        }, "rust-side-reader");
        reader.setDaemon(true);
        reader.start();
    }

    private BlockingQueue<String> queue(String id) {
        return replies.computeIfAbsent(id, k -> new LinkedBlockingQueue<>());
    }

    /** Sends one command line, e.g. `hold h1 mutex /path`. */
    void send(String command) {
        commands.println(command);
        Check.that(!commands.checkError(), "the Rust side took the command: " + command);
    }

    /** The next reply to `id`, failing if none comes within {@link Check#WAIT_SECONDS}. */
    String reply(String id) throws InterruptedException {
        if (!process.isAlive() && queue(id).isEmpty()) {
            throw new Check.Failed("the Rust side exited with status " + process.exitValue());
        }
        return Check.next(queue(id), "the Rust side's reply to " + id + " (stray replies: " + queue("-") + ")");
    }

    /** Asserts the next reply to `id` is `expected`. */
    void expect(String id, String expected, String what) throws InterruptedException {
        Check.equal(expected, reply(id), what);
    }

    /** Asserts that `id` gets no reply within {@link Check#BRIEF_MS}. */
    void silent(String id, String what) throws InterruptedException {
        String early = queue(id).poll(Check.BRIEF_MS, TimeUnit.MILLISECONDS);
        Check.that(early == null, what + " (the Rust side replied " + early + ")");
    }

    /** Closes stdin (every hold gives its lock back) and waits for the process to end. */
    @Override
    public void close() {
        commands.close();
        try {
            if (process.waitFor(Check.WAIT_SECONDS, TimeUnit.SECONDS)) {
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        process.destroyForcibly();
        throw new Check.Failed("the Rust side did not exit within " + Check.WAIT_SECONDS + " s of its stdin closing");
    }
}
