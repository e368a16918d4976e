//! `Reentrant`: an owner's current hold on one lock node, so that acquiring again through the
//! same owner (one [`super::Mutex`] value, one half of one [`super::ReadWriteLock`] value)
//! re-enters it instead of queueing behind itself.
//!
//! Invariants: it only remembers the hold weakly, so the node is released when the last guard
//! goes, whatever the owner does; acquisitions through one owner are serialized, so one owner
//! never has two nodes of one kind in line at once; a lost hold is never re-entered.

use std::future::Future;
use std::sync::Weak;

use tokio::time::timeout_at;

use crate::error::Result;
use crate::guard::Guard;
use crate::lock::Wait;
use crate::lock_guard::{Held, LockGuard};

/// An owner's current hold on one lock node, for reentrancy.
#[derive(Debug, Default)]
pub(crate) struct Reentrant {
    current: parking_lot::Mutex<Weak<Held>>,
    acquiring: tokio::sync::Mutex<()>,
}

impl Reentrant {
    /// Another guard on the current hold, if there is one and it is not lost.
    pub(crate) fn current(&self) -> Option<LockGuard> {
        let guard = LockGuard::from_weak(&self.current.lock())?;
        guard.lost_reason().is_none().then_some(guard)
    }

    /// Live guards on the current hold.
    pub(crate) fn hold_count(&self) -> usize {
        self.current.lock().strong_count()
    }

    /// Re-enters the current hold, or runs `fresh` (one at a time per owner) to make one.
    pub(crate) async fn acquire<F, Fut>(&self, wait: Wait, fresh: F) -> Result<Option<LockGuard>>
    where
        F: FnOnce(Wait) -> Fut,
        Fut: Future<Output = Result<Option<LockGuard>>>,
    {
        if let Some(guard) = self.current() {
            return Ok(Some(guard));
        }
        let _turn = match wait {
            Wait::Forever => self.acquiring.lock().await,
            Wait::Until(at) => match timeout_at(at, self.acquiring.lock()).await {
                Ok(turn) => turn,
                Err(_) => return Ok(None),
            },
            Wait::No => match self.acquiring.try_lock() {
                Ok(turn) => turn,
                Err(_) => return Ok(None),
            },
        };
        if let Some(guard) = self.current() {
            return Ok(Some(guard));
        }
        let got = fresh(wait).await?;
        if let Some(guard) = &got {
            *self.current.lock() = guard.weak();
        }
        Ok(got)
    }
}
