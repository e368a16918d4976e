//! `shepherd-bench …`: measurements against a live server, ours or a real ZooKeeper: the herd
//! effect of the lock recipes, the cost of a new session, throughput and latency under load,
//! memory per node and per session and under a pipelining client, zk-latencies' phases, a tree
//! in a production shape, a million watches, and a client that stalls the rest. Each
//! subcommand is a folder of its own; what they share is beside them: [`target`], the server
//! under measurement and the options that name it, [`sessions`], the sessions they open, and
//! [`rss`], the memory reading of the memory benchmarks. The cargo benches (`benches/`) and the
//! `loadgen_floor` example live in this package too, and the scripts that run them side by side
//! with ZooKeeper in `scripts/`.

mod block;
mod connect;
mod error;
mod folder;
mod herd;
mod latencies;
mod load;
mod pressure;
mod rss;
mod scale;
mod sessions;
mod stall;
mod target;
#[cfg(test)]
mod test_server;
mod tree;
mod watches;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use shepherd_cli::logging;

#[derive(Parser)]
#[command(
    name = "shepherd-bench",
    version,
    about = "Shepherd's benchmarks, against Shepherd or any ZooKeeper"
)]
struct Cli {
    #[command(flatten)]
    log: logging::LogOptions,
    #[command(subcommand)]
    command: Command,
}

/// The benchmarks `shepherd-bench` runs.
#[derive(Subcommand)]
enum Command {
    /// The herd effect: notifications and getChildren calls per lock hand-off, for every lock
    /// recipe, as the number of contenders grows.
    Herd(herd::HerdArgs),
    /// The cost of a new session on a fresh connection, over plain TCP and TLS 1.3 (with and
    /// without a client certificate): connects per second and latency, one at a time and in
    /// parallel.
    Connect(connect::ConnectArgs),
    /// Throughput and latency: N sessions, W requests in flight each, through create, set,
    /// get and delete over K nodes; closed loop, or open loop at a fixed rate.
    Load(load::LoadArgs),
    /// zk-latencies' synchronous phases (create, set, get, delete, ephemeral create, watch,
    /// ephemeral delete, notification), one call at a time: every call's latency.
    Latencies(latencies::LatenciesArgs),
    /// Memory under pressure: the server's resident set while one client pipelines large
    /// setData and getData calls (run with its fsyncs slowed: bench/scripts/pressure.sh).
    Pressure(pressure::PressureArgs),
    /// Memory per znode and per idle session, from the server process's resident set size
    /// (with --connect, --server-pid is required).
    Scale(scale::ScaleArgs),
    /// Memory per node of a tree in the shape of a production one (paths of about 115 bytes,
    /// data on 57 % of the nodes, one very wide parent), from the server's resident set size
    /// (with --connect, --server-pid is required).
    Tree(tree::TreeArgs),
    /// Memory per million data watches (1 000 sessions watching 1 000 of 100 000 nodes each)
    /// and the time to fire them all, from the server's resident set size (with --connect,
    /// --server-pid is required).
    Watches(watches::WatchesArgs),
    /// What one client's large state costs the others when it goes: the bystanders' worst
    /// latency and expired sessions while a connection holding a million watches closes, or a
    /// four-letter word lists them (with --connect, --server-pid is required).
    Stall(stall::StallArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Scale(args) = &cli.command
        && args.target.connect.is_some()
        && args.target.server_pid.is_none()
    {
        // A usage error, as clap's own `requires` would give: scale reads the server's memory.
        Cli::command()
            .error(
                clap::error::ErrorKind::MissingRequiredArgument,
                "scale --connect needs --server-pid: the memory read is the server process's",
            )
            .exit();
    }
    // A benchmark opens and closes thousands of sessions: only problems are worth printing.
    logging::init(cli.log.format, "warn");
    match cli.command {
        Command::Herd(args) => herd::main(&args),
        Command::Connect(args) => connect::main(&args),
        Command::Load(args) => load::main(&args),
        Command::Latencies(args) => latencies::main(&args),
        Command::Pressure(args) => pressure::main(&args),
        Command::Scale(args) => scale::main(&args),
        Command::Tree(args) => tree::main(&args),
        Command::Watches(args) => watches::main(&args),
        Command::Stall(args) => stall::main(&args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_herd_parses_with_defaults_and_lists() {
        let cli = Cli::try_parse_from(["shepherd-bench", "herd"]).unwrap();
        let Command::Herd(args) = cli.command else {
            panic!("not bench herd");
        };
        assert_eq!(args.contenders, [2, 10, 50, 100, 500, 1000]);
        assert_eq!(args.recipes, herd::Recipe::ALL);
        let cli = Cli::try_parse_from([
            "shepherd-bench",
            "herd",
            "--contenders",
            "2,5",
            "--recipes",
            "sequential-herd,curator-mutex",
            "--connect",
            "127.0.0.1:2181",
        ])
        .unwrap();
        let Command::Herd(args) = cli.command else {
            panic!("not bench herd");
        };
        assert_eq!(args.contenders, [2, 5]);
        assert_eq!(
            args.recipes,
            [herd::Recipe::SequentialHerd, herd::Recipe::CuratorMutex]
        );
        assert_eq!(args.target.connect.as_deref(), Some("127.0.0.1:2181"));
        assert!(Cli::try_parse_from(["shepherd-bench", "herd", "--contenders", "0"]).is_err());
    }

    #[test]
    fn bench_load_takes_only_a_positive_finite_rate() {
        let rate = |r: &str| {
            Cli::try_parse_from(["shepherd-bench", "load", "--rate", r]).map(|cli| {
                let Command::Load(args) = cli.command else {
                    panic!("not bench load");
                };
                args.rate
            })
        };
        assert_eq!(rate("2500.5").unwrap(), Some(2500.5));
        for refused in ["0", "-1", "NaN", "inf", "1e10", "fast"] {
            assert!(rate(refused).is_err(), "--rate {refused} refused");
        }
    }
}
