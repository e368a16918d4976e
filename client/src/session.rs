//! The session's state as callers see it, published through a `tokio::sync::watch` channel.
//!
//! Invariants: the connection task is the only writer. States move Connected ⇄ Disconnected any
//! number of times, then at most once into a terminal state (Expired, Closed, AuthFailed), which
//! is never left. The session id never changes over a client's life: a session that cannot be
//! resumed is Expired, not replaced.

use std::time::Duration;

use shepherd_protocol::KeeperState;

/// Where the session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionState {
    /// Connected to a server; requests flow.
    Connected,
    /// The connection dropped; the session is suspended while the client reconnects with the
    /// same id and password. Requests issued now wait for the next attempt.
    Disconnected,
    /// The server said the session no longer exists. Terminal.
    Expired,
    /// Closed by this client. Terminal.
    Closed,
    /// The server refused a credential. Terminal.
    AuthFailed,
}

impl SessionState {
    /// Whether the state can never change again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            SessionState::Expired | SessionState::Closed | SessionState::AuthFailed
        )
    }

    /// The `KeeperState` a Java client would report, for session events on watchers.
    pub fn keeper_state(self) -> KeeperState {
        match self {
            SessionState::Connected => KeeperState::SyncConnected,
            SessionState::Disconnected => KeeperState::Disconnected,
            SessionState::Expired => KeeperState::Expired,
            SessionState::Closed => KeeperState::Closed,
            SessionState::AuthFailed => KeeperState::AuthFailed,
        }
    }
}

/// A snapshot of the session, as published on [`crate::Client::status_watch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStatus {
    /// The state.
    pub state: SessionState,
    /// The `host:port` currently connected to (`None` unless Connected).
    pub host: Option<String>,
    /// The session id (fixed for the client's life).
    pub session_id: i64,
    /// The timeout the server granted at the last handshake.
    pub timeout: Duration,
    /// Whether the server said it is read-only.
    pub read_only: bool,
}
