package shepherd.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;
import shepherd.testing.junit.ShepherdConfig;
import shepherd.testing.junit.ShepherdExtension;

/**
 * {@link ShepherdExtension}'s lifecycles, seen from outside: each fixture class below is run by
 * its own JUnit launcher, records the servers it was given and whether they were running, and
 * this test then checks which were the same, and that every one was closed when its scope ended.
 * (The fixtures' names do not match the console launcher's test class pattern, so they run
 * only from here.)
 */
class ExtensionLifecycleTest {
    static final List<ShepherdServer> SEEN = new CopyOnWriteArrayList<>();
    static final List<Boolean> RUNNING = new CopyOnWriteArrayList<>();

    @Test
    void perMethodServersAreFreshAndClosedAfterEachTest() {
        run(PerMethodFixture.class, 2);
        // Per test: the field, a plain parameter and the same-config parameter (which is the field's).
        assertEquals(6, SEEN.size());
        assertSame(SEEN.get(0), SEEN.get(2), "a parameter with the field's config is the field's server");
        assertNotSame(SEEN.get(0), SEEN.get(3), "each test method gets a new server");
        assertNotSame(SEEN.get(0), SEEN.get(1), "a differently configured parameter is its own server");
        assertEquals(3, SEEN.get(1).getPorts().size(), "the parameter's @ShepherdConfig(members = 3)");
        assertFalse(RUNNING.contains(Boolean.FALSE), "every server ran during its test");
        for (ShepherdServer server : SEEN) {
            assertFalse(server.isRunning(), "closed after its test: " + server);
        }
    }

    @Test
    void perClassServersAreSharedAndClosedAfterTheClass() {
        run(PerClassFixture.class, 2);
        // Per test: the static field and the PER_CLASS instance field.
        assertEquals(4, SEEN.size());
        assertSame(SEEN.get(0), SEEN.get(2), "the static field's server is the class's");
        assertSame(SEEN.get(1), SEEN.get(3), "the PER_CLASS field's server is the class's");
        assertFalse(RUNNING.contains(Boolean.FALSE), "every server ran during the tests");
        for (ShepherdServer server : SEEN) {
            assertFalse(server.isRunning(), "closed after the class: " + server);
        }
    }

    private static void run(Class<?> fixture, int tests) {
        SEEN.clear();
        RUNNING.clear();
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        LauncherFactory.create().execute(
                LauncherDiscoveryRequestBuilder.request().selectors(selectClass(fixture)).build(), listener);
        TestExecutionSummary summary = listener.getSummary();
        for (TestExecutionSummary.Failure failure : summary.getFailures()) {
            throw new AssertionError(fixture.getSimpleName() + " failed: " + failure.getTestIdentifier()
                    .getDisplayName(), failure.getException());
        }
        assertEquals(tests, summary.getTestsSucceededCount(), fixture.getSimpleName() + "'s tests");
    }

    private static void record(ShepherdServer... servers) {
        for (ShepherdServer server : servers) {
            assertNotNull(server);
            SEEN.add(server);
            RUNNING.add(server.isRunning() && server.getConnectString() != null);
        }
    }

    @ExtendWith(ShepherdExtension.class)
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    static class PerMethodFixture {
        ShepherdServer server;

        @Test
        @Order(1)
        void first(@ShepherdConfig(members = 3) ShepherdServer ensemble, ShepherdServer same) {
            record(server, ensemble, same);
        }

        @Test
        @Order(2)
        void second(@ShepherdConfig(members = 3) ShepherdServer ensemble, ShepherdServer same) {
            record(server, ensemble, same);
        }
    }

    @ExtendWith(ShepherdExtension.class)
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    static class PerClassFixture {
        static ShepherdServer shared;

        @ShepherdConfig(lifecycle = ShepherdConfig.Lifecycle.PER_CLASS, settings = "maxClientCnxns=10")
        ShepherdServer perClass;

        @Test
        @Order(1)
        void first() {
            record(shared, perClass);
        }

        @Test
        @Order(2)
        void second() {
            record(shared, perClass);
            assertTrue(shared != perClass, "differently configured fields are different servers");
        }
    }
}
