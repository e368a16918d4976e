//! [`Lock`]: the one acquire API of every lock here, and [`Wait`], how long an acquisition may
//! wait for its turn.
//!
//! Each lock type implements a single method, [`Lock::acquire_with`], taking a [`Wait`]; the
//! trait derives every other form from it, so the forms mean the same thing on every type.
//!
//! Invariant kept by every implementation: no acquisition leaves a node of ours behind when it
//! gives up. On timeout (and after a non-blocking try) our node is deleted before the call
//! returns; when the acquire future is dropped early, the node is deleted in the background.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::error::Result;
use crate::guard::Guard;
use crate::stats::LockStats;

/// How long an acquisition may wait for its turn. Creating our node is never bounded by it:
/// like any request, the create waits for a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Look once: if the lock is not ours at once, give up (our node, if any, deleted).
    No,
    /// Until this instant; then give up, our node deleted before returning.
    Until(Instant),
    /// Until the lock is ours, or an error.
    Forever,
}

impl Wait {
    /// `Until(now + timeout)`, or [`Wait::No`] for a zero timeout.
    pub fn timeout(timeout: Duration) -> Wait {
        if timeout.is_zero() {
            Wait::No
        } else {
            Wait::Until(Instant::now() + timeout)
        }
    }
}

/// A distributed lock: every type of this crate, each half of a read/write lock, and
/// [`AnyLock`](crate::AnyLock), acquired the same way.
///
/// * [`try_acquire`](Lock::try_acquire): take it only if that needs no waiting.
/// * [`acquire`](Lock::acquire): wait as long as it takes.
/// * [`acquire_timeout`](Lock::acquire_timeout), [`acquire_until`](Lock::acquire_until):
///   wait at most that long; `Ok(None)` if it did not come in time.
///
/// # Errors
/// Client errors other than connection loss (which the recipes resolve: our node is looked up
/// by what only we could have written before anything is retried); the session ending while
/// waiting; [`Error::LockLost`](crate::Error::LockLost) if our contender node is deleted by
/// someone else while we wait. Some types add their own (say
/// [`Error::UpgradeNotSupported`](crate::Error::UpgradeNotSupported)).
///
/// # Cancellation
/// Dropping any acquire future is safe: a node it may have created is deleted in the
/// background, on the tokio runtime it ran on (or with the session, if that runtime is gone).
pub trait Lock: Send + Sync {
    /// What an acquisition yields: the proof of holding the lock.
    type Guard: Guard;

    /// Takes the lock, waiting for the turn as `wait` allows: `Ok(None)` when it ran out (our
    /// node is deleted by then). The one method each lock type implements.
    fn acquire_with(&self, wait: Wait) -> impl Future<Output = Result<Option<Self::Guard>>> + Send;

    /// The counters this lock counts into (its own, or those given with `with_stats`).
    fn stats(&self) -> &Arc<LockStats>;

    /// Where the lock lives: the lock node itself for a fixed-node lock, else the folder its
    /// contenders queue in.
    fn path(&self) -> &str;

    /// Takes the lock if that needs no waiting: `Ok(None)` if someone holds it (or is ahead
    /// of us in line). A sequential lock still creates its node to look, and deletes it
    /// before returning `Ok(None)`.
    fn try_acquire(&self) -> impl Future<Output = Result<Option<Self::Guard>>> + Send {
        self.acquire_with(Wait::No)
    }

    /// Takes the lock, waiting as long as it takes (in line for the sequential locks: first
    /// come, first served).
    fn acquire(&self) -> impl Future<Output = Result<Self::Guard>> + Send {
        async move {
            let guard = self.acquire_with(Wait::Forever).await?;
            Ok(guard.expect("an unbounded wait ends only with the lock or an error"))
        }
    }

    /// Takes the lock, waiting at most `timeout` for the turn: `Ok(None)` if it did not come
    /// in time. A zero timeout is [`try_acquire`](Lock::try_acquire).
    fn acquire_timeout(
        &self,
        timeout: Duration,
    ) -> impl Future<Output = Result<Option<Self::Guard>>> + Send {
        async move { self.acquire_with(Wait::timeout(timeout)).await }
    }

    /// Takes the lock, waiting for the turn until `deadline` at most: `Ok(None)` if it did
    /// not come in time.
    fn acquire_until(
        &self,
        deadline: Instant,
    ) -> impl Future<Output = Result<Option<Self::Guard>>> + Send {
        self.acquire_with(Wait::Until(deadline))
    }
}
