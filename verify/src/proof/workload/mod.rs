//! The workloads: each drives a few clients against one folder of a server and records every
//! operation in a [`Recorder`] as invoke, then ok, fail (definitely not applied) or info (not
//! known: connection loss, a session gone, a timeout).
//!
//! * [`register`]: a compare-and-set register per key (getData, setData with a version);
//! * [`set`]: a grow-only set kept in one node;
//! * [`unique_ids`]: ids from sequential creates;
//! * [`counter`]: a counter whose increments are multis of sequential creates;
//! * [`queue`]: a total queue (enqueue a sequential node; dequeue by check, set and
//!   delete-smallest in one multi);
//! * [`mutex`]: acquire, a write guarded by the lock, release, over every exclusive lock kind;
//!
//! and what they share: [`plan`] (the budget, the process ids) and [`op`] (one operation
//! bounded and sorted, setup, reconnection).
//!
//! Invariants: every wait is bounded (each operation by [`OP_TIMEOUT`], the run by its
//! [`Plan`]'s op count and deadline); an operation whose outcome is unknown is recorded as info
//! and its process never invokes again (the next operation of that worker is a new process, as
//! the checkers expect of a crashed one); only ZooKeeper's own outcome codes count as fail.

pub mod counter;
pub mod mutex;
pub mod op;
pub mod plan;
pub mod queue;
pub mod register;
pub mod set;
pub mod unique_ids;

use std::fmt;
use std::str::FromStr;

use shepherd_client::Client;

use crate::proof::history::Recorder;

pub use op::{OP_TIMEOUT, Outcome, attempt};
pub use plan::{Plan, Process};

/// One of the workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// [`register`].
    Register,
    /// [`set`].
    Set,
    /// [`unique_ids`].
    UniqueIds,
    /// [`counter`].
    Counter,
    /// [`queue`].
    Queue,
    /// [`mutex`].
    Mutex,
}

impl Workload {
    /// Every workload, in the order runs report them.
    pub const ALL: [Workload; 6] = [
        Workload::Register,
        Workload::Set,
        Workload::UniqueIds,
        Workload::Counter,
        Workload::Queue,
        Workload::Mutex,
    ];

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Register => "register",
            Workload::Set => "set",
            Workload::UniqueIds => "unique-ids",
            Workload::Counter => "counter",
            Workload::Queue => "queue",
            Workload::Mutex => "mutex",
        }
    }

    /// Runs this workload with `clients` (one worker each) in the folder `root` (created if
    /// missing), recording into `recorder`, until `plan` is spent.
    pub async fn run(self, clients: &[Client], root: &str, plan: &Plan, recorder: &Recorder) {
        if let Some(first) = clients.first() {
            op::ensure_node(first, root, b"").await;
        }
        match self {
            Workload::Register => register::run(clients, root, plan, recorder).await,
            Workload::Set => set::run(clients, root, plan, recorder).await,
            Workload::UniqueIds => unique_ids::run(clients, root, plan, recorder).await,
            Workload::Counter => counter::run(clients, root, plan, recorder).await,
            Workload::Queue => queue::run(clients, root, plan, recorder).await,
            Workload::Mutex => mutex::run(clients, root, plan, recorder).await,
        }
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Workload {
    type Err = String;

    fn from_str(s: &str) -> Result<Workload, String> {
        Workload::ALL
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Workload::ALL.iter().map(|w| w.name()).collect();
                format!("no workload {s:?}; one of {}", names.join(", "))
            })
    }
}
