//! [`Guard`]: what every held lock offers, whatever its type: fencing, loss detection,
//! guarded writes and release.
//!
//! Invariants every implementation keeps: the lock nodes are deleted exactly once, when the
//! guard is released or dropped (never a node of the same name created later by someone
//! else); a lost lock stays lost (a new acquisition makes a new guard); a guard's own release
//! never reports the lock as lost.

use std::fmt::Debug;
use std::future::Future;

use shepherd_client::{MultiBuilder, WriteResult};

use crate::error::Result;
use crate::lost::LostReason;

/// Proof of holding a lock: one lock node of this session ([`LockGuard`](crate::LockGuard)),
/// or several ([`MultiGuard`](crate::MultiGuard)).
///
/// * [`fencing_token`](Guard::fencing_token): the lock node's creation zxid. ZooKeeper's
///   zxids only grow, and each holder creates its node after the previous holder's, so every
///   later holder of the same lock gets a larger token; hand it to the resource you protect
///   and let it refuse smaller ones.
/// * [`lost`](Guard::lost): resolves once the lock can no longer be trusted.
/// * [`write`](Guard::write): ZooKeeper writes that apply only while the lock node exists.
/// * [`release`](Guard::release), or drop: deletes the node. Dropping spawns the delete on
///   the tokio runtime the lock was acquired on and returns at once; until that task has run,
///   other contenders still wait. If the runtime is shut down first, the node goes with the
///   session.
pub trait Guard: Debug + Send + Sync + Sized + 'static {
    /// The fencing token: one zxid, or one per lock node.
    type Token: Clone + Ord + Debug + Send + Sync + 'static;

    /// The lock node's creation zxid (one per node, in acquisition order, for a guard on
    /// several).
    fn fencing_token(&self) -> Self::Token;

    /// The lock nodes' paths (chroot stripped), in acquisition order.
    fn paths(&self) -> Vec<&str>;

    /// Why the lock was lost, if it was.
    fn lost_reason(&self) -> Option<LostReason>;

    /// Resolves once the lock can no longer be trusted: the session expired or was closed, the
    /// connection stayed down for the negotiated session timeout, or a lock node was deleted.
    /// Independent of the guard's lifetime and cancellation safe; resolves with
    /// [`LostReason::Released`] if the guard is released first.
    fn lost(&self) -> impl Future<Output = LostReason> + Send + 'static;

    /// Runs the writes `build` adds as one multi, after a `check` that each lock node exists:
    /// either the lock is still held and every write applies, or nothing does. Returns the
    /// results of the caller's ops only. `build` runs at once, before the first poll.
    ///
    /// # Errors
    /// [`Error::LockLost`](crate::Error::LockLost) when a lock node is gone; otherwise the
    /// client's error, where a [`shepherd_client::Error::MultiFailed`] index counts the
    /// caller's ops only. After [`shepherd_client::Error::ConnectionLoss`] the outcome is
    /// unknown (not retried).
    ///
    /// A fixed-name lock node ([`crate::EphemeralLock`]) that was deleted and re-created by
    /// another client passes the check: watch [`lost`](Guard::lost) as well.
    fn write<F>(&self, build: F) -> impl Future<Output = Result<Vec<WriteResult>>> + Send
    where
        F: for<'a> FnOnce(MultiBuilder<'a>) -> MultiBuilder<'a>;

    /// Releases the lock: deletes its nodes (those this is the last handle on) and waits for
    /// the deletes. Connection loss is handled (a node is re-read, never deleted twice); after
    /// the session ended there is nothing to delete, so releasing a lost lock is harmless.
    ///
    /// # Errors
    /// A client error other than connection loss or the end of the session (say `NoAuth`).
    ///
    /// # Cancellation
    /// If dropped before completing, the deletes continue in the background as for a dropped
    /// guard.
    fn release(self) -> impl Future<Output = Result<()>> + Send;
}
