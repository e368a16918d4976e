import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.zookeeper.common.Time;
import org.apache.zookeeper.test.system.GenerateLoad;

/**
 * ZooKeeper's own load generator, {@code GenerateLoad.GeneratorInstance} from its
 * zookeeper-it jar, swept over write percentages against one server (docs/bench/generate-load.md).
 *
 * <p>Each instance is ZooKeeper's code unchanged: one session, an ephemeral sequential node
 * under /, then asynchronous getData or setData of it (setData with the write percentage's
 * probability) with at most 100 outstanding, reporting "time percentage finished errors
 * outstanding" every 300 ms over a socket. {@code GenerateLoad}'s master starts its own quorum
 * peers through an instance manager and cannot be pointed at a running server; this driver
 * plays its part instead: it accepts the instances' report sockets, sends each percentage, and
 * sums what they report, by the reports' timestamps (the instances run in this JVM, on its clock).
 *
 * <p>Usage: {@code GenerateLoadSweep HOST:PORT SERVER_PID CLIENTS REQUEST_BYTES WARMUP_S
 * MEASURE_S PERCENT[,PERCENT...]}. Prints one line per percentage: {@code percent ops_per_s
 * server_cpu_us_per_op errors}, the server's CPU read from /proc/PID/stat (utime + stime).
 */
public final class GenerateLoadSweep {
    /** Operations and errors reported with a timestamp in the window, and the window. */
    private static final AtomicLong ops = new AtomicLong();
    private static final AtomicLong errors = new AtomicLong();
    private static volatile long windowStart = Long.MAX_VALUE;
    private static volatile long windowEnd = Long.MAX_VALUE;

    public static void main(String[] args) throws Exception {
        if (args.length != 7) {
            System.err.println("usage: GenerateLoadSweep HOST:PORT SERVER_PID CLIENTS REQUEST_BYTES"
                    + " WARMUP_S MEASURE_S PERCENT[,PERCENT...]");
            System.exit(2);
        }
        String connect = args[0];
        int pid = Integer.parseInt(args[1]);
        int clients = Integer.parseInt(args[2]);
        int bytes = Integer.parseInt(args[3]);
        long warmupMs = Long.parseLong(args[4]) * 1000;
        long measureMs = Long.parseLong(args[5]) * 1000;
        ServerSocket reports = new ServerSocket(0, clients, InetAddress.getLoopbackAddress());
        List<GenerateLoad.GeneratorInstance> instances = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            GenerateLoad.GeneratorInstance instance = new GenerateLoad.GeneratorInstance();
            instance.setReporter(report -> { });
            instance.configure(connect + " 127.0.0.1:" + reports.getLocalPort() + " " + bytes);
            instances.add(instance);
        }
        List<OutputStream> controls = new ArrayList<>();
        reports.setSoTimeout(60_000);
        for (int i = 0; i < clients; i++) {
            Socket socket = reports.accept();
            controls.add(socket.getOutputStream());
            Thread reader = new Thread(() -> read(socket));
            reader.setDaemon(true);
            reader.start();
        }
        for (String percent : args[6].split(",")) {
            for (OutputStream control : controls) {
                control.write((percent + "\n").getBytes(StandardCharsets.US_ASCII));
                control.flush();
            }
            Thread.sleep(warmupMs);
            long cpuBefore = cpuTicks(pid);
            ops.set(0);
            errors.set(0);
            windowEnd = Long.MAX_VALUE;
            windowStart = Time.currentElapsedTime();
            Thread.sleep(measureMs);
            windowEnd = Time.currentElapsedTime();
            long cpuAfter = cpuTicks(pid);
            // The reports of the window's last 300 ms arrive after it.
            Thread.sleep(700);
            long done = ops.get();
            double seconds = (windowEnd - windowStart) / 1000.0;
            double cpuUs = (cpuAfter - cpuBefore) * 10_000.0; // USER_HZ = 100
            System.out.printf("%s %.0f %.2f %d%n", percent, done / seconds,
                    done == 0 ? 0.0 : cpuUs / done, errors.get());
            System.out.flush();
            windowStart = Long.MAX_VALUE;
        }
        System.exit(0);
    }

    /** Adds each report whose timestamp falls in the window. */
    private static void read(Socket socket) {
        try (BufferedReader in = new BufferedReader(
                new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII))) {
            String line;
            while ((line = in.readLine()) != null) {
                String[] f = line.split(" ");
                long time = Long.parseLong(f[0]);
                if (time > windowStart && time <= windowEnd) {
                    ops.addAndGet(Long.parseLong(f[2]));
                    errors.addAndGet(Long.parseLong(f[3]));
                }
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("report socket: " + e);
        }
    }

    /** utime + stime of the process, in clock ticks. */
    private static long cpuTicks(int pid) throws IOException {
        String stat = new String(Files.readAllBytes(Paths.get("/proc/" + pid + "/stat")),
                StandardCharsets.US_ASCII);
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }
}
