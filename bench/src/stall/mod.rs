//! `shepherd-bench stall`: what one client's large state costs everyone else when the server
//! has to walk it (docs/bench/stall.md).
//!
//! One raw connection (the holder, `holder.rs`) sets `--watches` data watches; then the trigger:
//! `close` (the holder's socket closes, and the server drops every watch it held) or a
//! four-letter word (`wchc`, `wchp`) read to its end on a connection of its own while the holder
//! stays. Throughout, `--bystanders` sessions with a `--session-timeout-ms` timeout each run
//! getData and setData on a node of their own, one call at a time. The figures: each kind of
//! call's worst latency in the second before the trigger and from the trigger to the end of the
//! `--window`, how many bystander sessions the server expired, and the server's resident set
//! before the watches, with them, and at the end of the window.
//!
//! Invariants: every wait is bounded (`--deadline` for setting up, `--window` after the trigger);
//! a bystander call that fails for any reason but its session's end fails the run, and an
//! expired session is counted, never hidden.

mod holder;

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use shepherd_client::{Client, CreateOptions, SessionState};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::task::JoinSet;

use crate::error::{Error, Result};
use crate::target::TargetArgs;
use holder::Holder;

/// What makes the server walk the holder's watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Trigger {
    /// The holder's connection closes.
    Close,
    /// `wchc`: every watch, by session.
    Wchc,
    /// `wchp`: every watch, by path.
    Wchp,
}

/// `shepherd-bench stall` options.
#[derive(Args, Debug, Clone)]
pub struct StallArgs {
    /// Data watches the holder sets.
    #[arg(long, default_value_t = 1_000_000)]
    pub watches: usize,
    /// What makes the server walk them.
    #[arg(long, value_enum, default_value_t = Trigger::Close)]
    pub trigger: Trigger,
    /// Sessions measured meanwhile.
    #[arg(long, default_value_t = 20)]
    pub bystanders: usize,
    /// The bystanders' session timeout, ms.
    #[arg(long = "session-timeout-ms", value_name = "MS", default_value_t = 4000)]
    pub session_timeout_ms: u64,
    /// How long after the trigger the bystanders are measured, seconds.
    #[arg(long, value_name = "SECS", default_value_t = 15)]
    pub window: u64,
    /// The longest setting up may take, seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub deadline: u64,
    #[command(flatten)]
    pub target: TargetArgs,
}

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct Measurement {
    /// Worst getData and setData latency in the second before the trigger, seconds.
    pub before: (f64, f64),
    /// And from the trigger to the end of the window.
    pub after: (f64, f64),
    /// Bystander sessions the server expired.
    pub expired: usize,
    /// How long the trigger took: the close itself, or the word's answer read to its end.
    pub trigger_seconds: f64,
    /// When the worst call after the trigger began, seconds from the trigger.
    pub worst_at: f64,
    /// The server's RSS before the watches, with them, and at the end of the window, bytes.
    pub rss: (u64, u64, u64),
}

/// The worst latencies seen, by kind, since `mark`.
#[derive(Debug, Default)]
struct Worst {
    mark: Option<Instant>,
    before: (Duration, Duration),
    after: (Duration, Duration),
    /// When the worst call after the mark began, from the mark (negative: just before it).
    worst_at: f64,
}

impl Worst {
    fn record(&mut self, started: Instant, took: Duration, write: bool) {
        let slot = match self.mark {
            Some(mark) if started + took >= mark => &mut self.after,
            _ => &mut self.before,
        };
        let worst = if write { &mut slot.1 } else { &mut slot.0 };
        *worst = (*worst).max(took);
        if let Some(mark) = self.mark
            && started + took >= mark
            && took >= self.after.0.max(self.after.1)
        {
            self.worst_at = if started >= mark {
                (started - mark).as_secs_f64()
            } else {
                -(mark - started).as_secs_f64()
            };
        }
    }
}

/// Runs the benchmark as `shepherd-bench stall` does: one line on stdout.
pub fn main(args: &StallArgs) -> ExitCode {
    match execute(args) {
        Ok((server, m)) => {
            let mib = |b: u64| b as f64 / 1_048_576.0;
            println!(
                "stall: {server}: {} watches, {:?}: worst getData {:.3} s, setData {:.3} s \
                 (before: {:.3} s, {:.3} s); {} of {} sessions expired; trigger {:.2} s; \
                 RSS {:.0} → {:.0} → {:.0} MiB; the worst began at {:+.3} s",
                args.watches,
                args.trigger,
                m.after.0,
                m.after.1,
                m.before.0,
                m.before.1,
                m.expired,
                args.bystanders,
                m.trigger_seconds,
                mib(m.rss.0),
                mib(m.rss.1),
                mib(m.rss.2),
                m.worst_at,
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// One run; see the module docs.
///
/// # Errors
/// The server cannot be reached or started, a call fails, setting up outlasts the deadline, or
/// the memory cannot be read.
pub fn execute(args: &StallArgs) -> Result<(String, Measurement)> {
    let runtime = args.target.client_runtime()?;
    let mut target = args.target.open()?;
    let server = args.target.label.clone().unwrap_or(target.name.clone());
    let measured = runtime.block_on(run(args, &target));
    let _ = target.stop();
    Ok((server, measured?))
}

async fn run(args: &StallArgs, target: &crate::target::Target) -> Result<Measurement> {
    let deadline = Duration::from_secs(args.deadline);
    let rss = || {
        target.rss()?.ok_or_else(|| {
            Error::Refused("the server's process is unknown: give --server-pid".to_owned())
        })
    };
    let dir = format!("/shepherd-bench-stall-{}", std::process::id());
    let bystanders = open_bystanders(&target.connect, &dir, args).await?;
    let rss_before = rss()?;
    let holder = tokio::time::timeout(deadline, Holder::arm(&target.connect, &dir, args.watches))
        .await
        .map_err(|_| Error::Refused(format!("setting the watches took over {deadline:?}")))??;
    let rss_armed = rss()?;
    let worst = Arc::new(Mutex::new(Worst::default()));
    let stop = tokio_util::sync::CancellationToken::new();
    let mut tasks = JoinSet::new();
    for (k, client) in bystanders.iter().enumerate() {
        let (client, worst, stop) = (client.clone(), Arc::clone(&worst), stop.clone());
        let path = format!("{dir}/b{k}");
        tasks.spawn(async move { bystand(client, path, worst, stop).await });
    }
    // A second of calls before the trigger: the baseline.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let released = tokio_util::sync::CancellationToken::new();
    let held = {
        let released = released.clone();
        tokio::spawn(holder.hold_until(async move { released.cancelled().await }))
    };
    lock(&worst).mark = Some(Instant::now());
    let triggered = Instant::now();
    match args.trigger {
        Trigger::Close => released.cancel(),
        Trigger::Wchc => word(&target.connect, b"wchc").await?,
        Trigger::Wchp => word(&target.connect, b"wchp").await?,
    }
    let trigger_seconds = triggered.elapsed().as_secs_f64();
    tokio::time::sleep_until((triggered + Duration::from_secs(args.window)).into()).await;
    stop.cancel();
    released.cancel();
    while let Some(done) = tasks.join_next().await {
        done.map_err(|join| Error::Refused(format!("a bystander failed: {join}")))??;
    }
    let _ = held.await;
    let rss_end = rss()?;
    let expired = bystanders
        .iter()
        .filter(|c| c.status().state == SessionState::Expired)
        .count();
    // Tidy up what the sessions still alive can reach.
    for (k, client) in bystanders.iter().enumerate() {
        let _ = client.delete(&format!("{dir}/b{k}"), None).await;
    }
    for client in &bystanders {
        if client.delete(&dir, None).await.is_ok() {
            break;
        }
    }
    for client in &bystanders {
        let _ = client.close().await;
    }
    let seconds = |(r, w): (Duration, Duration)| (r.as_secs_f64(), w.as_secs_f64());
    let worst = lock(&worst);
    Ok(Measurement {
        before: seconds(worst.before),
        after: seconds(worst.after),
        expired,
        trigger_seconds,
        worst_at: worst.worst_at,
        rss: (rss_before, rss_armed, rss_end),
    })
}

/// The figures' lock: a bystander that panicked while holding it left figures still worth
/// reading.
fn lock(worst: &Mutex<Worst>) -> std::sync::MutexGuard<'_, Worst> {
    worst
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The bystanders' sessions and nodes (`dir/b<k>`), under a new `dir`.
async fn open_bystanders(connect: &str, dir: &str, args: &StallArgs) -> Result<Vec<Client>> {
    let mut clients = Vec::with_capacity(args.bystanders);
    for _ in 0..args.bystanders {
        let client = Client::builder()
            .session_timeout(Duration::from_millis(args.session_timeout_ms))
            .connect_timeout(Duration::from_secs(10))
            .connect(connect)
            .await
            .map_err(|source| Error::Client {
                what: format!("cannot open a bystander's session to {connect}"),
                source,
            })?;
        clients.push(client);
    }
    create(&clients[0], dir).await?;
    for (k, client) in clients.iter().enumerate() {
        create(client, &format!("{dir}/b{k}")).await?;
    }
    Ok(clients)
}

/// Creates the persistent node `path`.
async fn create(client: &Client, path: &str) -> Result<()> {
    client
        .create(path, b"", &CreateOptions::persistent())
        .await
        .map(|_| ())
        .map_err(|source| Error::Client {
            what: format!("cannot create {path}"),
            source,
        })
}

/// One bystander: getData then setData of its node, one call at a time, until `stop`. Its
/// session's end (expiry) ends it quietly, to be counted; any other failure is an error.
async fn bystand(
    client: Client,
    path: String,
    worst: Arc<Mutex<Worst>>,
    stop: tokio_util::sync::CancellationToken,
) -> Result<()> {
    while !stop.is_cancelled() {
        for write in [false, true] {
            let started = Instant::now();
            let call = async {
                if write {
                    client.set_data(&path, b"x", None).await.map(|_| ())
                } else {
                    client.get_data(&path).await.map(|_| ())
                }
            };
            let outcome = tokio::select! {
                outcome = call => outcome,
                () = stop.cancelled() => return Ok(()),
            };
            match outcome {
                Ok(()) => lock(&worst).record(started, started.elapsed(), write),
                Err(e) if e.is_session_ended() => return Ok(()),
                // A reconnect in the middle of a stall: the call is retried by the next turn,
                // and its wait is still counted.
                Err(e) if e.is_connection_loss() => {
                    lock(&worst).record(started, started.elapsed(), write);
                }
                Err(source) => {
                    return Err(Error::Client {
                        what: format!("a bystander's call on {path}"),
                        source,
                    });
                }
            }
        }
    }
    Ok(())
}

/// Sends a four-letter word on a connection of its own and reads the answer to its end.
async fn word(connect: &str, word: &[u8; 4]) -> Result<()> {
    let io = |what: &'static str| {
        move |source| Error::Io {
            what: what.to_owned(),
            source,
        }
    };
    // A connect string may list several members: the word goes to the first.
    let first = connect.split(',').next().unwrap_or(connect);
    let mut stream = tokio::net::TcpStream::connect(first)
        .await
        .map_err(io("connect for the four-letter word"))?;
    stream.write_all(word).await.map_err(io("send the word"))?;
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0usize;
    loop {
        let n = stream.read(&mut buf).await.map_err(io("read the answer"))?;
        if n == 0 {
            break;
        }
        total += n;
    }
    if total == 0 {
        return Err(Error::Refused(
            "the four-letter word had no answer (is it whitelisted?)".to_owned(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_server::TestServer;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: StallArgs,
    }

    /// A small run of each trigger on an embedded server in this process: the watches are set,
    /// the bystanders are measured before and after, none expires, the memory is read.
    #[test]
    fn a_small_run_of_each_trigger_on_an_embedded_server() {
        let server = TestServer::start(
            shepherd_server::Server::builder()
                .max_client_connections(0)
                .all_four_letter_words(),
        );
        for trigger in ["close", "wchc", "wchp"] {
            let args = Cli::try_parse_from([
                "t",
                "--watches",
                "3000",
                "--bystanders",
                "3",
                "--window",
                "1",
                "--deadline",
                "60",
                "--trigger",
                trigger,
                "--connect",
                &server.connect,
                "--server-pid",
                &server.pid,
            ])
            .unwrap()
            .args;
            let (_, m) = execute(&args).unwrap();
            assert_eq!(m.expired, 0, "{trigger}");
            assert!(m.before.0 > 0.0 && m.after.0 > 0.0, "{trigger}: {m:?}");
            assert!(
                m.rss.0 > 0 && m.rss.1 > 0 && m.rss.2 > 0,
                "{trigger}: {m:?}"
            );
        }
    }
}
