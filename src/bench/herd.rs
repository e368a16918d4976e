//! `shepherd bench herd`: how many watch notifications (and getChildren calls) each lock
//! hand-off costs, for every lock recipe, as the number of contenders grows.
//!
//! One *run* is one recipe with N contenders:
//! 1. a coordinator session creates a node that blocks the lock (the fixed node of
//!    `ephemeral-exists`, else a writer's sequential node `bench-coordinator-lock-<seq>` at
//!    the head of the queue, which every recipe here takes for a writer's);
//! 2. N further sessions (one client each, as N processes would be) call the recipe's
//!    acquire, with a deadline, and queue up behind it;
//! 3. once the shared [`LockStats`] show all N blocked on a watch, and nothing (counters, server
//!    notifications) has moved for a settle period, the server's notification counter is
//!    read and the coordinator deletes its node: N hand-offs follow, each contender
//!    releasing as soon as it acquires;
//! 4. when the last contender has released, the counters are read again.
//!
//! Only the hand-off phase is measured: the notifications that the arrivals themselves cause
//! (every arrival wakes every herd waiter) are not. The coordinator's node has no watch of its
//! own, so its delete notifies only contenders. Releasing at once also means the lost-lock
//! monitor that every guard starts has not yet set its exists watch (the client side runs on
//! a single-threaded runtime, and release aborts the monitor before it first runs); a holder
//! that keeps the lock longer gets one more notification, about its own node, per hand-off.
//!
//! Notifications are counted by the server: the embedded server's [`CoreMetrics`]
//! (`ServerHandle::inspect`), or, with `--connect`, the `mntr` four-letter word before and
//! after (ZooKeeper 3.6+ prints its per-event-type watch counters as summaries; the
//! `zk_sum_node_*_watch_count` keys are the numbers of watchers notified).
//!
//! [`CoreMetrics`]: shepherd_server::core::CoreMetrics

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};
use shepherd_client::{Client, CreateMode, CreateOptions};
use shepherd_recipes::{Guard, Lock, LockKind, LockStats, StatsSnapshot, WaitStrategy};
use shepherd_server::{Server, ServerHandle};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep, sleep_until, timeout, timeout_at};

use super::svg::{Series, log_log_chart};

/// The first line of `--csv`.
pub const CSV_HEADER: &str = "recipe,contenders,handoffs,notifications,notifications_per_handoff,get_children_per_handoff,wall_ms,handoff_p50_us";

/// Where the benchmark's nodes live (one child per run, deleted after it).
const ROOT: &str = "/shepherd-bench";

/// Sessions opened at once while setting up a run.
const CONNECT_PARALLELISM: usize = 32;

/// The hint printed when sessions cannot be opened.
const CONNECTION_LIMIT_HINT: &str = "if the server limits connections per client address \
     (ZooKeeper's maxClientCnxns, 60 by default), set maxClientCnxns=0 in its zoo.cfg";

/// A lock recipe, with its waiting strategy.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Recipe {
    /// `EphemeralLock`: one fixed ephemeral node, waiters watch it with exists.
    EphemeralExists,
    /// `SequentialLock` with `WaitStrategy::Herd`: waiters watch the folder's children.
    SequentialHerd,
    /// `SequentialLock` with `WaitStrategy::Predecessor`: waiters watch the next lower node.
    SequentialPredecessor,
    /// `SharedLock` (even contenders read, odd ones write) with `WaitStrategy::Herd`.
    SharedHerd,
    /// `SharedLock` (even contenders read, odd ones write) with `WaitStrategy::Predecessor`.
    SharedPredecessor,
    /// `Mutex`, Curator's `InterProcessMutex` (predecessor watches).
    CuratorMutex,
}

impl Recipe {
    /// Every recipe, in table order.
    pub const ALL: [Recipe; 6] = [
        Recipe::EphemeralExists,
        Recipe::SequentialHerd,
        Recipe::SequentialPredecessor,
        Recipe::SharedHerd,
        Recipe::SharedPredecessor,
        Recipe::CuratorMutex,
    ];

    /// The name used on the command line and in the CSV.
    pub fn name(self) -> &'static str {
        match self {
            Recipe::EphemeralExists => "ephemeral-exists",
            Recipe::SequentialHerd => "sequential-herd",
            Recipe::SequentialPredecessor => "sequential-predecessor",
            Recipe::SharedHerd => "shared-herd",
            Recipe::SharedPredecessor => "shared-predecessor",
            Recipe::CuratorMutex => "curator-mutex",
        }
    }

    /// The lock contender `index` takes: the shared recipes alternate readers (even) and
    /// writers (odd).
    fn kind(self, index: usize) -> LockKind {
        use WaitStrategy::{Herd, Predecessor};
        let shared = |s| {
            if index % 2 == 0 {
                LockKind::SharedRead(s)
            } else {
                LockKind::SharedWrite(s)
            }
        };
        match self {
            Recipe::EphemeralExists => LockKind::Ephemeral,
            Recipe::SequentialHerd => LockKind::Sequential(Herd),
            Recipe::SequentialPredecessor => LockKind::Sequential(Predecessor),
            Recipe::SharedHerd => shared(Herd),
            Recipe::SharedPredecessor => shared(Predecessor),
            Recipe::CuratorMutex => LockKind::Mutex,
        }
    }
}

/// `shepherd bench herd` options.
#[derive(Args, Debug, Clone)]
pub struct HerdArgs {
    /// Contender counts to run, comma-separated (each contender is its own session).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "2,10,50,100,500,1000",
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub contenders: Vec<u32>,
    /// Recipes to run, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "ephemeral-exists,sequential-herd,sequential-predecessor,shared-herd,shared-predecessor,curator-mutex"
    )]
    pub recipes: Vec<Recipe>,
    /// Run against this ZooKeeper (`host:port`, any ZooKeeper-compatible server with `mntr`
    /// allowed and no per-address connection limit: maxClientCnxns=0) instead of an embedded
    /// Shepherd server.
    #[arg(long, value_name = "HOST:PORT")]
    pub connect: Option<String>,
    /// Also write the results as CSV, one row per run.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Also draw notifications per hand-off against contenders (log-log) as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Time limit of one run, seconds (sessions, queueing and every hand-off); a run that
    /// exceeds it is reported as failed.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub timeout: u64,
    /// How long, ms, the counters must stay still, with every contender blocked, before the
    /// first release.
    #[arg(long = "settle-ms", value_name = "MS", default_value_t = 50)]
    pub settle_ms: u64,
}

/// What one successful run measured (hand-off phase only).
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Acquisitions by contenders: each followed a release.
    pub handoffs: u64,
    /// Watch notifications the server sent.
    pub notifications: u64,
    /// getChildren calls by all contenders.
    pub get_children: u64,
    /// From the first release to the last contender's release.
    pub wall: Duration,
    /// Median gap between an acquisition and the latest release before it.
    pub handoff_p50: Duration,
}

impl Measured {
    /// Notifications per hand-off.
    pub fn notifications_per_handoff(&self) -> f64 {
        self.notifications as f64 / self.handoffs.max(1) as f64
    }

    /// getChildren calls per hand-off.
    pub fn get_children_per_handoff(&self) -> f64 {
        self.get_children as f64 / self.handoffs.max(1) as f64
    }
}

/// One run: a recipe, a contender count, and what came of it.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The recipe.
    pub recipe: Recipe,
    /// Contenders.
    pub contenders: u32,
    /// The measurements, or why the run failed.
    pub outcome: Result<Measured, String>,
}

/// Runs the benchmark as `shepherd bench herd` does: table on stdout, then the files.
pub fn main(args: &HerdArgs) -> ExitCode {
    println!("{}", table_header());
    let mut print = |r: &RunResult| println!("{}", table_row(r));
    match execute(args, &mut print) {
        Ok(results) => {
            if results.iter().all(|r| r.outcome.is_ok()) {
                ExitCode::SUCCESS
            } else {
                eprintln!("error: some runs failed (see the table)");
                ExitCode::FAILURE
            }
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Runs every (recipe, contenders) pair, calling `on_result` after each, then writes the CSV
/// and the plot if asked to.
///
/// # Errors
/// When the server cannot be started or reached at all, or a file cannot be written. A
/// failed run is not an error: it is reported in its [`RunResult`].
pub fn execute(
    args: &HerdArgs,
    on_result: &mut dyn FnMut(&RunResult),
) -> Result<Vec<RunResult>, String> {
    let client_rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the client runtime: {e}"))?;
    let (results, server_label) = match &args.connect {
        Some(connect) => {
            let probe = Probe::Mntr(first_host(connect));
            let version = client_rt.block_on(probe.version()).map_err(|e| {
                format!(
                    "cannot read the notification counters of {connect} with mntr: {e} \
                     (ZooKeeper needs 4lw.commands.whitelist to include mntr)"
                )
            })?;
            let results = client_rt.block_on(run_all(args, connect, &probe, on_result));
            (results, version)
        }
        None => {
            // The server gets its own threads, so that the clients' single thread (see the
            // module documentation) never delays it.
            let server_rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the server runtime: {e}"))?;
            let server = server_rt
                .block_on(Server::builder().max_client_connections(0).start())
                .map_err(|e| format!("cannot start the embedded server: {e}"))?;
            let probe = Probe::Embedded(&server);
            let results =
                client_rt.block_on(run_all(args, &server.connect_string(), &probe, on_result));
            server_rt.block_on(server.shutdown());
            (results, "embedded Shepherd".to_owned())
        }
    };
    if let Some(path) = &args.csv {
        std::fs::write(path, csv(&results))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if let Some(path) = &args.plot {
        std::fs::write(path, plot(&results, &server_label))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(results)
}

/// `host:port` of the first host of a connect string (for `mntr`).
fn first_host(connect: &str) -> String {
    let hosts = connect.split('/').next().unwrap_or(connect);
    let first = hosts.split(',').next().unwrap_or(hosts).trim();
    let has_port = match first.rfind(']') {
        Some(close) => first[close..].contains(':'),
        None => first.contains(':'),
    };
    if has_port {
        first.to_owned()
    } else {
        format!("{first}:2181")
    }
}

/// Reads the server's count of watch notifications sent.
enum Probe<'a> {
    Embedded(&'a ServerHandle),
    Mntr(String),
}

/// ZooKeeper's watch counters, one per event type, as `mntr` names them.
const WATCH_COUNTERS: [&str; 4] = [
    "node_created_watch_count",
    "node_deleted_watch_count",
    "node_changed_watch_count",
    "node_children_watch_count",
];

impl Probe<'_> {
    async fn notifications(&self) -> Result<u64, String> {
        match self {
            Probe::Embedded(server) => {
                Ok(server.inspect(|core| core.metrics().clone().notifications_total()))
            }
            Probe::Mntr(addr) => {
                let text = mntr(addr).await?;
                mntr_notifications(&text)
                    .ok_or_else(|| format!("mntr of {addr} has no watch notification counters"))
            }
        }
    }

    /// The server's `zk_version` (checks that the counters are readable).
    async fn version(&self) -> Result<String, String> {
        self.notifications().await?;
        match self {
            Probe::Embedded(_) => Ok("embedded Shepherd".to_owned()),
            Probe::Mntr(addr) => {
                let text = mntr(addr).await?;
                let version = mntr_values(&text)
                    .get("zk_version")
                    .map(|v| v.split([',', '-']).next().unwrap_or(v).trim().to_owned())
                    .unwrap_or_default();
                Ok(format!("ZooKeeper {version}"))
            }
        }
    }
}

/// Sends `mntr` to `addr` and returns the reply, within 10 s.
async fn mntr(addr: &str) -> Result<String, String> {
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await?;
        stream.write_all(b"mntr").await?;
        let mut reply = String::new();
        stream.read_to_string(&mut reply).await?;
        Ok::<_, std::io::Error>(reply)
    };
    match timeout(Duration::from_secs(10), exchange).await {
        Ok(Ok(reply)) if reply.is_empty() => Err(format!("{addr} answered mntr with nothing")),
        Ok(Ok(reply)) => Ok(reply),
        Ok(Err(e)) => Err(format!("mntr to {addr}: {e}")),
        Err(_) => Err(format!("mntr to {addr} timed out")),
    }
}

fn mntr_values(text: &str) -> HashMap<&str, &str> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            Some((parts.next()?, parts.next()?))
        })
        .collect()
}

/// The sum of the watch counters in an `mntr` reply: `zk_sum_<counter>` (ZooKeeper 3.6+,
/// where each counter is a summary of watchers notified per trigger) or else `zk_<counter>`.
fn mntr_notifications(text: &str) -> Option<u64> {
    let values = mntr_values(text);
    let mut found = false;
    let mut total = 0u64;
    for counter in WATCH_COUNTERS {
        let value = [format!("zk_sum_{counter}"), format!("zk_{counter}")]
            .iter()
            .find_map(|key| values.get(key.as_str())?.parse::<f64>().ok());
        if let Some(value) = value {
            found = true;
            total += value.round() as u64;
        }
    }
    found.then_some(total)
}

async fn run_all(
    args: &HerdArgs,
    connect: &str,
    probe: &Probe<'_>,
    on_result: &mut dyn FnMut(&RunResult),
) -> Vec<RunResult> {
    let opts = RunOptions {
        timeout: Duration::from_secs(args.timeout.max(1)),
        settle: Duration::from_millis(args.settle_ms),
    };
    let mut results = Vec::new();
    let mut index = 0;
    for &recipe in &args.recipes {
        for &contenders in &args.contenders {
            index += 1;
            let dir = format!("{ROOT}/herd-{}-{index}", std::process::id());
            let outcome = run_one(connect, probe, recipe, contenders as usize, &dir, opts).await;
            let result = RunResult {
                recipe,
                contenders,
                outcome,
            };
            on_result(&result);
            results.push(result);
        }
    }
    // Best effort: the root goes once no other benchmark uses it.
    if let Ok(client) = Client::connect(connect).await {
        let _ = timeout(Duration::from_secs(5), client.delete(ROOT, None)).await;
        let _ = timeout(Duration::from_secs(5), client.close()).await;
    }
    results
}

#[derive(Debug, Clone, Copy)]
struct RunOptions {
    timeout: Duration,
    settle: Duration,
}

async fn connect_one(connect: &str) -> Result<Client, shepherd_client::Error> {
    Client::builder()
        .session_timeout(Duration::from_secs(30))
        .connect_timeout(Duration::from_secs(10))
        .connect(connect)
        .await
}

async fn run_one(
    connect: &str,
    probe: &Probe<'_>,
    recipe: Recipe,
    n: usize,
    dir: &str,
    opts: RunOptions,
) -> Result<Measured, String> {
    let deadline = Instant::now() + opts.timeout;
    let coordinator = match timeout_at(deadline, connect_one(connect)).await {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => return Err(format!("cannot connect to {connect}: {e}")),
        Err(_) => return Err(format!("timed out connecting to {connect}")),
    };
    let mut clients = Vec::with_capacity(n);
    let outcome = timeout_at(
        deadline,
        measure(
            connect,
            probe,
            recipe,
            n,
            dir,
            opts,
            deadline,
            &coordinator,
            &mut clients,
        ),
    )
    .await
    .unwrap_or_else(|_| Err(format!("timed out after {} s", opts.timeout.as_secs())));
    // Cleanup, bounded whatever happened: sessions first (their ephemerals go with them),
    // then the run's folders.
    close_all(clients).await;
    let cleanup = async {
        let _ = coordinator.delete(dir, None).await;
        let _ = coordinator.close().await;
    };
    let _ = timeout(Duration::from_secs(10), cleanup).await;
    outcome
}

/// Closes every session at once, waiting at most 10 s.
async fn close_all(clients: Vec<Client>) {
    let mut set = JoinSet::new();
    for client in clients {
        set.spawn(async move {
            let _ = timeout(Duration::from_secs(10), client.close()).await;
        });
    }
    while set.join_next().await.is_some() {}
}

/// Opens `n` sessions, a few at a time.
async fn connect_many(connect: &str, n: usize, clients: &mut Vec<Client>) -> Result<(), String> {
    let permits = Arc::new(Semaphore::new(CONNECT_PARALLELISM));
    let mut set = JoinSet::new();
    for index in 0..n {
        let (permits, connect) = (permits.clone(), connect.to_owned());
        set.spawn(async move {
            let _permit = permits.acquire_owned().await;
            (index, connect_one(&connect).await)
        });
    }
    let mut failure = None;
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok((_, Ok(client))) => clients.push(client),
            Ok((index, Err(e))) => {
                failure.get_or_insert(format!(
                    "cannot open session {} of {n} ({} open): {e}; {CONNECTION_LIMIT_HINT}",
                    index + 1,
                    clients.len()
                ));
                set.abort_all();
            }
            Err(e) if e.is_cancelled() => {}
            Err(e) => {
                failure.get_or_insert(format!("connecting task failed: {e}"));
            }
        }
    }
    failure.map_or(Ok(()), Err)
}

/// Creates `path` as a persistent node; an existing one is fine.
async fn ensure_persistent(client: &Client, path: &str) -> Result<(), String> {
    match client.create(path, b"", &CreateOptions::persistent()).await {
        Ok(_) => Ok(()),
        Err(e) if e.is_node_exists() => Ok(()),
        Err(e) => Err(format!("cannot create {path}: {e}")),
    }
}

#[allow(clippy::too_many_arguments)]
async fn measure(
    connect: &str,
    probe: &Probe<'_>,
    recipe: Recipe,
    n: usize,
    dir: &str,
    opts: RunOptions,
    deadline: Instant,
    coordinator: &Client,
    clients: &mut Vec<Client>,
) -> Result<Measured, String> {
    ensure_persistent(coordinator, ROOT).await?;
    ensure_persistent(coordinator, dir).await?;
    // Every contender's lock is `LockKind::build` on `dir`: the fixed node `<dir>/lock`, or
    // sequential nodes in `dir`. The node that blocks every contender until the measured
    // phase starts:
    let blocker = if recipe == Recipe::EphemeralExists {
        coordinator
            .create(
                &format!("{dir}/lock"),
                b"bench-coordinator",
                &CreateOptions::ephemeral(),
            )
            .await
    } else {
        coordinator
            .create(
                &format!("{dir}/bench-coordinator-lock-"),
                b"",
                &CreateOptions::new(CreateMode::EphemeralSequential),
            )
            .await
    }
    .map_err(|e| format!("cannot create the coordinator's lock node: {e}"))?
    .0;

    connect_many(connect, n, clients).await?;
    let stats = LockStats::new();
    let mut contenders = JoinSet::new();
    for (index, client) in clients.iter().enumerate() {
        contenders.spawn(contend(
            client.clone(),
            recipe,
            index,
            dir.to_owned(),
            stats.clone(),
            deadline,
        ));
    }
    wait_queued(&stats, n, probe, opts.settle, deadline, &mut contenders).await?;

    let stats_before = stats.snapshot();
    let notifications_before = probe.notifications().await?;
    let start = Instant::now();
    coordinator
        .delete(&blocker, None)
        .await
        .map_err(|e| format!("cannot release the coordinator's lock node: {e}"))?;
    let mut acquisitions = Vec::with_capacity(n);
    while let Some(joined) = contenders.join_next().await {
        match joined {
            Ok(Ok(at)) => acquisitions.push(at),
            Ok(Err(e)) => return Err(e),
            Err(e) => return Err(format!("a contender failed: {e}")),
        }
    }
    let wall = start.elapsed();
    let notifications_after = probe.notifications().await?;
    let stats_after = stats.snapshot();
    Ok(Measured {
        handoffs: acquisitions.len() as u64,
        notifications: notifications_after.saturating_sub(notifications_before),
        get_children: stats_after.get_children - stats_before.get_children,
        wall,
        handoff_p50: handoff_p50(start, &acquisitions),
    })
}

/// Waits until all `n` contenders are blocked on a watch and nothing has moved for `settle`.
async fn wait_queued(
    stats: &LockStats,
    n: usize,
    probe: &Probe<'_>,
    settle: Duration,
    deadline: Instant,
    contenders: &mut JoinSet<Result<Instant, String>>,
) -> Result<(), String> {
    let n = n as u64;
    loop {
        tokio::select! {
            _ = stats.wait_for(|s| s.waiting >= n) => {}
            joined = contenders.join_next() => {
                return Err(match joined {
                    Some(Ok(Err(e))) => e,
                    Some(Err(e)) => format!("a contender failed: {e}"),
                    _ => "a contender got the lock while the coordinator held it".to_owned(),
                });
            }
            () = sleep_until(deadline) => {
                return Err(format!(
                    "timed out with {} of {n} contenders queued",
                    stats.snapshot().waiting
                ));
            }
        }
        let still = |a: &StatsSnapshot, b: &StatsSnapshot| a == b && b.waiting == n;
        let (stats0, count0) = (stats.snapshot(), probe.notifications().await?);
        sleep(settle).await;
        let (stats1, count1) = (stats.snapshot(), probe.notifications().await?);
        if still(&stats0, &stats1) && count0 == count1 {
            return Ok(());
        }
    }
}

/// One contender: acquire once, release at once. Returns the instant of acquisition (which
/// is also when its release starts).
async fn contend(
    client: Client,
    recipe: Recipe,
    index: usize,
    path: String,
    stats: Arc<LockStats>,
    deadline: Instant,
) -> Result<Instant, String> {
    let lock = recipe.kind(index).build(&client, path).with_stats(stats);
    let got = lock.acquire_until(deadline).await;
    let guard = match got {
        Ok(Some(guard)) => guard,
        Ok(None) => return Err(format!("contender {index} timed out waiting for the lock")),
        Err(e) => return Err(format!("contender {index}: {e}")),
    };
    let acquired = Instant::now();
    guard
        .release()
        .await
        .map_err(|e| format!("contender {index} cannot release: {e}"))?;
    Ok(acquired)
}

/// The median, over acquisitions, of the time since the latest release before each (the
/// first release is `start`; every other release starts the instant its holder acquired).
fn handoff_p50(start: Instant, acquisitions: &[Instant]) -> Duration {
    let mut releases: Vec<Instant> = acquisitions.to_vec();
    releases.push(start);
    releases.sort();
    let mut gaps: Vec<Duration> = acquisitions
        .iter()
        .map(|&at| {
            let before = releases.partition_point(|&r| r < at);
            match before.checked_sub(1) {
                Some(i) => at - releases[i],
                None => Duration::ZERO,
            }
        })
        .collect();
    gaps.sort();
    gaps.get(gaps.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or_default()
}

fn table_header() -> String {
    format!(
        "{:<24}{:>6}{:>10}{:>15}{:>16}{:>21}{:>11}{:>10}",
        "recipe",
        "N",
        "handoffs",
        "notifications",
        "notif/handoff",
        "getChildren/handoff",
        "wall ms",
        "p50 µs"
    )
}

fn table_row(r: &RunResult) -> String {
    match &r.outcome {
        Ok(m) => format!(
            "{:<24}{:>6}{:>10}{:>15}{:>16.2}{:>21.2}{:>11.1}{:>10}",
            r.recipe.name(),
            r.contenders,
            m.handoffs,
            m.notifications,
            m.notifications_per_handoff(),
            m.get_children_per_handoff(),
            m.wall.as_secs_f64() * 1e3,
            m.handoff_p50.as_micros()
        ),
        Err(e) => format!("{:<24}{:>6}  FAILED: {e}", r.recipe.name(), r.contenders),
    }
}

/// The CSV document: [`CSV_HEADER`], then one row per run (a failed run keeps its recipe and
/// contenders and leaves the measurements empty).
pub fn csv(results: &[RunResult]) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for r in results {
        // `write!` into a String cannot fail.
        let _ = match &r.outcome {
            Ok(m) => writeln!(
                out,
                "{},{},{},{},{:.3},{:.3},{:.1},{}",
                r.recipe.name(),
                r.contenders,
                m.handoffs,
                m.notifications,
                m.notifications_per_handoff(),
                m.get_children_per_handoff(),
                m.wall.as_secs_f64() * 1e3,
                m.handoff_p50.as_micros()
            ),
            Err(_) => writeln!(out, "{},{},,,,,,", r.recipe.name(), r.contenders),
        };
    }
    out
}

/// The SVG chart: notifications per hand-off against contenders, one line per recipe.
pub fn plot(results: &[RunResult], server: &str) -> String {
    let series: Vec<Series> = Recipe::ALL
        .iter()
        .filter(|recipe| results.iter().any(|r| r.recipe == **recipe))
        .map(|&recipe| Series {
            name: recipe.name().to_owned(),
            points: results
                .iter()
                .filter(|r| r.recipe == recipe)
                .filter_map(|r| {
                    let m = r.outcome.as_ref().ok()?;
                    Some((f64::from(r.contenders), m.notifications_per_handoff()))
                })
                .collect(),
        })
        .collect();
    log_log_chart(
        &format!("Herd benchmark: {server}"),
        "contenders (sessions queued on one lock)",
        "watch notifications per lock hand-off",
        &series,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mntr_counters_are_summed() {
        let text = "zk_version\t3.8.0-debian, built on 2022\n\
                    zk_sum_node_created_watch_count\t2\n\
                    zk_cnt_node_created_watch_count\t1\n\
                    zk_sum_node_deleted_watch_count\t5\n\
                    zk_sum_node_children_watch_count\t7\n";
        assert_eq!(mntr_notifications(text), Some(14));
        assert_eq!(
            mntr_notifications("zk_node_deleted_watch_count\t3\n"),
            Some(3)
        );
        assert_eq!(mntr_notifications("zk_version\t3.8.0\n"), None);
        assert_eq!(first_host("a:1,b:2/chroot"), "a:1");
        assert_eq!(first_host("localhost"), "localhost:2181");
    }

    #[test]
    fn handoff_gaps_follow_the_latest_release() {
        let t = Instant::now();
        let ms = Duration::from_millis;
        let p50 = handoff_p50(t, &[t + ms(1), t + ms(4), t + ms(6)]);
        // Gaps 1, 3, 2 ms.
        assert_eq!(p50, ms(2));
        assert_eq!(handoff_p50(t, &[]), Duration::ZERO);
    }

    /// The whole code path on the embedded server, small enough to be quick.
    #[test]
    fn small_runs_on_the_embedded_server() {
        let out = std::env::temp_dir().join(format!("shepherd-bench-herd-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let args = HerdArgs {
            contenders: vec![2, 5],
            recipes: Recipe::ALL.to_vec(),
            connect: None,
            csv: Some(out.join("herd.csv")),
            plot: Some(out.join("herd.svg")),
            timeout: 20,
            settle_ms: 20,
        };
        let mut seen = 0;
        let results = execute(&args, &mut |_| seen += 1).unwrap();
        assert_eq!((results.len(), seen), (12, 12));
        let per_handoff = |recipe: Recipe, n: u32| {
            let r = results
                .iter()
                .find(|r| r.recipe == recipe && r.contenders == n)
                .unwrap();
            let m = r
                .outcome
                .as_ref()
                .unwrap_or_else(|e| panic!("{recipe:?} {n}: {e}"));
            assert_eq!(m.handoffs, u64::from(n));
            m.notifications_per_handoff()
        };
        for n in [2, 5] {
            for recipe in [Recipe::SequentialPredecessor, Recipe::CuratorMutex] {
                // Every waiter is woken exactly once, by its predecessor's delete.
                assert_eq!(per_handoff(recipe, n), 1.0, "{recipe:?} {n}");
            }
            let shared = per_handoff(Recipe::SharedPredecessor, n);
            assert!(
                (1.0..=1.5).contains(&shared),
                "shared-predecessor {n}: {shared}"
            );
        }
        for (herd, predecessor) in [
            (Recipe::SequentialHerd, Recipe::SequentialPredecessor),
            (Recipe::SharedHerd, Recipe::SharedPredecessor),
            (Recipe::EphemeralExists, Recipe::CuratorMutex),
        ] {
            assert!(
                per_handoff(herd, 5) > per_handoff(predecessor, 5),
                "{herd:?} against {predecessor:?}"
            );
        }
        let csv = std::fs::read_to_string(out.join("herd.csv")).unwrap();
        let mut lines = csv.lines();
        assert_eq!(
            lines.next(),
            Some(
                "recipe,contenders,handoffs,notifications,notifications_per_handoff,get_children_per_handoff,wall_ms,handoff_p50_us"
            )
        );
        assert_eq!(lines.count(), 12);
        let svg = std::fs::read_to_string(out.join("herd.svg")).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("sequential-herd"));
        let _ = std::fs::remove_dir_all(&out);
    }
}
