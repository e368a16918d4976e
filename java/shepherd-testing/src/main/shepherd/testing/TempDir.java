package shepherd.testing;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A new private directory under {@code java.io.tmpdir} for a server's data. It is named from the
 * pid, a counter and the clock rather than by {@code Files.createTempDirectory}, whose first
 * call seeds a {@code SecureRandom} (tens of milliseconds in a fresh JVM, as much as the server's
 * own start). Creation is atomic and fails on an existing name, so a name taken by anyone else
 * (even a planted symlink) is skipped, never used; the directory is readable by its owner only.
 */
final class TempDir {
    private static final AtomicLong COUNTER = new AtomicLong();
    private static final int ATTEMPTS = 100;

    private TempDir() {}

    static Path create() {
        Path base = Paths.get(System.getProperty("java.io.tmpdir"));
        long pid = ProcessHandle.current().pid();
        IOException last = null;
        for (int i = 0; i < ATTEMPTS; i++) {
            Path dir = base.resolve("shepherd-testing-" + pid + "-" + COUNTER.incrementAndGet() + "-"
                    + Long.toHexString(System.nanoTime()));
            try {
                if (base.getFileSystem().supportedFileAttributeViews().contains("posix")) {
                    return Files.createDirectory(dir,
                            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                }
                return Files.createDirectory(dir);
            } catch (FileAlreadyExistsException e) {
                last = e;
            } catch (IOException e) {
                throw new ShepherdException("cannot create a temporary data directory in " + base + ": " + e, e);
            }
        }
        throw new ShepherdException("cannot create a temporary data directory in " + base + " after "
                + ATTEMPTS + " names were taken", last);
    }
}
