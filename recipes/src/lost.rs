//! [`LostReason`]: why a held lock can no longer be trusted.
//!
//! Its own module because both the guards (which report it) and the error type (which carries
//! it when a guarded write finds the lock node gone) need it; neither depends on the other.

/// Why a held lock can no longer be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LostReason {
    /// The session expired: the server has deleted the node.
    SessionExpired,
    /// The client was closed, or its credentials refused: the session is over.
    SessionClosed,
    /// Disconnected for a whole negotiated session timeout: the server has most likely
    /// expired the session, and another client may hold the lock.
    Disconnected,
    /// The lock node was deleted (by someone else) or replaced.
    NodeDeleted,
    /// The guard was released before the lock was lost (seen only by a pending
    /// [`Guard::lost`](crate::Guard::lost) future that outlived its guard).
    Released,
}
