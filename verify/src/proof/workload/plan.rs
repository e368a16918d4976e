//! The budget of a run ([`Plan`]: how many operations, until when, and progress as it goes)
//! and the process ids of its workers ([`Process`]).
//!
//! Invariant: no invocation begins once the plan's count or time is spent, and a worker's
//! process id changes after every unknown outcome, so that no process has two operations open.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// How much a run does: at most `ops` invocations in all, none begun after `until`.
#[derive(Debug, Clone)]
pub struct Plan {
    ops: u64,
    until: Instant,
    taken: Arc<AtomicU64>,
    progress: Arc<watch::Sender<u64>>,
    /// The seed each worker's choices derive from.
    pub seed: u64,
}

impl Plan {
    /// Worker `worker`'s own random choices: seeded by the plan's seed and the worker, so a
    /// run with the same seed makes the same choices.
    pub fn worker_rng(&self, worker: usize) -> rand::rngs::StdRng {
        use rand::SeedableRng;
        rand::rngs::StdRng::seed_from_u64(self.seed ^ (worker as u64).wrapping_mul(0x9e37))
    }

    /// At most `ops` invocations, none after `duration` from now.
    pub fn new(ops: u64, duration: Duration, seed: u64) -> Plan {
        Plan {
            ops,
            until: Instant::now() + duration,
            taken: Arc::new(AtomicU64::new(0)),
            progress: Arc::new(watch::Sender::new(0)),
            seed,
        }
    }

    /// Takes one invocation's ticket: `false` once the count or the time is spent.
    pub fn next(&self) -> bool {
        let go =
            Instant::now() < self.until && self.taken.fetch_add(1, Ordering::Relaxed) < self.ops;
        if go {
            self.progress.send_modify(|n| *n += 1);
        }
        go
    }

    /// How many invocations have begun, as they begin: what a nemesis paces its faults by.
    pub fn progress(&self) -> watch::Receiver<u64> {
        self.progress.subscribe()
    }

    /// A plan for the next of `parts` runs that share what is left of this one: an equal share
    /// of the remaining invocations and of the remaining time.
    pub fn share(&self, parts: usize) -> Plan {
        let parts = parts.max(1) as u64;
        let left_ops = self.ops.saturating_sub(self.taken.load(Ordering::Relaxed));
        let left_time = self.until.saturating_duration_since(Instant::now());
        let share = left_ops / parts;
        // The share is taken from this plan's budget at once.
        self.taken.fetch_add(share, Ordering::Relaxed);
        Plan {
            ops: share,
            until: Instant::now() + left_time / parts as u32,
            taken: Arc::new(AtomicU64::new(0)),
            // Progress on a share is progress on the whole.
            progress: self.progress.clone(),
            seed: self.seed.wrapping_add(parts),
        }
    }

    /// The most invocations the plan allows.
    pub fn ops_limit(&self) -> u64 {
        self.ops
    }

    /// The instant after which nothing new begins.
    pub fn until(&self) -> Instant {
        self.until
    }
}

/// A worker's process id: `worker`, then `worker + workers`, `worker + 2 * workers`… after
/// each indeterminate outcome, so that a process never has two operations open.
#[derive(Debug, Clone, Copy)]
pub struct Process {
    id: u64,
    step: u64,
}

impl Process {
    /// Worker `worker` of `workers`.
    pub fn new(worker: usize, workers: usize) -> Process {
        Process {
            id: worker as u64,
            step: workers.max(1) as u64,
        }
    }

    /// Numbers this worker's processes from `base` on (apart from another run's).
    pub fn skip(&mut self, base: u64) {
        self.id += base;
    }

    /// The current id.
    pub fn id(self) -> u64 {
        self.id
    }

    /// Its last operation's outcome is unknown: later ones belong to a new process.
    pub fn crashed(&mut self) {
        self.id += self.step;
    }
}
