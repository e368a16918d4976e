//! `shepherd-bench watches`: the server's memory per data watch, and the time to fire them,
//! in the unit of ZooKeeper's own `WatchBench` (a million watches): `--nodes` nodes, then
//! `--sessions` sessions each setting a data watch (`getData` with a watch) on
//! `--watches-per-session` of them, the sessions' ranges staggered so that every node is
//! watched by the same number of sessions.
//!
//! Memory is the server's resident set (`VmRSS`) after the sessions are open and before any
//! watch is set, and after every watch is set: per watch, and per million. Firing is one
//! `setData` of every node (4 sessions, 256 in flight each): the time from the first set sent
//! to the last notification received, over every session.
//!
//! Invariants: the figures are only reported when every watch was set and every one fired
//! exactly once (a set watch that never fires, a failed call, a lost session are errors,
//! never figures); every wait is bounded by `--deadline`.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use futures_util::stream;
use futures_util::{StreamExt, TryStreamExt};
use shepherd_client::{Client, OneshotWatcher};
use tokio::task::JoinSet;

use crate::error::{Error, Result};
use crate::load::Phase;
use crate::load::phase::{Drive, node_path};
use crate::rss::{self, Growth};
use crate::sessions::connect_many;
use crate::target::TargetArgs;

/// Sessions that create and then set the nodes.
const WRITERS: usize = 4;
/// Requests in flight per writing session.
const WRITE_IN_FLIGHT: usize = 256;
/// `getData` calls in flight per watching session while the watches are set.
const WATCH_IN_FLIGHT: usize = 64;

/// `shepherd-bench watches` options.
#[derive(Args, Debug, Clone)]
pub struct WatchesArgs {
    /// Nodes watched.
    #[arg(long, default_value_t = 100_000)]
    pub nodes: usize,
    /// Sessions setting watches (each its own connection: ZooKeeper's maxClientCnxns must
    /// allow them).
    #[arg(long, default_value_t = 1000)]
    pub sessions: usize,
    /// Data watches per session, each on a different node (at most --nodes).
    #[arg(long = "watches-per-session", default_value_t = 1000)]
    pub per_session: usize,
    /// Bytes of each node's data.
    #[arg(long = "value-size", default_value_t = 16)]
    pub value_size: usize,
    /// Wait this long, ms, before each memory reading.
    #[arg(long = "settle-ms", value_name = "MS", default_value_t = 2000)]
    pub settle_ms: u64,
    /// The longest any step may take, seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub deadline: u64,
    #[command(flatten)]
    pub target: TargetArgs,
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Watches set (and fired).
    pub watches: usize,
    /// The server's RSS before the watches and with every watch set.
    pub rss: Growth,
    /// Time to set them.
    pub arm_seconds: f64,
    /// Time from the first setData sent to the last notification received.
    pub fire_seconds: f64,
}

impl Measurement {
    /// Bytes of RSS per million watches.
    pub fn bytes_per_million(&self) -> f64 {
        self.rss.per(self.watches) * 1e6
    }
}

/// Runs the benchmark as `shepherd-bench watches` does: one line on stdout.
pub fn main(args: &WatchesArgs) -> ExitCode {
    match execute(args) {
        Ok((server, m)) => {
            println!(
                "watches: {server}: {} watches set in {:.1} s, RSS {:.1} → {:.1} MiB, {:.1} MiB \
                 per million; all fired in {:.2} s",
                m.watches,
                m.arm_seconds,
                m.rss.before as f64 / 1_048_576.0,
                m.rss.after as f64 / 1_048_576.0,
                m.bytes_per_million() / 1_048_576.0,
                m.fire_seconds
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// One run: nodes, sessions, watches, the readings, the firing.
///
/// # Errors
/// When the server cannot be reached or started, a call fails, a watch does not fire once,
/// a step outlasts the deadline, or the memory cannot be read.
pub fn execute(args: &WatchesArgs) -> Result<(String, Measurement)> {
    if args.per_session > args.nodes {
        return Err(Error::Refused(format!(
            "{} watches per session need as many nodes, not {}",
            args.per_session, args.nodes
        )));
    }
    let runtime = args.target.client_runtime()?;
    let mut target = args.target.open()?;
    let server = args.target.label.clone().unwrap_or(target.name.clone());
    let deadline = Duration::from_secs(args.deadline);
    let settle = Duration::from_millis(args.settle_ms);
    let measured = runtime.block_on(async {
        let bounded = |what: &'static str| {
            move |_| Error::Refused(format!("{what} took longer than {}s", deadline.as_secs()))
        };
        let mut writers = Vec::new();
        connect_many(&target.connect, WRITERS, &mut writers).await?;
        let dir = format!("/shepherd-bench-watches-{}", std::process::id());
        let mut drive = Drive {
            phase: Phase::Create,
            dir: dir.clone(),
            nodes: args.nodes,
            in_flight: WRITE_IN_FLIGHT,
            rate: None,
            value: Arc::from(vec![b'v'; args.value_size]),
        };
        create_folder(&writers[0], &dir).await?;
        checked(drive.run(&writers).await?, "create")?;
        let mut watchers = Vec::new();
        let opening = connect_many(&target.connect, args.sessions, &mut watchers);
        tokio::time::timeout(deadline, opening)
            .await
            .map_err(bounded("opening the sessions"))??;
        let ((pending, arm_seconds), rss) = rss::around(&target, settle, async {
            let armed = Instant::now();
            let pending = tokio::time::timeout(deadline, arm(&watchers, &dir, args))
                .await
                .map_err(bounded("setting the watches"))??;
            Ok((pending, armed.elapsed().as_secs_f64()))
        })
        .await?;
        let watches = pending.iter().map(Vec::len).sum();
        let fired = Arc::new(AtomicUsize::new(0));
        let counter = tokio::spawn(count_fired(pending, Arc::clone(&fired)));
        let started = Instant::now();
        drive.phase = Phase::Set;
        checked(drive.run(&writers).await?, "setData")?;
        let outcome = tokio::time::timeout(deadline, counter).await;
        let fire_seconds = started.elapsed().as_secs_f64();
        match outcome {
            Err(_) => {
                return Err(Error::Refused(format!(
                    "{} of {watches} watches fired within {}s",
                    fired.load(Ordering::Relaxed),
                    deadline.as_secs()
                )));
            }
            Ok(Err(join)) => return Err(Error::Refused(format!("the counter failed: {join}"))),
            Ok(Ok(Err(error))) => return Err(error),
            Ok(Ok(Ok(()))) => {}
        }
        drive.phase = Phase::Delete;
        let _ = drive.run(&writers).await;
        let _ = writers[0].delete(&dir, None).await;
        let close = watchers.iter().chain(&writers).map(Client::close);
        let _ = tokio::time::timeout(deadline, futures_util::future::join_all(close)).await;
        Ok(Measurement {
            watches,
            rss,
            arm_seconds,
            fire_seconds,
        })
    });
    let _ = target.stop();
    Ok((server, measured?))
}

/// Sets every session's watches: session `k` watches the `per_session` nodes from
/// `k × nodes / sessions` on (wrapping), so every node has about the same number of watchers.
async fn arm(
    clients: &[Client],
    dir: &str,
    args: &WatchesArgs,
) -> Result<Vec<Vec<OneshotWatcher>>> {
    let sessions = clients.len();
    let per_session = clients.iter().enumerate().map(|(k, client)| {
        let first = k * args.nodes / sessions;
        stream::iter(0..args.per_session)
            .map(move |j| {
                let path = node_path(dir, (first + j) % args.nodes);
                async move {
                    match client.get_data_w(&path).await {
                        Ok((_, _, watcher)) => Ok(watcher),
                        Err(source) => Err(Error::Client {
                            what: format!("getData with a watch on {path}"),
                            source,
                        }),
                    }
                }
            })
            .buffer_unordered(WATCH_IN_FLIGHT)
            .try_collect::<Vec<_>>()
    });
    stream::iter(per_session)
        .buffer_unordered(sessions.max(1))
        .try_collect()
        .await
}

/// Waits for every watcher, counting them in `fired`; the first that ends in an error (its
/// session ended) is returned.
///
/// One task per session awaits its watchers in turn: their events arrive in about that order,
/// and a million futures in one `FuturesUnordered` spend minutes re-polling one another once
/// the runtime's cooperative budget runs out.
async fn count_fired(pending: Vec<Vec<OneshotWatcher>>, fired: Arc<AtomicUsize>) -> Result<()> {
    let mut tasks: JoinSet<Result<()>> = JoinSet::new();
    for watchers in pending {
        let fired = Arc::clone(&fired);
        tasks.spawn(async move {
            for watcher in watchers {
                watcher.await.map_err(|source| Error::Client {
                    what: "a watch ended without its event".to_owned(),
                    source,
                })?;
                fired.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.map_err(|join| Error::Refused(format!("a waiting task failed: {join}")))??;
    }
    Ok(())
}

/// The phase's sample, or its first error.
fn checked(sample: crate::load::phase::Sample, what: &str) -> Result<()> {
    match sample.first_error {
        None => Ok(()),
        Some(error) => Err(Error::Refused(format!(
            "{} {what} calls failed, the first: {error}",
            sample.errors
        ))),
    }
}

/// Creates `dir`; it must be new.
async fn create_folder(client: &Client, dir: &str) -> Result<()> {
    let options = shepherd_client::CreateOptions::persistent();
    client
        .create(dir, b"", &options)
        .await
        .map(|_| ())
        .map_err(|source| Error::Client {
            what: format!("cannot create {dir}"),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_server::TestServer;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: WatchesArgs,
    }

    /// A small run on an embedded server in this process: every watch is set and fires; more
    /// watches per session than nodes is refused.
    #[test]
    fn a_small_run_on_an_embedded_server() {
        let server =
            TestServer::start(shepherd_server::Server::builder().max_client_connections(0));
        let (connect, pid) = (server.connect.as_str(), server.pid.as_str());
        let mut args = Cli::try_parse_from([
            "t",
            "--nodes",
            "300",
            "--sessions",
            "20",
            "--watches-per-session",
            "50",
            "--settle-ms",
            "0",
            "--deadline",
            "60",
            "--connect",
            connect,
            "--server-pid",
            pid,
        ])
        .unwrap()
        .args;
        let (_, m) = execute(&args).unwrap();
        assert_eq!(m.watches, 1000);
        assert!(m.rss.before > 0 && m.rss.after > 0 && m.fire_seconds > 0.0);
        args.per_session = 301;
        assert!(
            execute(&args)
                .unwrap_err()
                .to_string()
                .contains("need as many nodes")
        );
        server.stop();
    }
}
