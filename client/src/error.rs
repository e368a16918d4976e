//! The one error type of the crate, and how ZooKeeper outcomes map onto it.
//!
//! Invariant: a server outcome (a non-zero `err` in a reply header, or a failed op inside a
//! multi) is always [`Error::Keeper`] or [`Error::MultiFailed`], carrying the code exactly as
//! the server sent it; every other variant comes from this side of the socket (the connection,
//! the session's state, a broken frame, or a misuse of the API).

use shepherd_protocol::{DecodeError, ErrorCode};
use thiserror::Error;

/// Everything a call can fail with.
///
/// See the crate documentation for why ZooKeeper outcomes such as `NoNode` are variants here
/// rather than a nested `Result`.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with this code (`NoNode`, `NodeExists`, `BadVersion`, …).
    #[error("ZooKeeper answered {}", .0.name())]
    Keeper(ErrorCode),
    /// A multi was rolled back: the op at `index` failed with `code`, nothing was applied.
    #[error("multi op {index} failed with {}", .code.name())]
    MultiFailed {
        /// Position of the first failing op.
        index: usize,
        /// Its code.
        code: ErrorCode,
    },
    /// The connection dropped while the request was queued or in flight: it may or may not have
    /// been applied. Never retried by the client.
    #[error("connection lost; the outcome of the request is unknown")]
    ConnectionLoss,
    /// The session has expired; it never comes back. Build a new client.
    #[error("session expired")]
    SessionExpired,
    /// An auth packet was refused; the client stopped, as the Java client does.
    #[error("authentication failed")]
    AuthFailed,
    /// The client was closed (by [`crate::Client::close`] or by dropping every handle).
    #[error("client closed")]
    Closed,
    /// The server sent something this client cannot make sense of. The connection was dropped.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// A socket error while connecting (also a connect timeout, as `TimedOut`).
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The call was rejected before anything was sent: a bad path, option or connect string.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

impl From<DecodeError> for Error {
    fn from(e: DecodeError) -> Self {
        Error::Protocol(e.to_string())
    }
}

impl Error {
    /// The server's code, when the server gave one ([`Error::Keeper`] and
    /// [`Error::MultiFailed`]).
    pub fn keeper_code(&self) -> Option<ErrorCode> {
        match self {
            Error::Keeper(code) | Error::MultiFailed { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// Whether the server answered `NoNode`.
    pub fn is_no_node(&self) -> bool {
        self.keeper_code() == Some(ErrorCode::NoNode)
    }

    /// Whether the server answered `NodeExists`.
    pub fn is_node_exists(&self) -> bool {
        self.keeper_code() == Some(ErrorCode::NodeExists)
    }

    /// Whether the server answered `BadVersion`.
    pub fn is_bad_version(&self) -> bool {
        self.keeper_code() == Some(ErrorCode::BadVersion)
    }

    /// Whether the server answered `NotEmpty`.
    pub fn is_not_empty(&self) -> bool {
        self.keeper_code() == Some(ErrorCode::NotEmpty)
    }

    /// Whether the server answered `NoAuth`.
    pub fn is_no_auth(&self) -> bool {
        self.keeper_code() == Some(ErrorCode::NoAuth)
    }

    /// Whether the outcome is unknown because the connection dropped.
    pub fn is_connection_loss(&self) -> bool {
        matches!(self, Error::ConnectionLoss)
    }

    /// Whether the session is gone for good (expired, closed or refused auth): no later call on
    /// this client can succeed.
    pub fn is_session_ended(&self) -> bool {
        matches!(
            self,
            Error::SessionExpired | Error::Closed | Error::AuthFailed
        )
    }

    /// Maps a raw reply code to an error. Unknown codes are protocol errors.
    pub(crate) fn from_code(code: i32) -> Error {
        match ErrorCode::try_from(code) {
            Ok(code) => Error::Keeper(code),
            Err(_) => Error::Protocol(format!("unknown error code {code}")),
        }
    }

    /// A fresh copy of the error that fails a waiting request: `ConnectionLoss` stays itself,
    /// anything else becomes its [`Error::session_level`] form. For fanning one cause out to
    /// many waiters.
    pub(crate) fn for_waiter(&self) -> Error {
        match self {
            Error::ConnectionLoss => Error::ConnectionLoss,
            other => other.session_level(),
        }
    }

    /// A fresh copy of a session-level error, for fanning one cause out to many waiters.
    pub(crate) fn session_level(&self) -> Error {
        match self {
            Error::SessionExpired => Error::SessionExpired,
            Error::AuthFailed => Error::AuthFailed,
            _ => Error::Closed,
        }
    }
}

/// Shorthand for this crate's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
