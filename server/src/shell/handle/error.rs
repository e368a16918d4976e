//! [`ControlError`]: why a test control, of the server or of its members, could not apply.

use crate::core::SessionId;

/// Why a test control could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    /// The server does not know this session (never existed, closed or expired).
    #[error("no session 0x{0:x}")]
    UnknownSession(SessionId),
    /// The session exists but has no connection right now.
    #[error("session 0x{0:x} has no connection")]
    NotConnected(SessionId),
    /// No node at this path.
    #[error("no node {0}")]
    NoNode(String),
    /// The server has no member with this id (ids are `1..=n`).
    #[error("no member {0}")]
    UnknownMember(u64),
    /// The member could not be stopped or started: its port is taken, or the server is shut
    /// down or its log failed. The text says which.
    #[error("member {0}: {1}")]
    MemberUnavailable(u64, String),
}
