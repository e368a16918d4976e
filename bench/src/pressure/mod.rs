//! `shepherd-bench pressure`: how far a server's memory grows while one client pipelines large
//! requests at it, the measure behind docs/bench/pressure.md. Meant to run with the server's
//! fsyncs slowed (`bench/scripts/pressure.sh` runs it under `strace`'s delay injection), so that
//! what the server holds for its disk shows in its resident set.
//!
//! Two bursts on one session: `--writes` pipelined `setData` of `--size` bytes to one node, then
//! one more `setData` followed by `--reads` pipelined `getData` of that node: the write puts every
//! read behind the disk (no reply may leave before what it saw is durable), so a durable server
//! holds the reads' replies for one whole fsync, as a client reading its own writes makes it. For each, the server's resident set before the
//! burst and its peak during it (`/proc/PID/status`), the peak from `VmHWM` after resetting it
//! through `/proc/PID/clear_refs` where the kernel allows, and from sampling `VmRSS` every
//! [`SAMPLE_EVERY`] in any case (the larger of the two is reported, and which one).
//!
//! Invariants: every request of a burst is sent before any reply is awaited (they are all in
//! flight at once, as a pipelining client has them), and a burst whose replies did not all come
//! back successful says so in its row (`error`), so that a server that drops requests or closes
//! the connection does not pass for frugal; the benchmark then stops, and exits non-zero.

mod memory;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use futures_util::future::{try_join, try_join_all};
use shepherd_cli::runtime::Threads;
use shepherd_client::{Client, CreateOptions};

use crate::error::{Error, Result};
use crate::target::{Target, TargetArgs};
use memory::Peak;

/// How often the sampler reads the server's `VmRSS` during a burst.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(2);

/// The options of `shepherd-bench pressure`.
#[derive(clap::Args, Debug, Clone)]
pub struct PressureArgs {
    /// Pipelined setData calls in the write burst.
    #[arg(long, default_value_t = 150)]
    pub writes: usize,
    /// Pipelined getData calls in the read burst.
    #[arg(long, default_value_t = 300)]
    pub reads: usize,
    /// The node's data, in bytes (ZooKeeper's jute.maxbuffer must allow it with a header).
    #[arg(long, default_value_t = 1_000_000)]
    pub size: usize,
    #[command(flatten)]
    pub target: TargetArgs,
}

/// One burst's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Burst {
    /// `set` or `get`.
    pub what: &'static str,
    /// Requests pipelined.
    pub count: usize,
    /// The server's resident set before the burst, in bytes.
    pub rss_before: u64,
    /// Its peak during the burst, in bytes.
    pub rss_peak: u64,
    /// Where the peak came from: `hwm` (the kernel's high-water mark) or `sampled`.
    pub source: &'static str,
    /// From the first request sent to the last reply.
    pub elapsed: Duration,
    /// Why not every reply came back successful, if not.
    pub error: Option<String>,
}

impl Burst {
    /// How far the resident set grew, in MiB.
    pub fn growth_mib(&self) -> f64 {
        (self.rss_peak.saturating_sub(self.rss_before)) as f64 / f64::from(1 << 20)
    }
}

/// The CSV header of [`csv_row`].
pub const CSV_HEADER: &str =
    "server,burst,count,size,rss_before,rss_peak,growth_mib,source,seconds,error";

/// A burst as one CSV row.
pub fn csv_row(server: &str, size: usize, burst: &Burst) -> String {
    format!(
        "{server},{},{},{size},{},{},{:.1},{},{:.3},{}",
        burst.what,
        burst.count,
        burst.rss_before,
        burst.rss_peak,
        burst.growth_mib(),
        burst.source,
        burst.elapsed.as_secs_f64(),
        // Kept to one CSV field.
        burst
            .error
            .as_deref()
            .unwrap_or("")
            .replace([',', '\n'], ";")
    )
}

/// Runs the benchmark and prints a CSV header and one row per burst measured; fails if a burst
/// failed (its row printed first).
pub fn main(args: &PressureArgs) -> ExitCode {
    let target = match args.target.open() {
        Ok(target) => target,
        Err(error) => {
            eprintln!("pressure: {error}");
            return ExitCode::FAILURE;
        }
    };
    let threads = Threads::Workers(args.target.client_threads);
    let bursts = match crate::block::run("pressure", threads, execute(args, &target)) {
        Ok(bursts) => bursts,
        Err(code) => return code,
    };
    let label = args.target.label.as_deref().unwrap_or(&target.connect);
    println!("{CSV_HEADER}");
    for burst in &bursts {
        println!("{}", csv_row(label, args.size, burst));
    }
    if bursts.iter().any(|b| b.error.is_some()) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The two bursts against `target`; the second only if the first succeeded.
///
/// # Errors
/// The connection or the node's creation failed, or a reading of the server's memory.
pub async fn execute(args: &PressureArgs, target: &Target) -> Result<Vec<Burst>> {
    let client = Client::builder()
        .session_timeout(Duration::from_secs(30))
        .connect(&target.connect)
        .await
        .map_err(|source| Error::Client {
            what: format!("cannot connect to {}", target.connect),
            source,
        })?;
    let path = format!("/pressure-{}", std::process::id());
    let data = vec![b'p'; args.size];
    client
        .create(&path, &data, &CreateOptions::persistent())
        .await
        .map_err(|source| Error::Client {
            what: format!("cannot create {path}"),
            source,
        })?;
    let set = burst("set", args.writes, target, || async {
        try_join_all((0..args.writes).map(|_| client.set_data(&path, &data, None))).await
    })
    .await?;
    if set.error.is_some() {
        return Ok(vec![set]);
    }
    let get = burst("get", args.reads, target, || async {
        // `try_join` polls the write first, so it is sent before the reads.
        try_join(
            client.set_data(&path, &data, None),
            try_join_all((0..args.reads).map(|_| client.get_data(&path))),
        )
        .await
    })
    .await?;
    // The node is the benchmark's own; a failure to remove it changes no figure.
    let _ = client.delete(&path, None).await;
    Ok(vec![set, get])
}

/// Measures one burst: `run` sends its requests and awaits every reply.
async fn burst<F, Fut, T>(
    what: &'static str,
    count: usize,
    target: &Target,
    run: F,
) -> Result<Burst>
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = std::result::Result<T, shepherd_client::Error>>,
{
    let peak = Peak::start(target, SAMPLE_EVERY)?;
    let started = Instant::now();
    let done = run().await;
    let elapsed = started.elapsed();
    let (rss_before, rss_peak, source) = peak.finish()?;
    Ok(Burst {
        what,
        count,
        rss_before,
        rss_peak,
        source,
        elapsed,
        error: done.err().map(|error| error.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_reads_as_one_csv_row() {
        let burst = Burst {
            what: "get",
            count: 300,
            rss_before: 10 << 20,
            rss_peak: 42 << 20,
            source: "hwm",
            elapsed: Duration::from_millis(1500),
            error: None,
        };
        assert_eq!(burst.growth_mib(), 32.0);
        assert_eq!(
            csv_row("shepherd", 1_000_000, &burst),
            "shepherd,get,300,1000000,10485760,44040192,32.0,hwm,1.500,"
        );
        assert_eq!(CSV_HEADER.split(',').count(), 10);
        let lost = Burst {
            error: Some("connection lost, reset".to_owned()),
            ..burst
        };
        assert!(csv_row("s", 1, &lost).ends_with(",connection lost; reset"));
    }
}
