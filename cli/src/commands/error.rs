//! [`CliError`]: every way a client command fails, the line it prints and its exit code.
//!
//! Invariant: the exit code says whose fault it is: 1 for what ZooKeeper (or the way to it)
//! answered, printed by its Java name with the path concerned (`NoNode: /a/b`), 2 for what the
//! user gave us (flags, an ACL, a dump line). A closed stdout (`shepherd tree / | head`) is no
//! failure: the command stops quietly.

use std::fmt;
use std::process::ExitCode;

use shepherd_client::Error as ClientError;

/// Why a client command stopped.
#[derive(Debug)]
pub enum CliError {
    /// ZooKeeper refused the request on `path` (or the session or connection failed there).
    Keeper {
        /// What went wrong, as the client reported it.
        error: ClientError,
        /// The path the request named (empty for session-wide failures).
        path: String,
    },
    /// Something the user gave is wrong: exit code 2.
    Usage(String),
    /// A walk showed everything it could read, but ZooKeeper refused some nodes: exit code 1.
    Partial {
        /// How many nodes could not be read.
        unreadable: usize,
        /// The first refusal, as it would print alone (`NoAuth: /sec`).
        first: String,
    },
    /// Writing the output failed (other than a closed pipe).
    Output(std::io::Error),
    /// stdout was closed by its reader: stop without a word.
    ClosedOutput,
}

impl CliError {
    /// The exit code of the command.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            CliError::Keeper { .. } | CliError::Partial { .. } | CliError::Output(_) => {
                ExitCode::from(1)
            }
            CliError::Usage(_) => ExitCode::from(2),
            CliError::ClosedOutput => ExitCode::SUCCESS,
        }
    }
}

/// The Java name of what the client reported: the `KeeperException.Code` name for server
/// outcomes, and the name the Java client would give the others.
pub fn java_name(error: &ClientError) -> &'static str {
    match error {
        ClientError::Keeper(code) | ClientError::MultiFailed { code, .. } => code.name(),
        ClientError::ConnectionLoss | ClientError::Io(_) | ClientError::Protocol(_) => {
            "ConnectionLoss"
        }
        ClientError::SessionExpired => "SessionExpired",
        ClientError::AuthFailed => "AuthFailed",
        // The Java client fails calls on a closed handle with a connection loss.
        ClientError::Closed => "ConnectionLoss",
        ClientError::InvalidArgument(_) => "BadArguments",
        _ => "SystemError",
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Keeper { error, path } => {
                write!(f, "{}", java_name(error))?;
                if !path.is_empty() {
                    write!(f, ": {path}")?;
                }
                // The server's outcomes say it all; a local failure has more to tell.
                if !matches!(
                    error,
                    ClientError::Keeper(_) | ClientError::MultiFailed { .. }
                ) {
                    write!(f, " ({error})")?;
                }
                Ok(())
            }
            CliError::Usage(message) => write!(f, "{message}"),
            CliError::Partial { unreadable, first } => {
                let nodes = if *unreadable == 1 { "node" } else { "nodes" };
                write!(f, "{unreadable} {nodes} could not be read (first: {first})")
            }
            CliError::Output(error) => write!(f, "cannot write the output: {error}"),
            CliError::ClosedOutput => Ok(()),
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(error: std::io::Error) -> Self {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            CliError::ClosedOutput
        } else {
            CliError::Output(error)
        }
    }
}

/// Attaches the path a request named to a client error.
pub trait AtPath<T> {
    /// The result, with a client error turned into [`CliError::Keeper`] at `path`.
    fn at(self, path: &str) -> Result<T, CliError>;
}

impl<T> AtPath<T> for Result<T, ClientError> {
    fn at(self, path: &str) -> Result<T, CliError> {
        self.map_err(|error| match error {
            // A malformed path is the user's, not ZooKeeper's.
            ClientError::InvalidArgument(message) if path.is_empty() => CliError::Usage(message),
            ClientError::InvalidArgument(message) => CliError::Usage(format!("{path}: {message}")),
            error => CliError::Keeper {
                error,
                path: path.to_owned(),
            },
        })
    }
}
