//! `shepherd-bench latencies`: the synchronous phases of zk-smoketest's `zk-latencies.py`
//! (github.com/phunt/zk-smoketest, `synchronous_latency_test`), one session, one call at a
//! time, against any ZooKeeper (`--connect`, else a `shepherd serve` child): create `--count`
//! persistent nodes with `--size`-byte values, set each, get each, delete each, create as many
//! ephemeral nodes, set an exists watch on each, delete them, and wait for every watch's
//! notification. Where the script prints each phase's
//! mean, this keeps every call's latency and reports the percentiles (docs/bench/latencies.md).
//! `--persistent-only` stops after the four persistent phases.
//!
//! Invariants: a call is timed from before it is sent to its reply, and nothing else is in
//! flight on the session meanwhile (the phases are the script's synchronous ones); a phase's
//! figures count only calls that succeeded, and any failed call ends the run with its error, so
//! a server that refuses work never measures as fast.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use shepherd_cli::runtime::Threads;
use shepherd_client::{Client, CreateOptions};

use crate::error::{Error, Result};
use crate::load::percentile;
use crate::target::{Target, TargetArgs, Unused};

/// The options of `shepherd-bench latencies`.
#[derive(Args, Debug, Clone)]
pub struct LatenciesArgs {
    /// Nodes per phase (zk-latencies' `--znode_count`, default 10 000 there too).
    #[arg(long, default_value_t = 10_000)]
    pub count: usize,
    /// Bytes of each value (zk-latencies' `--znode_size`; 25 by default there, 100 here, as the
    /// benchmark asks).
    #[arg(long, default_value_t = 100)]
    pub size: usize,
    /// Only the four persistent phases: create, set, get and delete. A server that answers
    /// only those can then be measured: the floor (`examples/loadgen_floor.rs`), which answers
    /// with canned replies and does no work.
    #[arg(long)]
    pub persistent_only: bool,
    #[command(flatten)]
    pub target: TargetArgs,
}

/// The phases, in the order the script runs them.
const PHASES: [&str; 8] = [
    "create",
    "set",
    "get",
    "delete",
    "create_ephemeral",
    "watch",
    "delete_ephemeral",
    "notification",
];

/// One phase's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    /// One of [`PHASES`].
    pub name: &'static str,
    /// Every call's latency, sorted; for `notification`, the time from the last ephemeral
    /// delete's reply to each watch's event being seen.
    pub latencies: Vec<Duration>,
    /// The phase's wall time.
    pub total: Duration,
}

/// The CSV header of [`csv_row`].
pub const CSV_HEADER: &str = "server,phase,count,size,p50_us,p99_us,p999_us,mean_us,total_ms";

/// A phase as one CSV row.
pub fn csv_row(server: &str, size: usize, phase: &Phase) -> String {
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let mean = phase.latencies.iter().sum::<Duration>() / (phase.latencies.len().max(1) as u32);
    format!(
        "{server},{},{},{size},{:.1},{:.1},{:.1},{:.1},{:.1}",
        phase.name,
        phase.latencies.len(),
        us(percentile(&phase.latencies, 0.50)),
        us(percentile(&phase.latencies, 0.99)),
        us(percentile(&phase.latencies, 0.999)),
        us(mean),
        phase.total.as_secs_f64() * 1e3,
    )
}

/// Runs the benchmark and prints a CSV header and one row per phase.
pub fn main(args: &LatenciesArgs) -> ExitCode {
    // One call at a time: the calling thread runs the client, so that a reply reaches the
    // waiting call without a hop between threads, which would add to every latency, on
    // either server, the same scheduling delay.
    let unused = [
        Unused::ServerPid,
        Unused::BeforeReading,
        Unused::ClientThreads,
    ];
    let target = match args
        .target
        .refuse("latencies", &unused)
        .and_then(|()| args.target.open())
    {
        Ok(target) => target,
        Err(error) => {
            eprintln!("latencies: {error}");
            return ExitCode::FAILURE;
        }
    };
    let phases = match crate::block::run("latencies", Threads::Current, execute(args, &target)) {
        Ok(phases) => phases,
        Err(code) => return code,
    };
    let label = args.target.label.as_deref().unwrap_or(&target.connect);
    println!("{CSV_HEADER}");
    for phase in &phases {
        println!("{}", csv_row(label, args.size, phase));
    }
    ExitCode::SUCCESS
}

/// The eight phases (the first four with `--persistent-only`) against `target`, under a root
/// of this process's own, removed after.
///
/// # Errors
/// The connection, or any call of a phase, failed.
pub async fn execute(args: &LatenciesArgs, target: &Target) -> Result<Vec<Phase>> {
    let client = Client::builder()
        .session_timeout(Duration::from_secs(30))
        .connect(&target.connect)
        .await
        .map_err(|source| failed(format!("cannot connect to {}", target.connect), source))?;
    let root = format!("/zk-latencies-{}", std::process::id());
    client
        .create(&root, b"", &CreateOptions::persistent())
        .await
        .map_err(|source| failed(format!("cannot create {root}"), source))?;
    let data = vec![b'x'; args.size];
    let paths: Vec<String> = (0..args.count)
        .map(|i| format!("{root}/session_{i}"))
        .collect();
    let mut phases = Vec::with_capacity(PHASES.len());
    // References, so that each call's `async move` copies them rather than taking the values.
    let (client, data) = (&client, &data[..]);

    phases.push(
        timed("create", &paths, |p| async move {
            client
                .create(p, data, &CreateOptions::persistent())
                .await
                .map(drop)
        })
        .await?
        .0,
    );
    phases.push(
        timed("set", &paths, |p| async move {
            client.set_data(p, data, None).await.map(drop)
        })
        .await?
        .0,
    );
    phases.push(
        timed("get", &paths, |p| async move {
            client.get_data(p).await.map(drop)
        })
        .await?
        .0,
    );
    phases.push(
        timed(
            "delete",
            &paths,
            |p| async move { client.delete(p, None).await },
        )
        .await?
        .0,
    );
    if args.persistent_only {
        remove_root(client, &root).await?;
        let _ = client.close().await;
        return Ok(phases);
    }
    phases.push(
        timed("create_ephemeral", &paths, |p| async move {
            client
                .create(p, data, &CreateOptions::ephemeral())
                .await
                .map(drop)
        })
        .await?
        .0,
    );
    let (phase, watchers) = timed("watch", &paths, |p| async move {
        client.exists_w(p).await.map(|(_, watcher)| watcher)
    })
    .await?;
    phases.push(phase);
    phases.push(
        timed("delete_ephemeral", &paths, |p| async move {
            client.delete(p, None).await
        })
        .await?
        .0,
    );
    // As the script's "notif" line: how long, once the deletes are done, until every watch's
    // event is in (most arrived during the deletes, each before the reply of the delete after).
    let deletes_done = Instant::now();
    let mut latencies = Vec::with_capacity(watchers.len());
    for (path, watcher) in paths.iter().zip(watchers) {
        watcher
            .await
            .map_err(|source| failed(format!("the notification of {path}"), source))?;
        latencies.push(deletes_done.elapsed());
    }
    phases.push(finish("notification", latencies, deletes_done));
    remove_root(client, &root).await?;
    let _ = client.close().await;
    Ok(phases)
}

/// Deletes the run's root, which the phases left empty.
async fn remove_root(client: &Client, root: &str) -> Result<()> {
    client
        .delete(root, None)
        .await
        .map_err(|source| failed(format!("cannot delete {root}"), source))
}

/// Calls `call` on every path in turn, timing each; the phase, and what the calls returned.
async fn timed<'a, F, Fut, T>(
    name: &'static str,
    paths: &'a [String],
    call: F,
) -> Result<(Phase, Vec<T>)>
where
    F: Fn(&'a str) -> Fut,
    Fut: Future<Output = std::result::Result<T, shepherd_client::Error>>,
{
    let started = Instant::now();
    let mut latencies = Vec::with_capacity(paths.len());
    let mut returned = Vec::with_capacity(paths.len());
    for path in paths {
        let one = Instant::now();
        let value = call(path)
            .await
            .map_err(|source| failed(format!("{name} {path}"), source))?;
        latencies.push(one.elapsed());
        returned.push(value);
    }
    Ok((finish(name, latencies, started), returned))
}

fn finish(name: &'static str, mut latencies: Vec<Duration>, started: Instant) -> Phase {
    let total = started.elapsed();
    latencies.sort_unstable();
    Phase {
        name,
        latencies,
        total,
    }
}

fn failed(what: String, source: shepherd_client::Error) -> Error {
    Error::Client { what, source }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_reads_as_one_csv_row() {
        let phase = Phase {
            name: "get",
            latencies: (1..=100).map(Duration::from_micros).collect(),
            total: Duration::from_millis(12),
        };
        assert_eq!(
            csv_row("zk", 100, &phase),
            "zk,get,100,100,50.0,99.0,100.0,50.5,12.0"
        );
        assert_eq!(
            CSV_HEADER.split(',').count(),
            csv_row("zk", 100, &phase).split(',').count()
        );
        assert_eq!(PHASES.len(), 8);
    }
}
