package shepherd.testing;

/**
 * Everything that can go wrong between a test and its {@code shepherd serve}: a binary that
 * cannot be found or started (the message names the reason, the command line that was run and
 * the tail of the process's stderr), or a test control the server refused (the message holds the
 * HTTP status and the server's {@code {"error": ...}} answer).
 *
 * <p>It is unchecked so that a test can start a server in a field initialiser; Curator's
 * {@code TestingServer} throws {@code Exception} for the same failures.
 */
public final class ShepherdException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The HTTP status of a refused control call, or 0 for a failure to launch. */
    private final int status;

    ShepherdException(String message) {
        this(message, 0, null);
    }

    ShepherdException(String message, Throwable cause) {
        this(message, 0, cause);
    }

    ShepherdException(String message, int status, Throwable cause) {
        super(message, cause);
        this.status = status;
    }

    /**
     * The HTTP status the test controls answered (404 for an unknown session or member, 409
     * for a conflict such as a session with no connection), or 0 if the failure was not an
     * answer from the controls.
     *
     * @return the status, or 0
     */
    public int status() {
        return status;
    }
}
