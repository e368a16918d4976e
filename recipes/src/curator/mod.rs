//! Curator's lock family, node for node: [`Mutex`] (`InterProcessMutex`),
//! [`SemaphoreMutex`] (`InterProcessSemaphoreMutex`), [`ReadWriteLock`]
//! (`InterProcessReadWriteLock`) and [`MultiLock`] (`InterProcessMultiLock`).
//!
//! Curator's names are "protected": `_c_<uuid>-<lock name><seq>`, a fresh random uuid per
//! acquisition, so that after a connection loss during the create the node is found among the
//! children by its prefix. Curator's reentrancy is per thread; here it is per lock *value*
//! (the owner): acquiring again through the same value while it holds the lock returns another
//! guard on the same node and counts one more hold. Tasks that must exclude each other use
//! separate values (which are cheap); tasks that may re-enter share one.
//!
//! Invariants of the reentrancy bookkeeping (`Reentrant`): it only remembers the hold weakly,
//! so the node is released when the last guard goes, whatever the owner does; acquisitions
//! through one owner are serialized, so one owner never has two nodes of one kind in line at
//! once; a lost hold is never re-entered.

mod multi_lock;
mod mutex;
mod read_write_lock;
mod semaphore_mutex;

pub use multi_lock::{MultiGuard, MultiLock};
pub use mutex::Mutex;
pub use read_write_lock::ReadWriteLock;
pub use semaphore_mutex::SemaphoreMutex;

use std::future::Future;
use std::sync::Weak;

use tokio::time::timeout_at;

use crate::contend::Wait;
use crate::error::Result;
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
