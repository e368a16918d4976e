package shepherd.testing.junit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * How {@link ShepherdExtension} builds the {@code ShepherdServer} of a field or parameter, and
 * how long it lives. Without this annotation a server is a single member, started before each
 * test method and closed after it (a static field: once for the class).
 *
 * <pre>{@code
 * @ExtendWith(ShepherdExtension.class)
 * class LockTest {
 *     @ShepherdConfig(members = 3, lifecycle = ShepherdConfig.Lifecycle.PER_CLASS)
 *     ShepherdServer ensemble;
 *
 *     @Test
 *     void holds(ShepherdServer fresh) { ... }
 * }
 * }</pre>
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.FIELD, ElementType.PARAMETER})
public @interface ShepherdConfig {
    /**
     * The number of ensemble members, {@code 1..n}.
     *
     * @return the member count
     */
    int members() default 1;

    /**
     * zoo.cfg settings, each {@code "key=value"} ({@code shepherd serve --set}).
     *
     * @return the settings
     */
    String[] settings() default {};

    /**
     * Whether the server lives for one test method or for the whole class.
     *
     * @return the lifecycle
     */
    Lifecycle lifecycle() default Lifecycle.PER_METHOD;

    /** How long a server lives. */
    enum Lifecycle {
        /** Started before each test method, closed after it. */
        PER_METHOD,
        /** Started before the first test of the class that uses it, closed after the class. */
        PER_CLASS
    }
}
