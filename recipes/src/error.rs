//! The crate's error type.
//!
//! Invariant: client errors pass through unchanged inside [`Error::Client`], so callers can
//! still branch on [`shepherd_client::Error::is_session_ended`] and friends; the other variants
//! are outcomes only a lock recipe can observe.

use crate::lost::LostReason;

/// Everything a lock operation can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A client call failed (connection loss is retried inside the recipes; what arrives here
    /// is usually the end of the session, a refused ACL or a bad path).
    #[error(transparent)]
    Client(#[from] shepherd_client::Error),
    /// The lock node is gone (or never appeared): a guarded write found no lock node, or our
    /// own contender node vanished while waiting (deleted by someone else, or the session
    /// ended).
    #[error("the lock is no longer held ({0:?})")]
    LockLost(LostReason),
    /// Taking the write half of a [`crate::ReadWriteLock`] while holding only its read half
    /// would wait for ourselves forever (Curator blocks; this crate refuses).
    #[error("upgrading a read lock to a write lock would deadlock")]
    UpgradeNotSupported,
}

/// Shorthand for this crate's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
