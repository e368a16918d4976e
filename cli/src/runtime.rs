//! The tokio runtimes the commands and benchmarks run on, built in one place: every runtime has
//! I/O and time enabled, and a command that cannot have one says so in one line and exits.

use std::io;

use tokio::runtime::{Builder, Runtime};

/// The threads a runtime runs its tasks on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// The calling thread only: the cheapest per wake-up, for one client or one side of a run.
    Current,
    /// A multi-thread runtime with this many workers (at least one), or one per CPU.
    Workers(Option<usize>),
}

/// A runtime with I/O and time enabled.
///
/// # Errors
/// The OS refused a thread or the I/O driver.
pub fn start(threads: Threads) -> io::Result<Runtime> {
    let mut builder = match threads {
        Threads::Current => Builder::new_current_thread(),
        Threads::Workers(workers) => {
            let mut builder = Builder::new_multi_thread();
            if let Some(n) = workers {
                builder.worker_threads(n.max(1));
            }
            builder
        }
    };
    builder.enable_all().build()
}

/// [`start`], or `None` after printing `error: cannot start WHAT: …` on stderr, for a command
/// that then exits with its own code.
pub fn start_or_report(threads: Threads, what: &str) -> Option<Runtime> {
    match start(threads) {
        Ok(runtime) => Some(runtime),
        Err(error) => {
            eprintln!("error: cannot start {what}: {error}");
            None
        }
    }
}
