//! The counts of one run: operations, faults by kind, hand-offs, `lost()` reasons and
//! violations, counted as the run goes ([`Counters`]) and printed at its end ([`Report`]).
//!
//! Invariant: counters only grow, with relaxed atomics: they are statistics, never used to
//! decide anything during the run.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use shepherd_recipes::LostReason;

use super::checker::Kind;
use super::driver::FaultKind;
use super::family::FAMILIES;

/// One counter.
#[derive(Debug, Default)]
pub struct Count(AtomicU64);

impl Clone for Count {
    /// A copy of the value now.
    fn clone(&self) -> Count {
        Count(AtomicU64::new(self.get()))
    }
}

impl Count {
    /// Adds one.
    pub fn inc(&self) {
        self.0.fetch_add(1, Relaxed);
    }

    /// The value now.
    pub fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

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
    /// Faults carried out, by kind.
    pub faults: [Count; FaultKind::ALL.len()],
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

/// The end of a run, ready to print.
#[derive(Debug)]
pub struct Report {
    /// The seed.
    pub seed: u64,
    /// How long the chaos ran (tokio's clock: virtual under a paused clock).
    pub ran_for: Duration,
    /// The counts.
    pub counters: Counters,
    /// Violations by kind.
    pub violations: BTreeMap<Kind, u64>,
    /// The first violations' messages.
    pub details: Vec<String>,
}

impl Report {
    /// All violations.
    pub fn violation_count(&self) -> u64 {
        self.violations.values().sum()
    }

    /// Hand-offs: every acquisition.
    pub fn hand_offs(&self) -> u64 {
        self.counters.acquired.iter().map(Count::get).sum()
    }

    /// Operations: acquire attempts, resource writes and reads, releases.
    pub fn operations(&self) -> u64 {
        let c = &self.counters;
        c.acquire_attempts.get()
            + c.writes_accepted.get()
            + c.writes_refused_lost.get()
            + c.writes_refused_stale.get()
            + c.writes_unknown.get()
            + c.reads_validated.get()
            + c.releases.get()
    }

    /// Faults carried out, all kinds.
    pub fn faults(&self) -> u64 {
        self.counters.faults.iter().map(Count::get).sum()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.counters;
        writeln!(f, "seed {} ran {:.1?}", self.seed, self.ran_for)?;
        writeln!(f, "operations {}", self.operations())?;
        writeln!(
            f,
            "  acquire: attempts {} acquired {} (readers {}) timed-out {} failed {}",
            c.acquire_attempts.get(),
            self.hand_offs(),
            c.acquired_read.get(),
            c.acquire_timeouts.get(),
            c.acquire_errors.get()
        )?;
        writeln!(
            f,
            "  resource: writes accepted {} refused-lock-gone {} refused-stale-token {} unknown {}; reads validated {}; late writes after a pause {}",
            c.writes_accepted.get(),
            c.writes_refused_lost.get(),
            c.writes_refused_stale.get(),
            c.writes_unknown.get(),
            c.reads_validated.get(),
            c.late_writes.get()
        )?;
        writeln!(
            f,
            "  releases {}; sessions replaced {}",
            c.releases.get(),
            c.sessions_replaced.get()
        )?;
        write!(f, "hand-offs {} by lock:", self.hand_offs())?;
        for (family, n) in FAMILIES.iter().zip(&c.acquired) {
            write!(f, " {} {}", family.name, n.get())?;
        }
        writeln!(f)?;
        write!(f, "faults {} by kind:", self.faults())?;
        for (kind, n) in FaultKind::ALL.iter().zip(&c.faults) {
            write!(f, " {} {}", kind.as_str(), n.get())?;
        }
        writeln!(f)?;
        let reasons = [
            "session-expired",
            "session-closed",
            "disconnected",
            "node-deleted",
            "released",
        ];
        write!(f, "lost() while holding:")?;
        for (name, n) in reasons.iter().zip(&c.lost) {
            write!(f, " {name} {}", n.get())?;
        }
        writeln!(f)?;
        write!(f, "violations {}", self.violation_count())?;
        for kind in Kind::ALL {
            write!(
                f,
                " {} {}",
                kind.as_str(),
                self.violations.get(&kind).copied().unwrap_or(0)
            )?;
        }
        writeln!(f)?;
        for detail in &self.details {
            writeln!(f, "  {detail}")?;
        }
        Ok(())
    }
}
