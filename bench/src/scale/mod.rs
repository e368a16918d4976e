//! `shepherd-bench scale`: the server's memory per znode and per idle session, read from its
//! resident set size (`VmRSS` of `/proc/PID/status`) before and after.
//!
//! Measurements, in order: for every `--value-sizes` size, `--nodes` nodes of that size
//! ([`nodes`]); for every `--sessions` count, that many sessions held with pings and none lost
//! ([`sessions`]). Against a `shepherd serve` child every measurement gets a fresh child, so
//! none inherits another's memory; against `--connect` (with `--server-pid`) they follow each
//! other on the one server, the nodes deleted and the sessions closed after each.
//!
//! RSS is what the operating system charges the process: for a JVM it is the heap it has
//! committed (which grows in steps and is not returned), for Shepherd what the allocator holds;
//! neither is the size of the data alone. The figures are per item: (after − before) / count.
//!
//! Invariants: a measurement that could not hold its premise (a create failed, a session was
//! lost, a file limit too low) is an error row, never a figure.

mod measurement;
mod nodes;
mod sessions;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::error::{Error, Result};
use crate::target::{Target, TargetArgs};
pub use measurement::Measurement;

/// `shepherd-bench scale` options.
#[derive(Args, Debug, Clone)]
pub struct ScaleArgs {
    /// Nodes created per value size (0: measure no nodes).
    #[arg(long, default_value_t = 1_000_000)]
    pub nodes: usize,
    /// Value sizes of the node measurements, bytes, comma-separated.
    #[arg(long = "value-sizes", value_delimiter = ',', default_value = "16,1024",
          value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub value_sizes: Vec<u32>,
    /// Session counts to hold, comma-separated (0: measure no sessions). Each takes an open
    /// file here and one in the server.
    #[arg(long, value_delimiter = ',', default_value = "10000,50000")]
    pub sessions: Vec<usize>,
    /// How long, seconds, the sessions are held (pinging) before the second reading.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub hold: u64,
    /// The session timeout asked for, ms (the client pings every third of it).
    #[arg(
        long = "session-timeout-ms",
        value_name = "MS",
        default_value_t = 10_000
    )]
    pub session_timeout_ms: u64,
    /// Spread the sessions over the source addresses 127.0.0.1 ..= 127.0.0.N (a loopback
    /// server only), for more than one address's ~28 000 local ports.
    #[arg(long = "source-addrs", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u8).range(1..=254))]
    pub source_addrs: u8,
    /// Wait this long, ms, before each memory reading.
    #[arg(long = "settle-ms", value_name = "MS", default_value_t = 2000)]
    pub settle_ms: u64,
    // With --connect, --server-pid is needed (a usage error in `main`; each measurement also
    // says so): the memory read is the server process's.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Also write the results as CSV, one row per measurement.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

/// A measurement as run: what was asked, and what came of it.
type Row = (String, Result<Measurement>);

/// Runs the benchmark as `shepherd-bench scale` does: a table on stdout, the CSV if asked.
pub fn main(args: &ScaleArgs) -> ExitCode {
    let rows = execute(args, &mut |line| println!("{line}"));
    match rows {
        Ok(rows) if rows.iter().all(|(_, m)| m.is_ok()) => ExitCode::SUCCESS,
        Ok(_) => {
            eprintln!("error: some measurements failed (see the table)");
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Every measurement `args` asks for; `print` gets the table line by line.
///
/// # Errors
/// When the clients' runtime cannot start or the CSV cannot be written. A failed measurement
/// is a row with its error.
pub fn execute(args: &ScaleArgs, print: &mut dyn FnMut(&str)) -> Result<Vec<Row>> {
    let runtime = args.target.client_runtime()?;
    let settle = Duration::from_millis(args.settle_ms);
    let shared = args.target.remote();
    // A spawned server takes --before-reading too (a --connect one has it from `remote`).
    let prepare = |mut target: Target| {
        target
            .before_reading
            .clone_from(&args.target.before_reading);
        target
    };
    let mut shared = shared;
    let label = |target: &Target| {
        args.target
            .label
            .clone()
            .unwrap_or_else(|| target.name.clone())
    };
    print(&table_header());
    let mut rows = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    if args.nodes > 0 {
        jobs.extend(args.value_sizes.iter().map(|&v| Job::Nodes(v as usize)));
    }
    jobs.extend(
        args.sessions
            .iter()
            .filter(|&&s| s > 0)
            .map(|&s| Job::Sessions(s)),
    );
    for (index, job) in jobs.into_iter().enumerate() {
        let mut own = None;
        let target = match &mut shared {
            Some(target) => Ok(&*target),
            None => Target::spawn_serve(&args.target.serve_args).map(|t| &*own.insert(prepare(t))),
        };
        let (server, outcome) = match target {
            Err(error) => ("shepherd serve (child)".to_owned(), Err(error)),
            Ok(target) => {
                let outcome = runtime.block_on(async {
                    match job {
                        Job::Nodes(value_size) => {
                            let dir =
                                format!("/shepherd-bench-scale/run-{}-{index}", std::process::id());
                            let cleanup = args.target.connect.is_some();
                            nodes::measure(target, &dir, args.nodes, value_size, settle, cleanup)
                                .await
                        }
                        Job::Sessions(count) => {
                            let hold = sessions::Hold {
                                sessions: count,
                                timeout: Duration::from_millis(args.session_timeout_ms),
                                hold: Duration::from_secs(args.hold),
                                source_addrs: args.source_addrs,
                                settle,
                            };
                            sessions::measure(target, &hold).await
                        }
                    }
                });
                (label(target), outcome)
            }
        };
        if let Some(mut child) = own {
            // Stopping a child that holds 1 M nodes takes a moment; its error is not the
            // measurement's.
            let _ = child.stop();
        }
        print(&table_row(&server, job, &outcome));
        rows.push((server, outcome));
    }
    drop(runtime);
    if let Some(path) = &args.csv {
        std::fs::write(path, csv(&rows)).map_err(|source| Error::Io {
            what: format!("write {}", path.display()),
            source,
        })?;
    }
    Ok(rows)
}

/// A measurement to run.
#[derive(Debug, Clone, Copy)]
enum Job {
    /// Nodes of this value size.
    Nodes(usize),
    /// This many sessions.
    Sessions(usize),
}

/// The table's header line.
fn table_header() -> String {
    format!(
        "{:<24} {:<8} {:>8} {:>6} {:>10} {:>10} {:>10} {:>8} {:>5}",
        "server", "what", "count", "value", "rss before", "rss after", "B/item", "secs", "lost"
    )
}

/// A measurement as a table row.
fn table_row(server: &str, job: Job, outcome: &Result<Measurement>) -> String {
    let (what, count, value) = match job {
        Job::Nodes(v) => ("nodes", None, v.to_string()),
        Job::Sessions(s) => ("sessions", Some(s), "-".to_owned()),
    };
    match outcome {
        Ok(m) => format!(
            "{:<24} {:<8} {:>8} {:>6} {:>10} {:>10} {:>10.0} {:>8.1} {:>5}",
            server,
            m.what,
            m.count,
            value,
            mib(m.rss.before),
            mib(m.rss.after),
            m.bytes_per_item(),
            m.seconds,
            m.lost
        ),
        Err(error) => format!(
            "{server:<24} {what:<8} {:>8} {value:>6} error: {error}",
            count.map_or("-".to_owned(), |c| c.to_string())
        ),
    }
}

/// Bytes as MiB with one decimal.
fn mib(bytes: u64) -> String {
    format!("{:.1}M", bytes as f64 / (1024.0 * 1024.0))
}

/// The CSV's header line.
pub const CSV_HEADER: &str =
    "server,what,count,value_size,rss_before,rss_after,bytes_per_item,seconds,lost,error";

/// Every row as CSV, header first.
fn csv(rows: &[Row]) -> String {
    let mut out = format!("{CSV_HEADER}\n");
    for (server, outcome) in rows {
        let server = server.replace(',', ";");
        let line = match outcome {
            Ok(m) => format!(
                "{server},{},{},{},{},{},{:.1},{:.3},{},",
                m.what,
                m.count,
                m.value_size.map_or(String::new(), |v| v.to_string()),
                m.rss.before,
                m.rss.after,
                m.bytes_per_item(),
                m.seconds,
                m.lost
            ),
            Err(error) => format!("{server},,,,,,,,,{}", error.to_string().replace(',', ";")),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rss::Growth;
    use crate::test_server::TestServer;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: ScaleArgs,
    }

    /// Both measurements against an embedded server in this process (so the memory read is
    /// this process's), small enough to be quick; then a session count beyond the file limit
    /// is refused up front.
    #[test]
    fn nodes_and_sessions_on_an_embedded_server() {
        let server =
            TestServer::start(shepherd_server::Server::builder().max_client_connections(0));
        let (connect, pid) = (server.connect.as_str(), server.pid.as_str());
        let args = Cli::try_parse_from([
            "t",
            "--nodes",
            "500",
            "--value-sizes",
            "16,100",
            "--sessions",
            "20",
            "--hold",
            "1",
            "--settle-ms",
            "0",
            "--connect",
            connect,
            "--server-pid",
            pid,
            "--source-addrs",
            "3",
            "--before-reading",
            "true",
        ])
        .unwrap()
        .args;
        let mut lines = 0;
        let rows = execute(&args, &mut |_| lines += 1).unwrap();
        assert_eq!((rows.len(), lines), (3, 4));
        for (_, row) in &rows {
            let m = row.as_ref().unwrap();
            assert_eq!(m.lost, 0);
            assert!(m.rss.before > 0 && m.rss.after > 0);
        }
        let mut args = args;
        args.nodes = 0;
        args.sessions = vec![100_000_000];
        let rows = execute(&args, &mut |_| {}).unwrap();
        let error = rows[0].1.as_ref().unwrap_err().to_string();
        assert!(error.contains("open files"), "{error}");
        server.stop();
    }

    #[test]
    fn per_item_and_csv() {
        let m = Measurement {
            what: "nodes",
            count: 1000,
            value_size: Some(16),
            rss: Growth {
                before: 1_000_000,
                after: 1_200_000,
            },
            seconds: 1.5,
            lost: 0,
        };
        assert_eq!(m.bytes_per_item(), 200.0);
        let rows = vec![
            ("s".to_owned(), Ok(m)),
            (
                "s".to_owned(),
                Err(Error::Refused("too many, really".to_owned())),
            ),
        ];
        let text = csv(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(lines[1], "s,nodes,1000,16,1000000,1200000,200.0,1.500,0,");
        assert_eq!(lines[2], "s,,,,,,,,,too many; really");
        assert_eq!(lines[2].split(',').count(), lines[0].split(',').count());
    }
}
