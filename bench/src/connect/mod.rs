//! `shepherd-bench connect`: the cost of a new session, each on a fresh connection: TCP
//! connect → TLS handshake (when the mode has one) → ZooKeeper's ConnectRequest/Response →
//! closeSession and its reply ([`session`]).
//!
//! Modes: `plain` (TCP, `--connect`), `tls` (TLS 1.3, server certificate only) and
//! `tls-mutual` (TLS 1.3 with a client certificate), both on `--tls-connect`, with the PEM files
//! of `--certs` ([`tls`]). Each mode runs at every `--concurrency`: C workers opening sessions
//! one after another until `--sessions` are done. It reports connects per second (sessions over
//! wall time) and the latency p50/p99 of a whole session, plus the p50 of its transport part
//! (TCP connect and TLS handshake).
//!
//! Invariants: the server is only reached at the given addresses (any ZooKeeper, real or
//! Shepherd); `--warmup` sessions run before each mode's measurements and are not counted
//! (a JVM compiles its handshake path in the first hundreds); every session is closed, never
//! left to expire; a failed session is counted and its first error printed, never retried.

mod session;
mod tls;

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use shepherd_cli::runtime::{self, Threads};
use tokio_rustls::rustls::pki_types::ServerName;

use crate::target::{TargetArgs, Unused};
use session::{Sample, Transport};

/// How long one session may take before it counts as failed.
const SESSION_DEADLINE: Duration = Duration::from_secs(10);

/// What each measured session goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// Plain TCP (`--connect`).
    Plain,
    /// TLS 1.3, the server's certificate only (`--tls-connect`).
    Tls,
    /// TLS 1.3 with the client's certificate too (`--tls-connect`).
    TlsMutual,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Plain => "plain",
            Mode::Tls => "tls",
            Mode::TlsMutual => "tls-mutual",
        }
    }
}

/// `shepherd-bench connect` options.
#[derive(Args, Debug, Clone)]
pub struct ConnectArgs {
    /// The server's TLS port, `secureClientPort` (for modes `tls` and `tls-mutual`).
    #[arg(long = "tls-connect", value_name = "HOST:PORT")]
    pub tls_connect: Option<String>,
    /// Directory with `ca.pem`, `client.pem` and `client-key.pem`, as `shepherd tls
    /// make-test-certs` writes them.
    #[arg(long, value_name = "DIR")]
    pub certs: Option<PathBuf>,
    /// The name the server's certificate must carry (default: the host of --tls-connect).
    #[arg(long = "server-name", value_name = "NAME")]
    pub server_name: Option<String>,
    /// Modes to run, comma-separated (default: those the given addresses allow).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub modes: Vec<Mode>,
    /// Sessions open at once (workers), comma-separated: each mode runs at each.
    #[arg(long, value_delimiter = ',', default_value = "1,8",
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub concurrency: Vec<u32>,
    /// Sessions measured per mode and concurrency.
    #[arg(long, default_value_t = 500)]
    pub sessions: usize,
    /// Sessions run, and not counted, before each mode's measurements.
    #[arg(long, default_value_t = 300)]
    pub warmup: usize,
    /// The session timeout asked for, ms.
    #[arg(long = "session-timeout", default_value_t = 10_000)]
    pub session_timeout: i32,
    /// Also write the results as CSV, one row per mode and concurrency.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    #[command(flatten)]
    pub target: TargetArgs,
}

impl ConnectArgs {
    /// The server's name in the table and CSV.
    fn label(&self) -> &str {
        self.target.label.as_deref().unwrap_or("server")
    }
}

/// One mode at one concurrency.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The mode.
    pub mode: Mode,
    /// Workers.
    pub concurrency: u32,
    /// Sessions that completed.
    pub ok: usize,
    /// Sessions that failed.
    pub errors: usize,
    /// Completed sessions per second of wall time.
    pub per_second: f64,
    /// Whole-session latency percentiles, µs.
    pub p50_us: u64,
    /// See `p50_us`.
    pub p99_us: u64,
    /// Median of the transport part (TCP connect and TLS handshake), µs.
    pub transport_p50_us: u64,
}

/// Runs the benchmark: a table on stdout, the CSV if asked.
pub fn main(args: &ConnectArgs) -> ExitCode {
    let Some(runtime) = runtime::start_or_report(
        Threads::Workers(Some(args.target.client_threads.unwrap_or(1).max(1))),
        "the clients' runtime",
    ) else {
        return ExitCode::FAILURE;
    };
    match runtime.block_on(execute(args)) {
        Ok(results) if results.iter().all(|r| r.errors == 0) => ExitCode::SUCCESS,
        Ok(_) => {
            eprintln!("error: some sessions failed (see the table)");
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn execute(args: &ConnectArgs) -> Result<Vec<RunResult>, String> {
    let unused = [Unused::ServerPid, Unused::ServeArg, Unused::BeforeReading];
    args.target
        .refuse("connect", &unused)
        .map_err(|error| error.to_string())?;
    let modes = if args.modes.is_empty() {
        let mut modes = Vec::new();
        if args.target.connect.is_some() {
            modes.push(Mode::Plain);
        }
        if args.tls_connect.is_some() {
            modes.extend([Mode::Tls, Mode::TlsMutual]);
        }
        modes
    } else {
        args.modes.clone()
    };
    if modes.is_empty() {
        return Err("nothing to measure: give --connect and/or --tls-connect".into());
    }
    let mut csv = match &args.csv {
        Some(path) => {
            let mut file =
                File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            writeln!(
                file,
                "label,mode,concurrency,sessions,errors,connects_per_s,p50_us,p99_us,transport_p50_us"
            )
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            Some(file)
        }
        None => None,
    };
    println!(
        "{:<12} {:<11} {:>5} {:>9} {:>7} {:>11} {:>9} {:>9} {:>14}",
        "server",
        "mode",
        "conc",
        "sessions",
        "errors",
        "connects/s",
        "p50 ms",
        "p99 ms",
        "transport p50"
    );
    let mut results = Vec::new();
    for mode in modes {
        let (addr, transport) = transport(args, mode)?;
        let warm_conc = args.concurrency.iter().copied().max().unwrap_or(1);
        run(&addr, &transport, args, warm_conc, args.warmup).await;
        for &concurrency in &args.concurrency {
            let (samples, errors, first_error, wall) =
                run(&addr, &transport, args, concurrency, args.sessions).await;
            let result = summarize(mode, concurrency, &samples, errors, wall);
            println!(
                "{:<12} {:<11} {:>5} {:>9} {:>7} {:>11.0} {:>9.2} {:>9.2} {:>11.2} ms",
                args.label(),
                result.mode.name(),
                result.concurrency,
                result.ok,
                result.errors,
                result.per_second,
                result.p50_us as f64 / 1000.0,
                result.p99_us as f64 / 1000.0,
                result.transport_p50_us as f64 / 1000.0,
            );
            if let Some(error) = first_error {
                eprintln!(
                    "{} {} x{concurrency}: first failure: {error}",
                    args.label(),
                    mode.name()
                );
            }
            if let Some(file) = csv.as_mut() {
                writeln!(
                    file,
                    "{},{},{},{},{},{:.1},{},{},{}",
                    args.label(),
                    result.mode.name(),
                    result.concurrency,
                    result.ok,
                    result.errors,
                    result.per_second,
                    result.p50_us,
                    result.p99_us,
                    result.transport_p50_us
                )
                .map_err(|e| format!("cannot write the CSV: {e}"))?;
            }
            results.push(result);
        }
    }
    Ok(results)
}

/// The address and transport of `mode`.
fn transport(args: &ConnectArgs, mode: Mode) -> Result<(String, Transport), String> {
    if mode == Mode::Plain {
        let addr = args
            .target
            .connect
            .clone()
            .ok_or("mode plain needs --connect")?;
        return Ok((addr, Transport::Plain));
    }
    let addr = args
        .tls_connect
        .clone()
        .ok_or_else(|| format!("mode {} needs --tls-connect", mode.name()))?;
    let dir = args
        .certs
        .as_ref()
        .ok_or_else(|| format!("mode {} needs --certs", mode.name()))?;
    let config = tls::client_config(dir, mode == Mode::TlsMutual)?;
    let host = match &args.server_name {
        Some(name) => name.clone(),
        None => host_of(&addr).to_owned(),
    };
    let name =
        ServerName::try_from(host.clone()).map_err(|e| format!("server name {host:?}: {e}"))?;
    Ok((addr, Transport::Tls(session::connector(config), name)))
}

/// The host of `host:port` or `[v6]:port`, without brackets.
fn host_of(addr: &str) -> &str {
    let host = addr.rsplit_once(':').map_or(addr, |(host, _)| host);
    host.trim_start_matches('[').trim_end_matches(']')
}

/// `total` sessions over `concurrency` workers; returns the samples, the failure count, the
/// first failure and the wall time.
async fn run(
    addr: &str,
    transport: &Transport,
    args: &ConnectArgs,
    concurrency: u32,
    total: usize,
) -> (Vec<Sample>, usize, Option<String>, Duration) {
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let (next, addr, transport) = (next.clone(), addr.to_owned(), transport.clone());
        let timeout = args.session_timeout;
        workers.spawn(async move {
            let mut samples = Vec::new();
            let mut errors = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < total {
                match session::one(&addr, &transport, timeout, SESSION_DEADLINE).await {
                    Ok(sample) => samples.push(sample),
                    Err(error) => errors.push(error),
                }
            }
            (samples, errors)
        });
    }
    let mut samples = Vec::with_capacity(total);
    let mut errors = 0;
    let mut first_error = None;
    while let Some(joined) = workers.join_next().await {
        match joined {
            Ok((mut ok, failed)) => {
                samples.append(&mut ok);
                errors += failed.len();
                if first_error.is_none() {
                    first_error = failed.into_iter().next();
                }
            }
            Err(error) => {
                errors += 1;
                first_error.get_or_insert_with(|| format!("worker: {error}"));
            }
        }
    }
    (samples, errors, first_error, start.elapsed())
}

fn summarize(
    mode: Mode,
    concurrency: u32,
    samples: &[Sample],
    errors: usize,
    wall: Duration,
) -> RunResult {
    let mut totals: Vec<u64> = samples.iter().map(|s| micros(s.total)).collect();
    let mut transports: Vec<u64> = samples.iter().map(|s| micros(s.transport)).collect();
    totals.sort_unstable();
    transports.sort_unstable();
    RunResult {
        mode,
        concurrency,
        ok: samples.len(),
        errors,
        per_second: samples.len() as f64 / wall.as_secs_f64().max(1e-9),
        p50_us: percentile(&totals, 0.50),
        p99_us: percentile(&totals, 0.99),
        transport_p50_us: percentile(&transports, 0.50),
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// The nearest-rank percentile of sorted `values` (0 when empty).
fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let values: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&values, 0.50), 50);
        assert_eq!(percentile(&values, 0.99), 99);
        assert_eq!(percentile(&[], 0.5), 0);
        assert_eq!(percentile(&[7], 0.99), 7);
    }

    #[test]
    fn hosts_lose_port_and_brackets() {
        assert_eq!(host_of("127.0.0.1:2281"), "127.0.0.1");
        assert_eq!(host_of("[::1]:2281"), "::1");
        assert_eq!(host_of("localhost:2281"), "localhost");
    }
}
