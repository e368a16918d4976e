//! [`Phase`]: one kind of request (create, set, get or delete) sent over every node of a run,
//! by every session at once, and the [`Sample`] of latencies it gives.
//!
//! Each session owns the nodes whose index is its own number modulo the session count, and
//! keeps at most `in_flight` requests outstanding on its one connection (pipelined: the client
//! sends without waiting for earlier replies). Closed loop (no rate): a request is sent as soon
//! as one returns, and its latency runs from sending to reply. Open loop (a rate): request `j`
//! of a session is *scheduled* at `start + j / (rate / sessions)`, and its latency runs from
//! that scheduled instant, so a server that falls behind shows as latency rather than hiding
//! behind fewer requests sent (coordinated omission); the in-flight cap still holds, and a
//! request that waits for it counts that wait too.
//!
//! Invariants: a ZooKeeper error (NodeExists…) is counted, not fatal, and the first one is kept
//! to say why; memory is one latency per request of the phase.

use std::sync::Arc;
use std::time::Duration;

use clap::ValueEnum;
use futures_util::{StreamExt, stream};
use shepherd_client::{Client, CreateOptions};
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep_until};

use crate::bench::target::{Error, Result};

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
}

impl Phase {
    /// The name in tables and CSV.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Create => "create",
            Phase::Set => "set",
            Phase::Get => "get",
            Phase::Delete => "delete",
        }
    }

    /// One request of this phase on `path`.
    async fn call(self, client: &Client, path: &str, value: &[u8]) -> Result<(), String> {
        let outcome = match self {
            Phase::Create => client
                .create(path, value, &CreateOptions::persistent())
                .await
                .map(drop),
            Phase::Set => client.set_data(path, value, None).await.map(drop),
            Phase::Get => client.get_data(path).await.map(drop),
            Phase::Delete => client.delete(path, None).await,
        };
        outcome.map_err(|e| format!("{} {path}: {e}", self.name()))
    }
}

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
        let sessions = clients.len().max(1);
        // Per session, the gap between two scheduled requests.
        let every = self
            .rate
            .map(|rate| Duration::from_secs_f64(sessions as f64 / rate.max(f64::MIN_POSITIVE)));
        // A little ahead, so that every session is spawned before the first request is due.
        let start = Instant::now() + Duration::from_millis(20);
        let mut tasks = JoinSet::new();
        for (number, client) in clients.iter().enumerate() {
            let paths: Vec<String> = (number..self.nodes)
                .step_by(sessions)
                .map(|i| node_path(&self.dir, i))
                .collect();
            let (client, value) = (client.clone(), self.value.clone());
            let (phase, in_flight) = (self.phase, self.in_flight.max(1));
            tasks.spawn(async move {
                session(&client, phase, paths, &value, in_flight, start, every).await
            });
        }
        let mut sample = Sample::default();
        while let Some(joined) = tasks.join_next().await {
            let one =
                joined.map_err(|e| Error::Refused(format!("a session's task failed: {e}")))?;
            sample.latencies.extend(one.latencies);
            sample.errors += one.errors;
            if sample.first_error.is_none() {
                sample.first_error = one.first_error;
            }
        }
        sample.wall = start.elapsed();
        Ok(sample)
    }
}

/// One session's share of a phase.
async fn session(
    client: &Client,
    phase: Phase,
    paths: Vec<String>,
    value: &[u8],
    in_flight: usize,
    start: Instant,
    every: Option<Duration>,
) -> Sample {
    sleep_until(start).await;
    let count = paths.len();
    let replies = stream::iter(paths.into_iter().enumerate())
        .then(|(j, path)| async move {
            let due = match every {
                Some(every) => {
                    let due = start + every.mul_f64(j as f64);
                    sleep_until(due).await;
                    due
                }
                None => Instant::now(),
            };
            (due, path)
        })
        .map(|(due, path)| async move {
            let outcome = phase.call(client, &path, value).await;
            (due.elapsed(), outcome)
        })
        .buffer_unordered(in_flight);
    let mut replies = std::pin::pin!(replies);
    let mut sample = Sample {
        latencies: Vec::with_capacity(count),
        ..Sample::default()
    };
    while let Some((latency, outcome)) = replies.next().await {
        match outcome {
            Ok(()) => sample.latencies.push(latency),
            Err(e) => {
                sample.errors += 1;
                sample.first_error.get_or_insert(e);
            }
        }
    }
    sample
}
