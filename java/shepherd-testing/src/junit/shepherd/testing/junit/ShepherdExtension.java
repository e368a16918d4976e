package shepherd.testing.junit;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.util.Arrays;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import shepherd.testing.ShepherdServer;
import shepherd.testing.ShepherdServerBuilder;

/**
 * JUnit 5 support for {@link ShepherdServer}: a field or a parameter of that type is given a
 * running server before the test and the server is closed after it.
 *
 * <ul>
 *   <li>a static field: one server for the class, started before {@code @BeforeAll};
 *   <li>an instance field, or a parameter of a test, {@code @BeforeEach} or {@code @AfterEach}
 *       method: one server per test method, unless {@link ShepherdConfig#lifecycle} says
 *       {@code PER_CLASS};
 *   <li>a parameter of a constructor or {@code @BeforeAll} method: one server for the class.
 * </ul>
 *
 * <p>Invariant: every server lives in the {@link ExtensionContext.Store} of the context it
 * belongs to (the test method's or the class's), so JUnit closes it when that context ends,
 * whether the test passed, failed or was aborted. Within one context, a field and a parameter
 * with the same {@link ShepherdConfig} are the same server.
 */
public final class ShepherdExtension implements BeforeAllCallback, BeforeEachCallback, ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(ShepherdExtension.class);

    @Override
    public void beforeAll(ExtensionContext context) throws IllegalAccessException {
        for (Field field : fields(context.getRequiredTestClass())) {
            if (Modifier.isStatic(field.getModifiers())) {
                inject(field, null, server(context, field.getAnnotation(ShepherdConfig.class), true));
            }
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) throws IllegalAccessException {
        Object instance = context.getRequiredTestInstance();
        for (Field field : fields(instance.getClass())) {
            if (!Modifier.isStatic(field.getModifiers())) {
                inject(field, instance, server(context, field.getAnnotation(ShepherdConfig.class), false));
            }
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == ShepherdServer.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Parameter p = parameter.getParameter();
        // A constructor's or @BeforeAll method's parameter is resolved in the class's context,
        // where there is no test method: it can only live for the class.
        boolean classLevel = context.getTestMethod().isEmpty();
        try {
            return server(context, p.getAnnotation(ShepherdConfig.class), classLevel);
        } catch (RuntimeException e) {
            throw new ParameterResolutionException("cannot start a ShepherdServer for " + p, e);
        }
    }

    private static ShepherdServer server(ExtensionContext context, ShepherdConfig config, boolean classLevel) {
        boolean perClass = classLevel
                || (config != null && config.lifecycle() == ShepherdConfig.Lifecycle.PER_CLASS);
        ExtensionContext owner = perClass ? classContext(context) : context;
        String key = key(config, perClass);
        return owner.getStore(NAMESPACE)
                .getOrComputeIfAbsent(key, k -> new Resource(start(config)), Resource.class)
                .server;
    }

    /** The nearest enclosing context that belongs to a class rather than to a method. */
    private static ExtensionContext classContext(ExtensionContext context) {
        ExtensionContext at = context;
        for (int depth = 0; depth < 64 && at.getTestMethod().isPresent(); depth++) {
            at = at.getParent().orElse(at);
        }
        return at;
    }

    private static String key(ShepherdConfig config, boolean perClass) {
        if (config == null) {
            return "members=1 settings=[] perClass=" + perClass;
        }
        return "members=" + config.members() + " settings=" + Arrays.toString(config.settings())
                + " perClass=" + perClass;
    }

    private static ShepherdServer start(ShepherdConfig config) {
        ShepherdServerBuilder builder = ShepherdServer.builder();
        if (config != null) {
            builder.members(config.members());
            for (String setting : config.settings()) {
                int eq = setting.indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException("a @ShepherdConfig setting is not key=value: " + setting);
                }
                builder.setting(setting.substring(0, eq), setting.substring(eq + 1));
            }
        }
        return builder.build();
    }

    private static Iterable<Field> fields(Class<?> type) {
        java.util.List<Field> fields = new java.util.ArrayList<>();
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                if (field.getType() == ShepherdServer.class) {
                    fields.add(field);
                }
            }
        }
        return fields;
    }

    private static void inject(Field field, Object instance, ShepherdServer server) throws IllegalAccessException {
        field.setAccessible(true);
        field.set(instance, server);
    }

    /** A server in a store: JUnit closes it when the store's context ends. */
    private static final class Resource implements ExtensionContext.Store.CloseableResource {
        final ShepherdServer server;

        Resource(ShepherdServer server) {
            this.server = server;
        }

        @Override
        public void close() {
            server.close();
        }
    }
}
