//! The end of one chaos run, as printed: the counts, the faults by kind, both judges' findings
//! (the lock checker's violations, the history's verdict).

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use super::counters::Counters;
use crate::proof::Verdict;
use crate::proof::check::locks::Kind;
use crate::proof::count::Count;
use crate::proof::judge::line;
use crate::proof::nemesis::session::FaultKind;
use crate::proof::workload::mutex::family::FAMILIES;

/// The end of a run, ready to print.
#[derive(Debug)]
pub struct Report {
    /// The seed.
    pub seed: u64,
    /// How long the chaos ran (tokio's clock: virtual under a paused clock).
    pub ran_for: Duration,
    /// The counts.
    pub counters: Counters,
    /// Faults carried out, by kind (the order of [`FaultKind::ALL`]).
    pub faults: [Count; FaultKind::ALL.len()],
    /// Events in the history of the recorded workers' holds.
    pub events: usize,
    /// The mutex checks' verdict on that history.
    pub verdict: Verdict,
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

    /// Whether neither judge found anything wrong: no violation, and the history not invalid
    /// (unknown is printed as such).
    pub fn passed(&self) -> bool {
        self.violation_count() == 0 && !self.verdict.is_invalid()
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
        self.faults.iter().map(Count::get).sum()
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
        for (kind, n) in FaultKind::ALL.iter().zip(&self.faults) {
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
        writeln!(
            f,
            "history {} events, verdict {}",
            self.events,
            line(&self.verdict)
        )?;
        Ok(())
    }
}
