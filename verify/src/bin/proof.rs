//! `proof`: runs a workload against a server while its nemesis injects faults, checks the
//! history, and prints one line per run (docs/proof.md):
//!
//! ```text
//! proof: WORKLOAD on SERVER: N events, F faults (kinds), verdict VALID|INVALID|UNKNOWN
//! ```
//!
//! ```text
//! cargo run -p shepherd-verify --bin proof -- --workload register --server embedded --ops 500
//! cargo run -p shepherd-verify --bin proof -- --workload all --server durable \
//!     --shepherd-bin target/debug/shepherd --duration 600 --ops 1000000
//! ```
//!
//! `--workload locks` is the lock chaos run instead (docs/chaos.md): every lock recipe on an
//! embedded server under the per-session nemesis for `--duration` seconds, its counts printed,
//! judged by the lock checker and by the mutex checks on its history:
//!
//! ```text
//! cargo run --release -p shepherd-verify --bin proof -- --workload locks --duration 600 --clients 50
//! ```
//!
//! Exit status: 0 when every run was VALID (or UNKNOWN, printed as such), 1 when any was
//! INVALID (or the chaos run found a violation), 2 on a setup failure.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use std::sync::Arc;

use clap::Parser;
use shepherd_server::Server;
use shepherd_verify::proof::chaos::{self, ChaosConfig, transport::Transport};
use shepherd_verify::proof::run::{RunConfig, ServerKind, run};
use shepherd_verify::proof::workload::Workload;

/// Workloads against a server under faults, each history checked.
#[derive(Parser, Debug)]
#[command(name = "proof")]
struct Args {
    /// The workload: register, set, unique-ids, counter, queue, mutex, or all; or locks, the
    /// lock chaos run (embedded server only).
    #[arg(long, default_value = "all")]
    workload: String,
    /// The server: embedded, durable, ensemble, zookeeper, zk-ensemble.
    #[arg(long, default_value = "embedded")]
    server: ServerKind,
    /// Use the server at this address instead of starting one (no nemesis then).
    #[arg(long)]
    connect: Option<String>,
    /// Stop starting operations after this many seconds.
    #[arg(long, default_value_t = 60)]
    duration: u64,
    /// At most this many operations per run (default 300).
    #[arg(long)]
    ops: Option<u64>,
    /// Clients (one worker each; default 4, and 50 for locks).
    #[arg(long)]
    clients: Option<usize>,
    /// The seed of every random choice.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run without the nemesis.
    #[arg(long)]
    no_nemesis: bool,
    /// The `shepherd` binary for --server durable (default: beside this one).
    #[arg(long)]
    shepherd_bin: Option<PathBuf>,
    /// Write each run's history here (.edn: Jepsen's, every workload; .json: Porcupine's, the
    /// register's operations); with several workloads, the workload's
    /// name is put before the extension.
    #[arg(long)]
    history_out: Option<PathBuf>,
    /// locks: the session timeout the clients ask for, in milliseconds; waits, holds, freezes
    /// and pauses are scaled to it.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(200..))]
    session_timeout_ms: u64,
    /// locks: print a line of counts to stderr this often, in seconds.
    #[arg(long, default_value_t = 30)]
    progress: u64,
    /// locks: connect the clients through in-memory pipes instead of loopback TCP.
    #[arg(long)]
    in_memory: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    // The lock chaos run wants the interleavings of a multi-threaded runtime (the server, the
    // clients and the nemesis on real threads, as `shepherd serve` runs them); the workloads
    // keep one thread, so that a seed and a clock replay the same schedule as far as they can.
    let runtime = if args.workload == "locks" {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    };
    match runtime {
        Ok(runtime) => runtime.block_on(proof(args)),
        Err(error) => {
            eprintln!("proof: cannot start a runtime: {error}");
            ExitCode::from(2)
        }
    }
}

async fn proof(args: Args) -> ExitCode {
    if args.workload == "locks" {
        return locks(&args).await;
    }
    let workloads = if args.workload == "all" {
        Workload::ALL.to_vec()
    } else {
        match args.workload.parse::<Workload>() {
            Ok(w) => vec![w],
            Err(e) => {
                eprintln!("proof: {e}");
                return ExitCode::from(2);
            }
        }
    };
    if let Some(out) = &args.history_out {
        if !matches!(
            out.extension().and_then(|e| e.to_str()),
            Some("edn" | "json")
        ) {
            eprintln!(
                "proof: --history-out {}: a file ending in .edn or .json",
                out.display()
            );
            return ExitCode::from(2);
        }
    }
    let shepherd_bin = args.shepherd_bin.clone().or_else(|| {
        let exe = std::env::current_exe().ok()?;
        Some(exe.parent()?.join("shepherd"))
    });
    let mut invalid = false;
    for workload in &workloads {
        let config = RunConfig {
            connect: args.connect.clone(),
            ops: args.ops.unwrap_or(300),
            duration: Duration::from_secs(args.duration),
            clients: args.clients.unwrap_or(4),
            seed: args.seed,
            nemesis: !args.no_nemesis,
            shepherd_bin: shepherd_bin.clone(),
            ..RunConfig::new(*workload, args.server)
        };
        let report = run(&config).await;
        println!("{report}");
        invalid |= report.verdict.is_invalid();
        if let Some(out) = &args.history_out {
            let path = if workloads.len() > 1 {
                with_workload(out, *workload)
            } else {
                out.clone()
            };
            if let Err(e) = shepherd_verify::proof::history_file::write(&path, &report.history) {
                eprintln!("proof: write {}: {e}", path.display());
                return ExitCode::from(2);
            }
        }
    }
    if invalid {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The lock chaos run, to its exit code.
async fn locks(args: &Args) -> ExitCode {
    // What the chaos run does not take is refused, not ignored: it runs its own embedded
    // server under its own per-session nemesis, and judges its history in place.
    let unused = [
        (args.server != ServerKind::Embedded, "--server"),
        (args.connect.is_some(), "--connect"),
        (args.no_nemesis, "--no-nemesis"),
        (args.ops.is_some(), "--ops"),
        (args.history_out.is_some(), "--history-out"),
    ];
    if let Some((_, flag)) = unused.iter().find(|(given, _)| *given) {
        eprintln!("proof: --workload locks takes no {flag}: it runs its own embedded server");
        return ExitCode::from(2);
    }
    let clients = args.clients.unwrap_or(50);
    if clients < 2 {
        eprintln!("proof: --workload locks needs at least 2 clients");
        return ExitCode::from(2);
    }
    let session_timeout = Duration::from_millis(args.session_timeout_ms);
    // Ticks of a quarter of the session timeout: the timeout asked for is inside the server's
    // bounds (2 to 20 ticks), and expiry is that precise.
    let server = match Server::builder()
        .tick_time(session_timeout / 4)
        .container_check_interval(Duration::from_secs(1))
        .start()
        .await
    {
        Ok(server) => Arc::new(server),
        Err(error) => {
            eprintln!("proof: cannot start the server: {error}");
            return ExitCode::from(2);
        }
    };
    let config = ChaosConfig {
        transport: if args.in_memory {
            Transport::InMemory
        } else {
            Transport::Tcp
        },
        progress: Some(Duration::from_secs(args.progress.max(1))),
        ..ChaosConfig::new(
            args.seed,
            clients,
            Duration::from_secs(args.duration),
            session_timeout,
        )
    };
    eprintln!(
        "proof: locks: seed {} clients {clients} duration {:?} session timeout {session_timeout:?}, server {}",
        args.seed,
        config.duration,
        server.local_addr()
    );
    let report = chaos::run(server.clone(), config).await;
    server.shutdown().await;
    print!("{report}");
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `dir/name.ext` as `dir/name-WORKLOAD.ext`.
fn with_workload(path: &std::path::Path, workload: Workload) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}-{workload}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{workload}"),
    };
    path.with_file_name(name)
}
