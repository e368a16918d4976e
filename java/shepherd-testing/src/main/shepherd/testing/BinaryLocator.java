package shepherd.testing;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds the {@code shepherd} binary a server runs, in this order: the builder's
 * {@code binary(path)}; the {@code SHEPHERD_BIN} environment variable (or the
 * {@code shepherd.bin} system property); {@code shepherd} on {@code PATH}; the binary bundled in
 * the jar for linux-x86_64. The bundled one is extracted once per content: to
 * {@code CACHE/shepherd-testing/SHA256/shepherd}, written under a temporary name and renamed into
 * place, so that concurrent JVMs never run a half-written file. A miss throws with every place
 * that was looked at.
 */
final class BinaryLocator {
    /** Where the jar carries the binary (see .ci/java.sh, which bundles it). */
    static final String RESOURCE = "/shepherd/testing/linux-x86_64/shepherd";

    private BinaryLocator() {}

    static Path locate(Path explicit) {
        if (explicit != null) {
            return explicit;
        }
        List<String> tried = new ArrayList<>();
        String env = System.getenv("SHEPHERD_BIN");
        if (env == null || env.isEmpty()) {
            env = System.getProperty("shepherd.bin");
        }
        if (env != null && !env.isEmpty()) {
            return Paths.get(env);
        }
        tried.add("SHEPHERD_BIN (unset)");
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(File.pathSeparator)) {
                if (dir.isEmpty()) {
                    continue;
                }
                Path candidate = Paths.get(dir, "shepherd");
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return candidate;
                }
            }
        }
        tried.add("shepherd on PATH (none)");
        Path bundled = bundled(tried);
        if (bundled != null) {
            return bundled;
        }
        throw new ShepherdException("no shepherd binary found; looked at: " + String.join(", ", tried)
                + ". Set SHEPHERD_BIN to a built `shepherd` (cargo build --release --bin shepherd)");
    }

    private static Path bundled(List<String> tried) {
        String os = System.getProperty("os.name", "").toLowerCase();
        String arch = System.getProperty("os.arch", "");
        if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            tried.add("the bundled binary (for linux-x86_64 only; this is " + os + "-" + arch + ")");
            return null;
        }
        byte[] bytes;
        try (InputStream in = BinaryLocator.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                tried.add("the bundled binary (this jar has none)");
                return null;
            }
            bytes = in.readAllBytes();
        } catch (IOException e) {
            throw new ShepherdException("cannot read the bundled shepherd binary: " + e, e);
        }
        Path dir = cacheDir().resolve(sha256(bytes));
        Path target = dir.resolve("shepherd");
        if (Files.isExecutable(target)) {
            return target;
        }
        try {
            Files.createDirectories(dir);
            Path temp = Files.createTempFile(dir, "shepherd", ".part");
            try {
                Files.write(temp, bytes);
                if (!temp.toFile().setExecutable(true, true)) {
                    throw new IOException("cannot make " + temp + " executable");
                }
                try {
                    Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(temp);
            }
        } catch (IOException e) {
            throw new ShepherdException("cannot extract the bundled shepherd binary to " + target
                    + ": " + e, e);
        }
        return target;
    }

    private static Path cacheDir() {
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path base = xdg != null && !xdg.isEmpty()
                ? Paths.get(xdg)
                : Paths.get(System.getProperty("user.home"), ".cache");
        return base.resolve("shepherd-testing");
    }

    private static String sha256(byte[] bytes) {
        try {
            StringBuilder hex = new StringBuilder();
            for (byte b : MessageDigest.getInstance("SHA-256").digest(bytes)) {
                hex.append(String.format("%02x", b));
            }
            return hex.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
