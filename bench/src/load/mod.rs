//! `shepherd-bench load`: throughput and latency of plain reads and writes, with N sessions
//! each keeping W requests in flight, through the phases create → set → get → delete over K
//! nodes.
//!
//! One *run* is one session count with one window (`--in-flight`; a list runs each in turn):
//! its sessions connect, its folder (`--root`/`run-<pid>-<n>`) is created, and each phase of
//! `--phases` runs in turn over the run's K nodes ([`phase`]); then the sessions close and the folder is deleted if it is empty.
//! Per phase it reports replies per second, latency p50/p99/p99.9/max, and CPU per request of
//! the server (when its process is known) and of this process, the clients ([`report`]).
//!
//! The server is a `shepherd serve` child started for the whole benchmark (so that its CPU is
//! its own, apart from the client's), or any ZooKeeper given by `--connect`, whose CPU is read
//! when `--server-pid` names its process ([`crate::target`]).
//!
//! `--duration` runs the set, get and mixed phases for a time rather than one pass, `--dir`
//! reuses one folder's nodes across invocations (fill it once with a create phase), and
//! `--trace` writes every request with its wall-clock schedule, to line latencies up with a
//! server's log (docs/bench/snapshot-latency.md).
//!
//! Invariants: the clients run on their own multi-thread runtime (`--client-threads`), never in
//! the server's process (an open loop adds one thread, its pacer: [`pace`]); every session is a
//! `shepherd-client` [`Client`](shepherd_client::Client), one connection each, pipelining its
//! requests; runs never share nodes, so a run's errors are its own.

mod pace;
pub mod phase;
mod report;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use tokio::time::timeout;

pub use phase::Phase;
pub use report::PhaseResult;
pub(crate) use report::percentile;

use crate::error::{Error, Result};
use crate::folder;
use crate::sessions::connect_many;
use crate::target::{Target, TargetArgs, cpu_time};

/// `--rate`: a finite number of requests per second, above zero and at most a billion (a gap
/// between two requests that a [`std::time::Duration`] holds).
fn parse_rate(text: &str) -> std::result::Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 && rate <= 1e9 => Ok(rate),
        Ok(_) => Err("the rate must be above 0 and at most 1000000000 per second".to_owned()),
        Err(e) => Err(e.to_string()),
    }
}

/// `shepherd-bench load` options.
#[derive(Args, Debug, Clone)]
pub struct LoadArgs {
    /// Session counts to run, comma-separated (one connection each).
    #[arg(long, value_delimiter = ',', default_value = "1,4,64",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub sessions: Vec<u32>,
    /// Most requests each session keeps in flight (pipelined on its connection); a
    /// comma-separated list runs every session count with each window in turn, to find the
    /// window at which a server peaks.
    #[arg(long = "in-flight", value_name = "W", value_delimiter = ',', default_value = "16",
          value_parser = clap::value_parser!(u32).range(1..=8192))]
    pub in_flight: Vec<u32>,
    /// Nodes per run (K): each phase sends one request per node.
    #[arg(long, value_name = "K", default_value_t = 20_000)]
    pub nodes: usize,
    /// Data bytes of every create and set.
    #[arg(long = "value-size", value_name = "BYTES", default_value_t = 16,
          value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub value_size: u32,
    /// Offer this many requests per second over all sessions (open loop; latency from each
    /// request's scheduled time) instead of sending as fast as replies come.
    #[arg(long, value_name = "R", value_parser = parse_rate)]
    pub rate: Option<f64>,
    /// Phases to run, in order, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "create,set,get,delete"
    )]
    pub phases: Vec<Phase>,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Folder holding every run's nodes.
    #[arg(long, default_value = "/shepherd-bench-load")]
    pub root: String,
    /// Use this folder for the nodes (created with its parents if missing, never deleted)
    /// instead of a new `--root/run-…` per run: a create phase fills it once, and later
    /// invocations with the same --nodes set and get its nodes.
    #[arg(long, value_name = "PATH")]
    pub dir: Option<String>,
    /// Run each set, get or mixed phase this many seconds, each session cycling over its
    /// nodes, instead of one request per node (create and delete still make one pass).
    #[arg(long, value_name = "SECS")]
    pub duration: Option<f64>,
    /// Write every request as CSV (sessions, phase, op, due time in µs since the Unix epoch,
    /// latency µs, ok) to line latencies up with the server's log.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Also write the results as CSV, one row per phase of each run.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

/// Runs the benchmark as `shepherd-bench load` does: a table on stdout, the CSV if asked.
pub fn main(args: &LoadArgs) -> ExitCode {
    match execute(args, &mut |line| println!("{line}")) {
        Ok(results) if results.iter().all(|r| r.errors == 0) => ExitCode::SUCCESS,
        Ok(_) => {
            eprintln!("error: some requests failed (see the table)");
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Starts or reaches the server, runs every session count, and writes the CSV if asked;
/// `print` gets the table line by line.
///
/// # Errors
/// When the server cannot be started or reached, a session cannot connect, or a file cannot be
/// written. Failed requests are not errors: they are counted in their phase.
pub fn execute(args: &LoadArgs, print: &mut dyn FnMut(&str)) -> Result<Vec<PhaseResult>> {
    let mut target = args.target.open()?;
    let runtime = args.target.client_runtime()?;
    let mut trace = match &args.trace {
        Some(path) => {
            let mut file = File::create(path).map(BufWriter::new);
            if let Ok(file) = &mut file {
                let _ = writeln!(file, "{TRACE_HEADER}");
            }
            Some(file.map_err(|source| Error::Io {
                what: format!("create {}", path.display()),
                source,
            })?)
        }
        None => None,
    };
    let server = args
        .target
        .label
        .clone()
        .unwrap_or_else(|| target.name.clone());
    let windows = args
        .in_flight
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    print(&format!(
        "# {server} at {}; {} nodes, {} B values, {windows} in flight per session",
        target.connect, args.nodes, args.value_size
    ));
    print(&report::table_header());
    let mut results = Vec::new();
    // Every session count with every window: each pair is a run of its own.
    let runs = args
        .sessions
        .iter()
        .flat_map(|&sessions| args.in_flight.iter().map(move |&window| (sessions, window)));
    for (index, (sessions, window)) in runs.enumerate() {
        let context = PhaseResult::context(
            &server,
            sessions as usize,
            window as usize,
            args.value_size as usize,
            args.rate,
        );
        let dir = args.dir.clone().unwrap_or_else(|| {
            format!(
                "{}/run-{}-{}",
                args.root.trim_end_matches('/'),
                std::process::id(),
                index + 1
            )
        });
        let run = runtime.block_on(run(args, &target, &context, &dir, &mut trace, print))?;
        results.extend(run);
    }
    drop(runtime);
    target.stop()?;
    if let (Some(file), Some(path)) = (&mut trace, &args.trace) {
        file.flush().map_err(|source| Error::Io {
            what: format!("write {}", path.display()),
            source,
        })?;
    }
    if let Some(path) = &args.csv {
        std::fs::write(path, report::csv(&results)).map_err(|source| Error::Io {
            what: format!("write {}", path.display()),
            source,
        })?;
    }
    Ok(results)
}

/// One session count with one window: connect, every phase, close.
async fn run(
    args: &LoadArgs,
    target: &Target,
    context: &PhaseResult,
    dir: &str,
    trace: &mut Option<BufWriter<File>>,
    print: &mut dyn FnMut(&str),
) -> Result<Vec<PhaseResult>> {
    let mut clients = Vec::new();
    connect_many(&target.connect, context.sessions, &mut clients).await?;
    let first = &clients[0];
    // The folder and, with --dir, every missing ancestor of it; under --root, the root too.
    let folder = dir.trim_end_matches('/');
    folder::ensure(first, folder).await?;
    let value: Arc<[u8]> = vec![b'v'; args.value_size as usize].into();
    let mut results = Vec::new();
    for &phase in &args.phases {
        let drive = phase::Drive {
            phase,
            dir: dir.to_owned(),
            nodes: args.nodes,
            in_flight: context.in_flight,
            rate: args.rate,
            value: value.clone(),
        };
        let own = std::process::id();
        let (server_before, client_before) = (target.cpu()?, cpu_time(own)?);
        let extent = phase::Extent {
            duration: args.duration.map(Duration::from_secs_f64),
            trace: trace.is_some(),
        };
        let mut sample = drive.run_for(&clients, extent).await?;
        if let Some(file) = trace {
            write_trace(file, context.sessions, phase, &sample.trace).map_err(|source| {
                Error::Io {
                    what: "write the trace".to_owned(),
                    source,
                }
            })?;
            sample.trace = Vec::new();
        }
        let (server_after, client_after) = (target.cpu()?, cpu_time(own)?);
        let mut result = PhaseResult::new(context, phase, sample);
        result.server_cpu = server_after
            .zip(server_before)
            .map(|(after, before)| after.saturating_sub(before));
        result.client_cpu = client_after.saturating_sub(client_before);
        print(&report::table_row(&result));
        results.push(result);
    }
    // Best effort: a run that kept its nodes (no delete phase) keeps its folder too, and a
    // --dir is kept whatever happened to its nodes.
    if args.dir.is_none() {
        let _ = timeout(Duration::from_secs(10), first.delete(dir, None)).await;
    }
    for client in &clients {
        let _ = timeout(Duration::from_secs(10), client.close()).await;
    }
    Ok(results)
}

/// The header line of `--trace`.
pub const TRACE_HEADER: &str = "sessions,phase,op,due_unix_us,latency_us,ok";

/// Appends one phase's requests to the `--trace` file.
fn write_trace(
    out: &mut impl Write,
    sessions: usize,
    phase: Phase,
    trace: &[phase::Traced],
) -> std::io::Result<()> {
    for t in trace {
        writeln!(
            out,
            "{sessions},{},{},{},{},{}",
            phase.name(),
            t.op.name(),
            t.due_unix_us,
            t.latency_us,
            u8::from(t.ok)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use shepherd_cli::runtime::{self, Threads};

    use super::*;
    use clap::Parser;

    /// An embedded server on its own one-thread runtime, so that the benchmark's clients and
    /// the server do not share a runtime.
    fn embedded_server() -> (tokio::runtime::Runtime, shepherd_server::Server) {
        let runtime = runtime::start(Threads::Workers(Some(1))).unwrap();
        let server = runtime
            .block_on(shepherd_server::Server::builder().start())
            .unwrap();
        (runtime, server)
    }

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: LoadArgs,
    }

    /// The whole path against a `shepherd serve`-less target: an embedded server reached
    /// through --connect, small enough to be quick, closed and open loop.
    #[test]
    fn every_phase_runs_without_errors() {
        let (server_rt, server) = embedded_server();
        let connect = server.connect_string();
        let csv =
            std::env::temp_dir().join(format!("shepherd-bench-load-{}.csv", std::process::id()));
        for rate in [None, Some("2000")] {
            let mut argv = vec![
                "t",
                "--sessions",
                "1,3",
                "--nodes",
                "200",
                "--in-flight",
                "2,4",
                "--connect",
                &connect,
                "--client-threads",
                "1",
            ];
            argv.extend(rate.map(|r| ["--rate", r]).into_iter().flatten());
            let mut args = Cli::try_parse_from(&argv).unwrap().args;
            args.csv = Some(csv.clone());
            let mut lines = 0;
            let results = execute(&args, &mut |_| lines += 1).unwrap();
            // Two session counts, each with two windows, four phases each.
            assert_eq!(results.len(), 16);
            assert_eq!(lines, 2 + 16);
            let windows: Vec<_> = results.iter().map(|r| (r.sessions, r.in_flight)).collect();
            assert_eq!(&windows[..5], [(1, 2), (1, 2), (1, 2), (1, 2), (1, 4)]);
            assert_eq!(windows[15], (3, 4));
            for r in &results {
                assert_eq!((r.ops, r.errors), (200, 0), "{r:?}");
                assert!(r.latency[0] <= r.latency[1] && r.latency[2] <= r.latency[3]);
            }
            if rate.is_some() {
                // 200 requests at 2000/s take at least 0.1 s.
                assert!(results.iter().all(|r| r.wall >= Duration::from_millis(99)));
            }
            let text = std::fs::read_to_string(&csv).unwrap();
            assert_eq!(text.lines().count(), 17);
        }
        let _ = std::fs::remove_file(&csv);
        server_rt.block_on(server.shutdown());
    }

    /// A folder filled once, then a mixed phase for a time over its nodes, traced: the
    /// schedule holds duration × rate requests, half sets and half gets, all of them traced
    /// with their due times in order of schedule.
    #[test]
    fn a_filled_folder_takes_a_traced_mixed_load_for_a_time() {
        let (server_rt, server) = embedded_server();
        let connect = server.connect_string();
        let trace = std::env::temp_dir().join(format!(
            "shepherd-bench-load-trace-{}.csv",
            std::process::id()
        ));
        let base = [
            "t",
            "--sessions",
            "2",
            "--nodes",
            "50",
            "--dir",
            "/a/b/filled",
            "--connect",
            &connect,
            "--client-threads",
            "1",
        ];
        let fill = Cli::try_parse_from(base.iter().chain(&["--phases", "create"]))
            .unwrap()
            .args;
        let filled = execute(&fill, &mut |_| {}).unwrap();
        assert_eq!((filled[0].ops, filled[0].errors), (50, 0));
        let mut load = Cli::try_parse_from(base.iter().chain(&[
            "--phases",
            "mixed",
            "--rate",
            "1000",
            "--duration",
            "0.4",
        ]))
        .unwrap()
        .args;
        load.trace = Some(trace.clone());
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_micros() as u64;
        let mixed = execute(&load, &mut |_| {}).unwrap();
        assert_eq!((mixed[0].ops, mixed[0].errors), (400, 0), "{:?}", mixed[0]);
        // The last of each session's 200 requests is due 199 × 2 ms after the start.
        assert!(mixed[0].wall >= Duration::from_millis(398));
        let text = std::fs::read_to_string(&trace).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(TRACE_HEADER));
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        assert_eq!(rows.len(), 400);
        let sets = rows.iter().filter(|r| r[2] == "set").count();
        assert_eq!(sets, 200);
        for row in &rows {
            assert_eq!((row[0], row[1], row[5]), ("2", "mixed", "1"));
            let due: u64 = row[3].parse().unwrap();
            assert!(due >= before && due < before + 5_000_000, "{row:?}");
        }
        let _ = std::fs::remove_file(&trace);
        server_rt.block_on(server.shutdown());
    }
}
