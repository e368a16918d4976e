//! The steps every workload's worker shares: one operation bounded and sorted into ok, fail or
//! info ([`attempt`]); setup that survives faults ([`ensure_node`]); waiting
//! out a lost connection ([`reconnected`]); running the workers ([`each_worker`], and
//! [`add_or_look`] for the workloads whose workers add new elements half the time); and reading
//! node data and sequential names.
//!
//! Invariant: only ZooKeeper's own outcome codes are definite failures; every other error, and
//! no answer within [`OP_TIMEOUT`], leaves the outcome unknown.

use std::future::Future;
use std::time::Duration;

use shepherd_client::{Client, CreateOptions, Error, SessionState};

use crate::proof::workload::plan::{Plan, Process};

/// The longest one operation may take before it is recorded as info and abandoned.
pub const OP_TIMEOUT: Duration = Duration::from_secs(5);

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

/// Creates one persistent node with `data`, and its missing ancestors, unless it exists; an
/// unknown outcome is tried again (bounded by [`OP_TIMEOUT`] per try, a few tries), which
/// `create_all` makes safe: a node the lost try made is found there.
pub async fn ensure_node(client: &Client, path: &str, data: &[u8]) {
    for _ in 0..20 {
        match attempt(client.create_all(path, data, &CreateOptions::persistent())).await {
            Outcome::Ok(_) => return,
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
            panic!(
                "a workload worker failed: {}",
                shepherd_testkit::panic_message(e)
            );
        }
    }
}

/// The worker loop of the set and queue workloads, on every client at once: while the plan
/// allows, each worker either adds a new element (`add`, with `worker × 1 000 000 + n`, unique
/// to the worker's n-th add) or looks (`look`: a read, a dequeue), a coin toss seeded by the
/// plan's seed and the worker. Each step says whether its outcome is known; after an unknown
/// one the worker's process has crashed, as the history models it, and the worker goes on as a
/// new process once its session is connected again (or stops if it never is).
pub async fn add_or_look<A, AF, L, LF>(clients: &[Client], plan: &Plan, add: A, look: L)
where
    A: Fn(Client, i64, u64) -> AF + Clone + Send + 'static,
    AF: Future<Output = bool> + Send,
    L: Fn(Client, u64) -> LF + Clone + Send + 'static,
    LF: Future<Output = bool> + Send,
{
    use rand::Rng;

    let workers = clients.len();
    each_worker(clients, |worker, client| {
        let (plan, add, look) = (plan.clone(), add.clone(), look.clone());
        async move {
            let mut rng = plan.worker_rng(worker);
            let mut process = Process::new(worker, workers);
            let mut count = 0i64;
            while plan.next() {
                let known = if rng.random_bool(0.5) {
                    count += 1;
                    add(
                        client.clone(),
                        worker as i64 * 1_000_000 + count,
                        process.id(),
                    )
                    .await
                } else {
                    look(client.clone(), process.id()).await
                };
                if !known {
                    process.crashed();
                    if !reconnected(&client).await {
                        break;
                    }
                }
            }
        }
    })
    .await;
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

/// The sequence number at the end of a sequential node's name (its last ten digits).
pub fn sequence_of(path: &str) -> Option<i64> {
    path.get(path.len().checked_sub(10)?..)?.parse().ok()
}

/// A read that sees every write acknowledged before it began: a sync of `path`, then `read`.
/// ZooKeeper serves a read from the member the client is connected to, which may lag the
/// leader (reads are sequentially consistent per client, not linearizable); a sync first is
/// how ZooKeeper's programmer's guide has a client read the latest.
pub async fn synced<T, Fut>(client: &Client, path: &str, read: Fut) -> Result<T, Error>
where
    Fut: Future<Output = Result<T, Error>>,
{
    client.sync(path).await?;
    read.await
}
