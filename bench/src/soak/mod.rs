//! `shepherd-bench soak locks`: a lock chaos run. Many clients contend for every lock recipe of
//! `shepherd-recipes` against an embedded server while a driver injects faults through the
//! server's test controls, and a checker holds every step against the safety properties of a
//! lock with fencing tokens. Prints the counts and exits non-zero on any violation.
//!
//! The same engine runs in `cargo test` with a fixed seed on a paused clock (`tests`); the
//! command runs it on the real clock over loopback TCP for as long as it is told.
//! docs/chaos.md describes the properties, the fencing token and the faults.
//!
//! | File | Owns |
//! |---|---|
//! | `mod.rs` | the command's options and entry point |
//! | [`engine`] | one run: setup, workers and driver, stop, the final checks |
//! | [`worker`] | one client's acquire, hold, write, release loop |
//! | [`driver`] | the faults |
//! | [`checker`] | the safety properties |
//! | [`family`] | which kinds share a lock, the paths, the resource's content |
//! | [`transport`] | TCP or in-memory connections |
//! | [`report`] | the counts, printed |

pub mod checker;
pub mod driver;
pub mod engine;
pub mod family;
pub mod report;
pub mod transport;
pub mod worker;

#[cfg(test)]
mod tests;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Subcommand};
use shepherd_cli::runtime::{self, Threads};
use shepherd_server::Server;

use engine::ChaosConfig;
use transport::Transport;

/// The soak runs `shepherd-bench soak` knows.
#[derive(Subcommand, Debug)]
pub enum Soak {
    /// Clients contend for every lock recipe under injected faults (connection cuts, lost
    /// replies, freezes past the session timeout, expiries, delays, paused holders); exits 1
    /// on any violation of exclusion or fencing, an orphan lock node, a hang, or a missed
    /// lost().
    Locks(LocksArgs),
}

/// `shepherd-bench soak locks` options.
#[derive(Args, Debug, Clone)]
pub struct LocksArgs {
    /// Seeds every random choice; the same seed gives the same schedule of faults.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// How long the faults run (`90s`, `10m`, `1h`).
    #[arg(long, value_parser = humantime::parse_duration, default_value = "1m")]
    pub duration: Duration,
    /// Concurrent clients, one session each, dealt round every lock kind.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u16).range(2..))]
    pub clients: u16,
    /// The session timeout the clients ask for; waits, holds, freezes and pauses are scaled to
    /// it.
    #[arg(long = "session-timeout", value_parser = humantime::parse_duration, default_value = "2s")]
    pub session_timeout: Duration,
    /// Print a line of counts to stderr this often.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "30s")]
    pub progress: Duration,
    /// Connect the clients through in-memory pipes instead of loopback TCP.
    #[arg(long = "in-memory")]
    pub in_memory: bool,
}

/// Runs a soak to its exit code: 0 without violations, 1 with, 2 when it cannot start.
pub fn main(soak: &Soak) -> ExitCode {
    let Soak::Locks(args) = soak;
    if args.session_timeout < Duration::from_millis(200) {
        eprintln!("error: --session-timeout must be at least 200ms");
        return ExitCode::from(2);
    }
    let Some(runtime) = runtime::start_or_report(Threads::Workers(None), "the runtime") else {
        return ExitCode::from(2);
    };
    runtime.block_on(async {
        // Ticks of a quarter of the session timeout: the timeout asked for is inside the
        // server's bounds (2 to 20 ticks), and expiry is that precise.
        let server = match Server::builder()
            .tick_time(args.session_timeout / 4)
            .container_check_interval(Duration::from_secs(1))
            .start()
            .await
        {
            Ok(server) => Arc::new(server),
            Err(error) => {
                eprintln!("error: cannot start the server: {error}");
                return ExitCode::from(2);
            }
        };
        let clients = usize::from(args.clients);
        let config = ChaosConfig {
            seed: args.seed,
            clients,
            duration: args.duration,
            session_timeout: args.session_timeout,
            fault_interval: driver::default_interval(clients, args.session_timeout),
            transport: if args.in_memory {
                Transport::InMemory
            } else {
                Transport::Tcp
            },
            progress: Some(args.progress),
        };
        eprintln!(
            "soak locks: seed {} clients {} duration {:?} session timeout {:?}, server {}",
            args.seed,
            clients,
            args.duration,
            args.session_timeout,
            server.local_addr()
        );
        let report = engine::run(server.clone(), config).await;
        server.shutdown().await;
        print!("{report}");
        if report.violation_count() == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    })
}
