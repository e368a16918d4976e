//! [`Phase`]: one kind of request (create, set, get or delete) sent over every node of a run,
//! by every session at once, and the [`Sample`] of latencies it gives.
//!
//! Each session owns the nodes whose index is its own number modulo the session count, and
//! keeps at most `in_flight` requests outstanding on its one connection (pipelined: the client
//! sends without waiting for earlier replies) through `in_flight` lanes in its one task, each
//! sending its next request when its last is answered. Closed loop (no rate): a request is sent as soon
//! as one returns, and its latency runs from sending to reply. Open loop (a rate R over N
//! sessions): request `j` of session `k` is *scheduled* at `start + (j · N + k) / R`, so the
//! sessions' requests interleave into one even stream of R per second (not N at once every
//! N / R), released at that instant by the [`pace`](super::pace) thread, and its latency runs
//! from that scheduled instant, so a server that falls behind shows as latency rather than hiding
//! behind fewer requests sent (coordinated omission); the in-flight cap still holds, and a
//! request that waits for it counts that wait too.
//!
//! With an [`Extent`] a phase of setData, getData or both ([`Phase::Mixed`]) runs for a fixed
//! time instead of one pass, each session cycling over its nodes, and every request can be
//! traced (its op, its scheduled wall-clock time, its latency) so that latencies can be lined
//! up with what the server logged, e.g. a snapshot (docs/bench/snapshot-latency.md).
//!
//! Invariants: a ZooKeeper error (NodeExists…) is counted, not fatal, and the first one is kept
//! to say why; memory is one latency (and, traced, one [`Traced`]) per request of the phase.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::ValueEnum;
use futures_util::future::join_all;
use shepherd_client::{Client, CreateOptions};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep_until};

use crate::error::{Error, Result};
use crate::load::pace::{Pacer, Schedule};

/// A phase of the load benchmark, in the order they run by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Phase {
    /// create (persistent, `--value-size` bytes of data).
    Create,
    /// setData, any version, the same size of data.
    Set,
    /// getData.
    Get,
    /// delete, any version.
    Delete,
    /// setData and getData in turn (even requests of a session set, odd ones get): half
    /// writes, half reads, over nodes that exist.
    Mixed,
}

impl Phase {
    /// The name in tables and CSV.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Create => "create",
            Phase::Set => "set",
            Phase::Get => "get",
            Phase::Delete => "delete",
            Phase::Mixed => "mixed",
        }
    }

    /// Whether a phase may send more than one request per node (and so run for a
    /// [`Extent::duration`]): a node is created or deleted only once.
    pub fn repeatable(self) -> bool {
        matches!(self, Phase::Set | Phase::Get | Phase::Mixed)
    }

    /// The request a session sends as its `j`-th of this phase.
    fn op(self, j: usize) -> Phase {
        match self {
            Phase::Mixed if j % 2 == 0 => Phase::Set,
            Phase::Mixed => Phase::Get,
            other => other,
        }
    }

    /// The `j`-th request of a session in this phase, on `path`; the op it was is the first
    /// of the pair.
    async fn call(
        self,
        j: usize,
        client: &Client,
        path: &str,
        value: &[u8],
    ) -> (Phase, Result<(), String>) {
        let op = self.op(j);
        let outcome = match op {
            Phase::Create => client.create(path, value, &PERSISTENT).await.map(drop),
            Phase::Set => client.set_data(path, value, None).await.map(drop),
            // `op` never yields Mixed: it is Set or Get by then.
            Phase::Get | Phase::Mixed => client.get_data(path).await.map(drop),
            Phase::Delete => client.delete(path, None).await,
        };
        (
            op,
            outcome.map_err(|e| format!("{} {path}: {e}", op.name())),
        )
    }
}

/// The options of every create: built once, not per request.
static PERSISTENT: LazyLock<CreateOptions> = LazyLock::new(CreateOptions::persistent);

/// How one phase is driven.
#[derive(Debug, Clone)]
pub struct Drive {
    /// The phase.
    pub phase: Phase,
    /// The folder holding the nodes (`DIR/n0000000`…).
    pub dir: String,
    /// Nodes, shared out over the sessions.
    pub nodes: usize,
    /// Most requests outstanding per session.
    pub in_flight: usize,
    /// Requests per second offered over all sessions (open loop), or `None` (closed loop).
    pub rate: Option<f64>,
    /// The data of creates and sets.
    pub value: Arc<[u8]>,
}

/// How far a phase goes beyond one request per node, and what it keeps of each request.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extent {
    /// Run a [repeatable](Phase::repeatable) phase this long, each session cycling over its
    /// nodes, instead of one pass (ignored by create and delete). Open loop, it is the span
    /// of the schedule: `duration × rate` requests in all.
    pub duration: Option<Duration>,
    /// Keep a [`Traced`] per request in [`Sample::trace`].
    pub trace: bool,
}

/// One request as traced: what it was, when it was due, how it went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traced {
    /// The request (set or get for a mixed phase).
    pub op: Phase,
    /// When it was due (open loop: its scheduled instant; closed loop: when it was sent), µs
    /// since the Unix epoch by this machine's wall clock, to line up with servers' logs.
    pub due_unix_us: u64,
    /// From due to reply, µs.
    pub latency_us: u64,
    /// Whether the reply was a success.
    pub ok: bool,
}

/// What one phase measured, before any statistics.
#[derive(Debug, Default)]
pub struct Sample {
    /// Latency of every request that got a reply, in no particular order.
    pub latencies: Vec<Duration>,
    /// Requests answered with an error.
    pub errors: u64,
    /// The first error, to say why.
    pub first_error: Option<String>,
    /// From the phase's start to its last reply.
    pub wall: Duration,
    /// Every request, in no particular order, when [`Extent::trace`] asked for it.
    pub trace: Vec<Traced>,
}

/// The path of node `index` under `dir`.
pub fn node_path(dir: &str, index: usize) -> String {
    format!("{dir}/n{index:07}")
}

impl Drive {
    /// Runs the phase on every session at once and waits for every reply.
    ///
    /// # Errors
    /// [`Error::Refused`] if a session's task panics.
    pub async fn run(&self, clients: &[Client]) -> Result<Sample> {
        self.run_for(clients, Extent::default()).await
    }

    /// [`Drive::run`] for an [`Extent`]: for a time rather than one pass, traced or not.
    ///
    /// # Errors
    /// [`Error::Refused`] if a session's task panics.
    pub async fn run_for(&self, clients: &[Client], extent: Extent) -> Result<Sample> {
        let extent = Extent {
            duration: extent.duration.filter(|_| self.phase.repeatable()),
            ..extent
        };
        let sessions = clients.len().max(1);
        // A little ahead, so that every session is spawned before the first request is due.
        let start = Instant::now() + Duration::from_millis(20);
        // The wall clock at `start`: traced instants are `start_unix` plus their offset from
        // `start` on the monotonic clock, so a clock step during the phase moves none of them.
        let start_unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            + Duration::from_millis(20);
        let plan = Plan {
            phase: self.phase,
            in_flight: self.in_flight.max(1),
            start,
            start_unix,
            schedule: self.rate.map(|rate| Schedule {
                start: start.into_std(),
                // Per session, the gap between two scheduled requests.
                every: Duration::from_secs_f64(sessions as f64 / rate.max(f64::MIN_POSITIVE)),
                sessions,
            }),
            extent,
        };
        let shares: Vec<Vec<String>> = (0..clients.len())
            .map(|number| {
                (number..self.nodes)
                    .step_by(sessions)
                    .map(|i| node_path(&self.dir, i))
                    .collect()
            })
            .collect();
        let counts: Vec<usize> = shares
            .iter()
            .map(|paths| plan.requests(paths.len()))
            .collect();
        // Open loop: the pacer releases each request when it is due (bench/src/load/pace.rs);
        // it is dropped, and its thread stopped, when this returns.
        let (_pacer, permits): (_, Vec<Option<Arc<Semaphore>>>) = match plan.schedule {
            Some(schedule) => {
                let (pacer, permits) = Pacer::start(schedule, counts.clone(), plan.in_flight)
                    .map_err(|e| Error::Refused(format!("cannot start the pacer: {e}")))?;
                (Some(pacer), permits.into_iter().map(Some).collect())
            }
            None => (None, vec![None; clients.len()]),
        };
        let mut tasks = JoinSet::new();
        let lots = counts.into_iter().zip(permits).enumerate();
        for ((client, paths), (number, (count, permits))) in clients.iter().zip(shares).zip(lots) {
            let (client, value) = (client.clone(), self.value.clone());
            let lot = Lot {
                number,
                count,
                permits,
            };
            tasks.spawn(async move { session(&client, &plan, lot, paths, &value).await });
        }
        let mut sample = Sample::default();
        while let Some(joined) = tasks.join_next().await {
            let one =
                joined.map_err(|e| Error::Refused(format!("a session's task failed: {e}")))?;
            sample.latencies.extend(one.latencies);
            sample.errors += one.errors;
            sample.trace.extend(one.trace);
            if sample.first_error.is_none() {
                sample.first_error = one.first_error;
            }
        }
        sample.wall = start.elapsed();
        Ok(sample)
    }
}

/// What every session of a phase shares.
#[derive(Debug, Clone, Copy)]
struct Plan {
    phase: Phase,
    in_flight: usize,
    start: Instant,
    start_unix: Duration,
    /// Open loop: when each request is due.
    schedule: Option<Schedule>,
    extent: Extent,
}

impl Plan {
    /// How many requests a session of `nodes` nodes may send: one per node, or as many as
    /// the schedule holds in the duration (closed loop: no bound but time).
    fn requests(&self, nodes: usize) -> usize {
        if nodes == 0 {
            return 0;
        }
        match (self.extent.duration, self.schedule) {
            (None, _) => nodes,
            (Some(duration), Some(schedule)) => {
                (duration.as_secs_f64() / schedule.every.as_secs_f64().max(1e-9)).ceil() as usize
            }
            (Some(_), None) => usize::MAX,
        }
    }
}

/// One session's own share of a phase's plan.
#[derive(Debug)]
struct Lot {
    /// Its number among the phase's sessions.
    number: usize,
    /// Requests it sends, [`Plan::requests`].
    count: usize,
    /// Open loop: where the pacer releases its requests, one permit each.
    permits: Option<Arc<Semaphore>>,
}

/// One session's share of a phase: `in_flight` lanes, each taking the session's next request
/// when its last one is answered, all in this one task.
///
/// Lanes rather than a future per request: a request then costs no allocation and no
/// scheduling of its own in the client, which shares the machine with the server it measures.
///
/// Open loop, a lane takes the next request only when it is free and the pacer has released
/// it, at [`Schedule::due`]; its latency runs from then, so a request that waits for a free
/// lane counts that wait too.
async fn session(
    client: &Client,
    plan: &Plan,
    lot: Lot,
    paths: Vec<String>,
    value: &[u8],
) -> Sample {
    let Lot {
        number,
        count,
        permits,
    } = lot;
    if count == 0 {
        return Sample::default();
    }
    // Open loop, the permits are the start: a tokio timer would fire on its 1 ms tick and let
    // the first millisecond's requests leave together.
    if permits.is_none() {
        sleep_until(plan.start).await;
    }
    let end = plan.extent.duration.map(|duration| plan.start + duration);
    // Shared by the lanes of this one task: never contended, but the task must be Send.
    let next = AtomicUsize::new(0);
    let sample = Mutex::new(Sample {
        latencies: Vec::with_capacity(count.min(paths.len().max(1 << 16))),
        ..Sample::default()
    });
    let (next, sample_ref, paths, permits) = (&next, &sample, &paths, &permits);
    let lane = || async move {
        loop {
            if let Some(permits) = permits {
                match permits.acquire().await {
                    Ok(permit) => permit.forget(),
                    Err(_) => return,
                }
            }
            // Closed loop for a duration: stop sending once it is over.
            let over = permits.is_none() && end.is_some_and(|end| Instant::now() >= end);
            let j = next.fetch_add(1, Relaxed);
            if j >= count || over {
                return;
            }
            let due = match plan.schedule {
                Some(schedule) => Instant::from_std(schedule.due(number, j)),
                None => Instant::now(),
            };
            let path = &paths[j % paths.len()];
            let (op, outcome) = plan.phase.call(j, client, path, value).await;
            let latency = due.elapsed();
            sample_ref
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .record(plan, op, due, latency, outcome);
        }
    };
    join_all((0..plan.in_flight.min(count)).map(|_| lane())).await;
    sample.into_inner().unwrap_or_else(PoisonError::into_inner)
}

impl Sample {
    /// Adds one request's outcome.
    fn record(
        &mut self,
        plan: &Plan,
        op: Phase,
        due: Instant,
        latency: Duration,
        outcome: Result<(), String>,
    ) {
        if plan.extent.trace {
            let due_unix = plan.start_unix + due.saturating_duration_since(plan.start);
            self.trace.push(Traced {
                op,
                due_unix_us: u64::try_from(due_unix.as_micros()).unwrap_or(u64::MAX),
                latency_us: u64::try_from(latency.as_micros()).unwrap_or(u64::MAX),
                ok: outcome.is_ok(),
            });
        }
        match outcome {
            Ok(()) => self.latencies.push(latency),
            Err(e) => {
                self.errors += 1;
                self.first_error.get_or_insert(e);
            }
        }
    }
}
