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
//! * [`mutex`]: acquire, a write guarded by the lock, release, over every exclusive lock kind.
//!
//! Invariants: every wait is bounded (each operation by [`OP_TIMEOUT`], the run by its
//! [`Plan`]'s op count and deadline); an operation whose outcome is unknown is recorded as info
//! and its process never invokes again (the next operation of that worker is a new process, as
//! the checkers expect of a crashed one); only ZooKeeper's own outcome codes count as fail.

pub mod counter;
pub mod mutex;
pub mod queue;
pub mod register;
pub mod set;
pub mod unique_ids;

use std::fmt;
use std::future::Future;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use shepherd_client::{Client, CreateOptions, Error, SessionState};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::proof::history::Recorder;

/// The longest one operation may take before it is recorded as info and abandoned.
pub const OP_TIMEOUT: Duration = Duration::from_secs(5);

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
            ensure_path(first, root).await;
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

/// How an operation ended, as a history records it.
#[derive(Debug)]
pub enum Outcome<T> {
    /// It took effect, with this result.
    Ok(T),
    /// ZooKeeper refused it (the code): it took no effect.
    Fail(Error),
    /// Unknown: the connection or session was lost, or it timed out.
    Info(String),
}

/// Runs `op` bounded by [`OP_TIMEOUT`], sorting its result into an [`Outcome`]: ZooKeeper's
/// codes (`Error::Keeper`, `Error::MultiFailed`) are definite failures, everything else
/// (connection loss, a session gone, I/O, a timeout) leaves the outcome unknown.
pub async fn attempt<T, Fut>(op: Fut) -> Outcome<T>
where
    Fut: Future<Output = Result<T, Error>>,
{
    match tokio::time::timeout(OP_TIMEOUT, op).await {
        Ok(Ok(v)) => Outcome::Ok(v),
        Ok(Err(e @ (Error::Keeper(_) | Error::MultiFailed { .. }))) => Outcome::Fail(e),
        Ok(Err(e)) => Outcome::Info(e.to_string()),
        Err(_) => Outcome::Info(format!("no answer within {OP_TIMEOUT:?}")),
    }
}

/// Creates `path` and its missing ancestors as persistent nodes; an existing one is fine, and
/// an unknown outcome is looked at again (bounded by [`OP_TIMEOUT`] per try, a few tries).
pub async fn ensure_path(client: &Client, path: &str) {
    let mut at = String::new();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        at.push('/');
        at.push_str(part);
        ensure_node(client, &at, b"").await;
    }
}

/// Creates one persistent node with `data` unless it exists.
pub async fn ensure_node(client: &Client, path: &str, data: &[u8]) {
    for _ in 0..20 {
        match attempt(client.create(path, data, &CreateOptions::persistent())).await {
            Outcome::Ok(_) => return,
            Outcome::Fail(e) if e.is_node_exists() => return,
            Outcome::Fail(e) => panic!("create {path}: {e}"),
            Outcome::Info(_) => {
                reconnected(client).await;
            }
        }
    }
    panic!("create {path}: no definite answer in 20 tries");
}

/// After an unknown outcome: waits (at most [`OP_TIMEOUT`]) for the session to be connected
/// again, so that a worker whose server is down does not spend its budget on a dead socket.
/// `false` when the session has ended for good: the worker stops.
pub async fn reconnected(client: &Client) -> bool {
    let mut status = client.status_watch();
    let back = tokio::time::timeout(
        OP_TIMEOUT,
        status.wait_for(|s| s.state == SessionState::Connected || s.state.is_terminal()),
    )
    .await;
    match back {
        Ok(Ok(s)) => !s.state.is_terminal(),
        Ok(Err(_)) => false,
        Err(_) => !client.status().state.is_terminal(),
    }
}

/// Runs `worker(index, client)` once per client, concurrently, and waits for them all.
pub async fn each_worker<W, Fut>(clients: &[Client], worker: W)
where
    W: Fn(usize, Client) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let tasks: Vec<_> = clients
        .iter()
        .enumerate()
        .map(|(i, c)| tokio::spawn(worker(i, c.clone())))
        .collect();
    for task in tasks {
        if let Err(e) = task.await {
            panic!("a workload worker failed: {}", crate::panic_message(e));
        }
    }
}

/// Decimal integers, comma separated (the set's and the register's node data): `None` for an
/// empty node, and for bytes that are not such a list.
pub fn parse_ints(data: &[u8]) -> Option<Vec<i64>> {
    let text = std::str::from_utf8(data).ok()?;
    if text.is_empty() {
        return Some(Vec::new());
    }
    text.split(',').map(|n| n.parse().ok()).collect()
}
