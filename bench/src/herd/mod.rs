//! `shepherd-bench herd`: how many watch notifications (and getChildren calls) each lock
//! hand-off costs, for every lock recipe, as the number of contenders grows.
//!
//! One *run* is one recipe with N contenders:
//! 1. a coordinator session creates a node that blocks the lock (the fixed node of
//!    `ephemeral-exists`, else a writer's sequential node `bench-coordinator-lock-<seq>` at
//!    the head of the queue, which every recipe here takes for a writer's);
//! 2. N further sessions (one client each, as N processes would be) call the recipe's
//!    acquire, with a deadline, and queue up behind it;
//! 3. once the shared [`LockStats`](shepherd_recipes::LockStats) show all N blocked on a
//!    watch, and nothing (counters, server notifications) has moved for a settle period, the
//!    server's notification counter is read and the coordinator deletes its node: N
//!    hand-offs follow, each contender releasing as soon as it acquires;
//! 4. when the last contender has released, the counters are read again.
//!
//! Only the hand-off phase is measured: the notifications that the arrivals themselves cause
//! (every arrival wakes every herd waiter) are not. The coordinator's node has no watch of its
//! own, so its delete notifies only contenders. Releasing at once also means the lost-lock
//! monitor that every guard starts has not yet set its exists watch (the client side runs on
//! a single-threaded runtime, and release aborts the monitor before it first runs); a holder
//! that keeps the lock longer gets one more notification, about its own node, per hand-off.
//!
//! Notifications are counted by the server, getChildren calls by the recipes ([`probe`]).
//!
//! | File | Owns |
//! |---|---|
//! | `mod.rs` | the options, the entry point, the loop over (recipe, contenders) |
//! | [`recipe`] | the recipes compared: names, readers and writers, the coordinator's node |
//! | [`probe`] | counting notifications and getChildren calls |
//! | [`run`] | one run, and what it measured |
//! | [`report`] | the table, the CSV (written and read back), the chart's series |
//! | [`chart`] | drawing a log-log chart as SVG, with `plotters` |
//! | [`crate::error`] | why a run, or the benchmark, failed (shared by every benchmark) |
//!
//! Invariant: the clients run on one single-threaded runtime and an embedded server on its
//! own threads, so that the clients never delay the server they measure.

mod chart;
mod probe;
mod recipe;
mod report;
mod run;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use shepherd_cli::runtime::Threads;
use shepherd_client::Client;
use shepherd_server::Server;
use tokio::time::timeout;

pub use crate::error::{Error, Result};
pub use recipe::Recipe;
pub use run::RunResult;

use crate::target::{TargetArgs, Unused};
use probe::Probe;
use run::{ROOT, Run};
use shepherd_cli::progress::Progress;

/// `shepherd-bench herd` options.
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
    /// Run nothing: read the results from this CSV (as `--csv` writes it), print them and
    /// write `--plot` (or `--csv`) from them.
    #[arg(
        long = "from-csv",
        value_name = "FILE",
        conflicts_with_all = ["contenders", "recipes", "connect", "timeout", "settle_ms"]
    )]
    pub from_csv: Option<PathBuf>,
    #[command(flatten)]
    pub target: TargetArgs,
}

/// Runs the benchmark as `shepherd-bench herd` does: table on stdout, then the files; runs
/// done out of the total on stderr when it is a terminal.
pub fn main(args: &HerdArgs) -> ExitCode {
    println!("{}", report::table_header());
    // In the order `run_all` runs them, to name the one under way.
    let runs: Vec<String> = match &args.from_csv {
        Some(_) => Vec::new(),
        None => args
            .recipes
            .iter()
            .flat_map(|r| args.contenders.iter().map(|n| format!("{} {n}", r.name())))
            .collect(),
    };
    let progress = match runs.len() {
        // Read from a CSV: nothing runs, nothing to show.
        0 => Progress::with_visibility(0, "runs", false),
        total => Progress::new(total as u64, "runs"),
    };
    let mut next = runs.iter();
    if let Some(first) = next.next() {
        progress.set_message(first.clone());
    }
    let mut print = |r: &RunResult| {
        progress.println(&report::table_row(r));
        progress.inc(1);
        if let Some(run) = next.next() {
            progress.set_message(run.clone());
        }
    };
    let outcome = execute(args, &mut print);
    progress.finish();
    match outcome {
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

/// Runs every (recipe, contenders) pair (or reads them from `--from-csv`), calling
/// `on_result` after each, then writes the CSV and the plot if asked to.
///
/// # Errors
/// When the server cannot be started or reached at all, a file cannot be read or written, or
/// the chart cannot be drawn. A failed run is not an error: it is reported in its
/// [`RunResult`].
pub fn execute(args: &HerdArgs, on_result: &mut dyn FnMut(&RunResult)) -> Result<Vec<RunResult>> {
    let (results, measured_on) = match &args.from_csv {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
                what: format!("read {}", path.display()),
                source,
            })?;
            let results = report::parse_csv(&text, path)?;
            results.iter().for_each(&mut *on_result);
            (results, None)
        }
        None => {
            let (results, server) = measure_all(args, on_result)?;
            (results, Some(server))
        }
    };
    if let Some(path) = &args.csv {
        write(path, &report::csv(&results))?;
    }
    if let Some(path) = &args.plot {
        let server = args.target.label.as_deref().or(measured_on.as_deref());
        write(path, &report::plot(&results, server)?)?;
    }
    Ok(results)
}

/// Every run `args` asks for, on the server it names or on an embedded one; with the name of
/// the server measured.
fn measure_all(
    args: &HerdArgs,
    on_result: &mut dyn FnMut(&RunResult),
) -> Result<(Vec<RunResult>, String)> {
    // The clients' one thread is the benchmark's invariant (module documentation).
    args.target.refuse(
        "herd",
        &[
            Unused::ServerPid,
            Unused::ServeArg,
            Unused::BeforeReading,
            Unused::ClientThreads,
        ],
    )?;
    let client_rt = runtime(Threads::Current, "the client runtime")?;
    match &args.target.connect {
        Some(connect) => {
            let probe = Probe::mntr(connect);
            let version =
                client_rt
                    .block_on(probe.version())
                    .map_err(|e| Error::CountersUnreadable {
                        connect: connect.clone(),
                        source: Box::new(e),
                    })?;
            let results = client_rt.block_on(run_all(args, connect, &probe, on_result));
            Ok((results, version))
        }
        None => {
            // The server gets its own threads, so that the clients' single thread (see the
            // module documentation) never delays it.
            let server_rt = runtime(Threads::Workers(Some(2)), "the server runtime")?;
            let server = server_rt
                .block_on(Server::builder().max_client_connections(0).start())
                .map_err(|source| Error::Io {
                    what: "start the embedded server".to_owned(),
                    source,
                })?;
            let probe = Probe::Embedded(&server);
            let results =
                client_rt.block_on(run_all(args, &server.connect_string(), &probe, on_result));
            server_rt.block_on(server.shutdown());
            Ok((results, "embedded Shepherd".to_owned()))
        }
    }
}

/// Builds a runtime with every driver; `name` says which, should it fail.
fn runtime(threads: Threads, name: &str) -> Result<tokio::runtime::Runtime> {
    shepherd_cli::runtime::start(threads).map_err(|source| Error::Io {
        what: format!("start {name}"),
        source,
    })
}

/// Writes one output file.
fn write(path: &std::path::Path, contents: &str) -> Result<()> {
    std::fs::write(path, contents).map_err(|source| Error::Io {
        what: format!("write {}", path.display()),
        source,
    })
}

/// Every run `args` asks for, in order, each in its own folder; `on_result` sees each as it
/// ends.
async fn run_all(
    args: &HerdArgs,
    connect: &str,
    probe: &Probe<'_>,
    on_result: &mut dyn FnMut(&RunResult),
) -> Vec<RunResult> {
    let mut results = Vec::new();
    let mut index = 0;
    for &recipe in &args.recipes {
        for &contenders in &args.contenders {
            index += 1;
            let run = Run {
                connect,
                probe,
                recipe,
                contenders: contenders as usize,
                dir: format!("{ROOT}/herd-{}-{index}", std::process::id()),
                timeout: Duration::from_secs(args.timeout.max(1)),
                settle: Duration::from_millis(args.settle_ms),
            };
            let result = RunResult {
                recipe,
                contenders,
                outcome: run.execute().await,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole code path on the embedded server, small enough to be quick.
    #[test]
    fn small_runs_on_the_embedded_server() {
        let out = std::env::temp_dir().join(format!("shepherd-bench-herd-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let args = HerdArgs {
            contenders: vec![2, 5],
            recipes: Recipe::ALL.to_vec(),
            target: TargetArgs::default(),
            csv: Some(out.join("herd.csv")),
            plot: Some(out.join("herd.svg")),
            timeout: 20,
            settle_ms: 20,
            from_csv: None,
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
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        for recipe in Recipe::ALL {
            assert!(svg.lines().any(|l| l == recipe.name()), "{recipe:?}");
        }
        assert!(svg.contains("Herd benchmark: embedded Shepherd"));
        let _ = std::fs::remove_dir_all(&out);
    }
}
