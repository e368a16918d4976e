package shepherd.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Bad input fails at once with a message that says why and what was run: a missing binary, a
 * binary that exits instead of serving, an unknown zoo.cfg key, and a control on a session the
 * server does not have. A failed launch leaves no temporary data directory behind.
 */
class LaunchFailureTest {
    @Test
    void missingBinaryNamesTheReasonAndTheCommand() {
        ShepherdException e = assertThrows(ShepherdException.class,
                () -> ShepherdServer.builder().binary(Paths.get("/nonexistent/shepherd")).build());
        assertTrue(e.getMessage().contains("cannot start the shepherd binary"), e.getMessage());
        assertTrue(e.getMessage().contains("command: /nonexistent/shepherd serve --ready-json"), e.getMessage());
    }

    @Test
    void binaryThatExitsGivesItsStatus() {
        ShepherdException e = assertThrows(ShepherdException.class,
                () -> ShepherdServer.builder().binary(Paths.get("/bin/false")).build());
        assertTrue(e.getMessage().contains("exited with status 1 before its ready line"), e.getMessage());
        assertTrue(e.getMessage().contains("command: /bin/false serve"), e.getMessage());
    }

    @Test
    void failedLaunchLeavesNoDataDirectory() throws IOException {
        Path tmp = Paths.get(System.getProperty("java.io.tmpdir"));
        String prefix = "shepherd-testing-" + ProcessHandle.current().pid() + "-";
        long before = count(tmp, prefix);
        assertThrows(ShepherdException.class,
                () -> ShepherdServer.builder().binary(Paths.get("/bin/false")).build());
        assertEquals(before, count(tmp, prefix), "the temporary data directory is deleted");
    }

    private static long count(Path dir, String prefix) throws IOException {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.filter(p -> p.getFileName().toString().startsWith(prefix)).count();
        }
    }

    @Test
    void unknownSettingIsNamed() {
        ShepherdException e = assertThrows(ShepherdException.class,
                () -> ShepherdServer.builder().setting("noSuchZooCfgKey", "1").build());
        assertTrue(e.getMessage().contains("exited with status 2"), e.getMessage());
        int stderr = e.getMessage().indexOf("stderr:");
        assertTrue(stderr >= 0 && e.getMessage().indexOf("noSuchZooCfgKey", stderr) >= 0,
                "the server's own message names the key: " + e.getMessage());
    }

    @Test
    void controlOnUnknownSessionIs404() {
        try (ShepherdServer server = ShepherdServer.builder().inMemory().build()) {
            ShepherdException e = assertThrows(ShepherdException.class, () -> server.expireSession(0x1234L));
            assertEquals(404, e.status(), e.getMessage());
        }
    }
}
