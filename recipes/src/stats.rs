//! [`LockStats`]: a few counters per lock (or per group of locks sharing one), for tests and
//! for comparing the herd and predecessor strategies.
//!
//! Invariants: counters only grow, except `waiting`, a gauge of the acquisitions blocked on a
//! watch right now (it returns to its old value when such a wait ends, by wake-up, timeout or
//! cancellation). Updates go through one `tokio::sync::watch` channel, so a reader can wait
//! for a condition instead of polling. The lost-lock monitor of a held lock is not counted:
//! only the contention traffic is.

use std::sync::Arc;

use tokio::sync::watch;

/// A copy of the counters at one moment.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct StatsSnapshot {
    /// getChildren calls made while contending (with or without a watch).
    pub get_children: u64,
    /// exists calls made while contending (predecessor watches, fixed-node watches).
    pub exists: u64,
    /// Times a contention watch fired and woke a waiter.
    pub wakeups: u64,
    /// Locks acquired.
    pub acquired: u64,
    /// Acquisitions blocked on a watch right now.
    pub waiting: u64,
}

/// Shared, observable counters. Create one with [`LockStats::new`] and hand it to several locks
/// (`with_stats`) to count a whole group; every lock otherwise has its own.
#[derive(Debug)]
pub struct LockStats {
    tx: watch::Sender<StatsSnapshot>,
}

impl LockStats {
    /// Fresh counters, all zero.
    pub fn new() -> Arc<LockStats> {
        Arc::new(LockStats {
            tx: watch::Sender::new(StatsSnapshot::default()),
        })
    }

    /// The counters now.
    pub fn snapshot(&self) -> StatsSnapshot {
        *self.tx.borrow()
    }

    /// Waits until `pred` holds for the counters and returns them. Cancellation safe.
    pub async fn wait_for(&self, mut pred: impl FnMut(&StatsSnapshot) -> bool) -> StatsSnapshot {
        let mut rx = self.tx.subscribe();
        // The sender lives in `self`, so the channel cannot close while we borrow it.
        *rx.wait_for(|s| pred(s))
            .await
            .expect("sender outlives borrow")
    }

    pub(crate) fn bump(&self, f: impl FnOnce(&mut StatsSnapshot)) {
        self.tx.send_modify(f);
    }

    /// Counts a blocked waiter until the returned token is dropped.
    pub(crate) fn waiting(self: &Arc<Self>) -> WaitingToken {
        self.bump(|s| s.waiting += 1);
        WaitingToken(self.clone())
    }
}

/// Decrements `waiting` when dropped.
pub(crate) struct WaitingToken(Arc<LockStats>);

impl Drop for WaitingToken {
    fn drop(&mut self) {
        self.0.bump(|s| s.waiting -= 1);
    }
}
