//! `shepherd-bench tree`: the server's memory per node for a tree in the shape of a production
//! one ([`shape`]), not a folder of equal nodes: the server's resident set (`VmRSS`) before
//! and after the tree is created ([`fill`]), per node.
//!
//! What a tree costs besides memory (its snapshot's size and write time, and the time to
//! serve again after `kill -9`) is the server's own business and is read off its data
//! directory and log by `bench/scripts/tree.sh`, which runs this against both servers.
//!
//! Invariants: the figure is only reported for the whole tree (a failed create makes the run
//! an error); the shape's own statistics are printed with it, so that the tree measured can be
//! checked against the one it imitates.

mod fill;
pub mod shape;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;

use crate::error::{Error, Result};
use crate::rss::{self, Growth};
use crate::sessions::connect_many;
use crate::target::TargetArgs;
use shape::Shape;

/// `shepherd-bench tree` options.
#[derive(Args, Debug, Clone)]
pub struct TreeArgs {
    /// Nodes in the tree, folders included.
    #[arg(long, default_value_t = 1_000_000)]
    pub nodes: usize,
    /// Sessions creating the leaves.
    #[arg(long, default_value_t = 4)]
    pub sessions: usize,
    /// Creates in flight per session.
    #[arg(long = "in-flight", default_value_t = 256)]
    pub in_flight: usize,
    /// Only print the shape's statistics (walks every node; no server).
    #[arg(long = "stats-only")]
    pub stats_only: bool,
    /// Wait this long, ms, before each memory reading.
    #[arg(long = "settle-ms", value_name = "MS", default_value_t = 2000)]
    pub settle_ms: u64,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Also write the result as CSV (a header and one row).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

/// One measurement.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Nodes created.
    pub nodes: usize,
    /// The server's RSS before and after.
    pub rss: Growth,
    /// Time to create them.
    pub seconds: f64,
}

impl Measurement {
    /// Bytes of RSS per node.
    pub fn bytes_per_node(&self) -> f64 {
        self.rss.per(self.nodes)
    }
}

/// The CSV's header line.
pub const CSV_HEADER: &str = "server,nodes,rss_before,rss_after,bytes_per_node,seconds";

/// Runs the benchmark as `shepherd-bench tree` does.
pub fn main(args: &TreeArgs) -> ExitCode {
    let shape = Shape::new(args.nodes);
    if args.stats_only {
        let stats = shape.stats();
        println!(
            "shape: {} nodes, mean path {:.1} B, mean last component {:.1} B, {:.1} % with \
             data, mean data {:.1} B per node, widest parent {} children ({:.2} %)",
            stats.nodes,
            stats.mean_path(),
            stats.mean_name(),
            stats.data_share() * 100.0,
            stats.mean_data(),
            stats.widest,
            stats.wide_share() * 100.0
        );
        return ExitCode::SUCCESS;
    }
    match execute(args, &shape) {
        Ok((server, m)) => {
            println!(
                "tree: {server}: {} nodes in {:.1} s, RSS {:.1} → {:.1} MiB, {:.0} B per node",
                m.nodes,
                m.seconds,
                m.rss.before as f64 / 1_048_576.0,
                m.rss.after as f64 / 1_048_576.0,
                m.bytes_per_node()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Creates the tree on the server and measures its memory before and after.
///
/// # Errors
/// When no server can be reached or started, a create fails, the memory cannot be read, or the
/// CSV cannot be written.
pub fn execute(args: &TreeArgs, shape: &Shape) -> Result<(String, Measurement)> {
    let runtime = args.target.client_runtime()?;
    let mut target = args.target.open()?;
    let server = args.target.label.clone().unwrap_or(target.name.clone());
    let settle = Duration::from_millis(args.settle_ms);
    let measured = runtime.block_on(async {
        let mut clients = Vec::new();
        connect_many(&target.connect, args.sessions.max(1), &mut clients).await?;
        let ((filled, seconds), rss) = rss::around(&target, settle, async {
            let started = Instant::now();
            let filled = fill::fill(shape, &clients, args.in_flight.max(1)).await;
            let seconds = started.elapsed().as_secs_f64();
            match filled.first_error {
                Some(error) => Err(Error::Refused(format!(
                    "{} creates failed, the first: {error}",
                    filled.failed
                ))),
                None => Ok((filled, seconds)),
            }
        })
        .await?;
        for client in &clients {
            let _ = tokio::time::timeout(Duration::from_secs(10), client.close()).await;
        }
        Ok::<_, Error>(Measurement {
            nodes: filled.created,
            rss,
            seconds,
        })
    });
    let _ = target.stop();
    let measured = measured?;
    if let Some(path) = &args.csv {
        let write = || -> std::io::Result<()> {
            let mut file = std::fs::File::create(path)?;
            writeln!(file, "{CSV_HEADER}")?;
            writeln!(
                file,
                "{},{},{},{},{:.1},{:.3}",
                server.replace(',', ";"),
                measured.nodes,
                measured.rss.before,
                measured.rss.after,
                measured.bytes_per_node(),
                measured.seconds
            )
        };
        write().map_err(|source| Error::Io {
            what: format!("write {}", path.display()),
            source,
        })?;
    }
    Ok((server, measured))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_server::TestServer;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: TreeArgs,
    }

    /// A small tree on an embedded server in this process (so the memory read is this
    /// process's): every node is there afterwards, and a second fill of the same tree fails
    /// on its first create rather than reporting a figure.
    #[test]
    fn a_small_tree_on_an_embedded_server() {
        let server = TestServer::start(shepherd_server::Server::builder());
        let (connect, pid) = (server.connect.as_str(), server.pid.as_str());
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("tree.csv");
        let args = Cli::try_parse_from([
            "t",
            "--nodes",
            "3000",
            "--settle-ms",
            "0",
            "--connect",
            connect,
            "--server-pid",
            pid,
            "--csv",
            csv.to_str().unwrap(),
        ])
        .unwrap()
        .args;
        let shape = Shape::new(args.nodes);
        let (_, m) = execute(&args, &shape).unwrap();
        assert_eq!(m.nodes, shape.stats().nodes);
        assert!(m.rss.before > 0 && m.rss.after > 0);
        let text = std::fs::read_to_string(&csv).unwrap();
        assert!(
            text.starts_with(CSV_HEADER) && text.lines().count() == 2,
            "{text}"
        );
        let count = server.block_on(async {
            let client = shepherd_client::Client::builder()
                .connect(connect)
                .await
                .unwrap();
            let (_, stat) = client.get_data(shape::WIDE_PARENT).await.unwrap();
            stat.num_children
        });
        assert_eq!(count as f64, (3000.0 * shape::WIDE_SHARE).round());
        let error = execute(&args, &shape).unwrap_err().to_string();
        assert!(
            error.contains("creates failed") && error.contains("NodeExists"),
            "{error}"
        );
        server.stop();
    }
}
