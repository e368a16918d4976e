//! The counts of one chaos run: operations, hand-offs and `lost()` reasons (the faults are
//! counted by the session nemesis).
//!
//! Invariant: counters only grow; they are statistics, never used to decide anything during
//! the run.

use shepherd_recipes::LostReason;

use crate::proof::count::Count;
use crate::proof::workload::mutex::family::FAMILIES;

/// Everything counted during a run.
#[derive(Debug, Default, Clone)]
pub struct Counters {
    /// Acquire calls.
    pub acquire_attempts: Count,
    /// Acquisitions by family: every one is a hand-off from the previous holder(s).
    pub acquired: [Count; FAMILIES.len()],
    /// Acquisitions by readers (included in `acquired`).
    pub acquired_read: Count,
    /// Acquisitions that ran out of their wait.
    pub acquire_timeouts: Count,
    /// Acquisitions that failed (the session ended, the contender node vanished…).
    pub acquire_errors: Count,
    /// Writes the resource accepted.
    pub writes_accepted: Count,
    /// Writes refused because the lock node was gone.
    pub writes_refused_lost: Count,
    /// Writes refused by the token compare-and-set.
    pub writes_refused_stale: Count,
    /// Writes whose outcome is unknown (connection loss) or that failed otherwise.
    pub writes_unknown: Count,
    /// Reads validated while holding a read half.
    pub reads_validated: Count,
    /// Holders that paused past their session timeout, then tried to write.
    pub late_writes: Count,
    /// Releases.
    pub releases: Count,
    /// `lost()` resolutions seen while holding, by reason.
    pub lost: [Count; 5],
    /// Sessions that ended and were replaced by a new client.
    pub sessions_replaced: Count,
}

impl Counters {
    /// Counts a `lost()` reason.
    pub fn lost(&self, reason: LostReason) {
        let i = match reason {
            LostReason::SessionExpired => 0,
            LostReason::SessionClosed => 1,
            LostReason::Disconnected => 2,
            LostReason::NodeDeleted => 3,
            LostReason::Released => 4,
        };
        self.lost[i].inc();
    }
}
