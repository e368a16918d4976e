import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A loopback TCP proxy in front of a server, for cases that need a client's connection to
 * drop while its session lives on: {@link #cut} closes every connection through it and turns
 * new ones away until {@link #restore}. Each connection is two pump threads.
 */
final class Proxy implements AutoCloseable {
    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile boolean refusing;

    Proxy(String connect) throws IOException {
        int colon = connect.lastIndexOf(':');
        target = new InetSocketAddress(connect.substring(0, colon), Integer.parseInt(connect.substring(colon + 1)));
        listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::acceptLoop, "proxy-accept");
        accept.setDaemon(true);
        accept.start();
    }

    /** The connect string of the proxy itself. */
    String connectString() {
        return "127.0.0.1:" + listener.getLocalPort();
    }

    /** Closes every connection through the proxy, and turns new ones away. */
    void cut() {
        refusing = true;
        open.forEach(Proxy::quietClose);
        open.clear();
    }

    /** Lets connections through again. */
    void restore() {
        refusing = false;
    }

    @Override
    public void close() {
        cut();
        quietClose(listener);
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            if (refusing) {
                quietClose(client);
                continue;
            }
            try {
                Socket server = new Socket();
                server.connect(target, 5_000);
                open.add(client);
                open.add(server);
                pump(client, server);
                pump(server, client);
            } catch (IOException e) {
                quietClose(client);
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // One side went: close both below.
            } finally {
                quietClose(from);
                quietClose(to);
                open.remove(from);
                open.remove(to);
            }
        }, "proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void quietClose(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException e) {
            // Nothing to do: it is going away either way.
        }
    }
}
