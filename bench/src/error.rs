//! [`Error`]: why a benchmark, or one run of it, could not measure; one type for every
//! subcommand.
//!
//! A herd run that fails keeps its error in its `RunResult` (its table row says why, and the
//! other runs go on); only what stops a whole benchmark (no runtime, no server, no counters, a
//! file that cannot be read or written, a limit of the machine) is returned by its `execute`.
//!
//! Invariants: every message names what was being done, so that a table row reads on its own;
//! client and recipe errors pass through unchanged as the variant's source, so that a caller can
//! still branch on them. ZooKeeper outcomes the benchmark expects (a folder that already
//! exists, a lock not free yet) never become an `Error`: they are handled where they happen.

use std::path::PathBuf;

/// The hint given when sessions cannot be opened.
const CONNECTION_LIMIT_HINT: &str = "if the server limits connections per client address \
     (ZooKeeper's maxClientCnxns, 60 by default), set maxClientCnxns=0 in its zoo.cfg";

/// Everything a benchmark can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Local I/O: starting a runtime or the embedded server, reading or writing a file.
    #[error("cannot {what}: {source}")]
    Io {
        /// What was being done: `start the client runtime`, `write herd.csv`…
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A client call to the server failed.
    #[error("{what}: {source}")]
    Client {
        /// What was being done: `cannot connect to …`, `cannot create …`…
        what: String,
        /// The client's error, unchanged.
        source: shepherd_client::Error,
    },
    /// One of the N sessions a benchmark opens could not be opened.
    #[error(
        "cannot open session {number} of {of} ({open} open): {source}; {CONNECTION_LIMIT_HINT}"
    )]
    Session {
        /// Which session, from 1.
        number: usize,
        /// How many were to be opened.
        of: usize,
        /// How many were open when it failed.
        open: usize,
        /// The client's error, unchanged.
        source: shepherd_client::Error,
    },
    /// A contender's lock recipe failed.
    #[error("{what}: {source}")]
    Recipe {
        /// Which contender, doing what: `contender 3`, `contender 3 cannot release`.
        what: String,
        /// The recipe's error, unchanged.
        source: shepherd_recipes::Error,
    },
    /// A task of the run panicked or was cancelled.
    #[error("{what} failed: {source}")]
    Task {
        /// Which task: `a contender`, `a connecting task`.
        what: &'static str,
        /// Its join error.
        source: tokio::task::JoinError,
    },
    /// The `mntr` exchange with a ZooKeeper server failed.
    #[error("mntr to {addr}: {source}")]
    Mntr {
        /// The server's `host:port`.
        addr: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The server closed the `mntr` connection without a word (mntr not whitelisted).
    #[error("{addr} answered mntr with nothing")]
    MntrEmpty {
        /// The server's `host:port`.
        addr: String,
    },
    /// The `mntr` reply has none of the watch notification counters.
    #[error("mntr of {addr} has no watch notification counters")]
    MntrNoCounters {
        /// The server's `host:port`.
        addr: String,
    },
    /// The notification counters of a `--connect` server cannot be read, so nothing can be
    /// measured there.
    #[error(
        "cannot read the notification counters of {connect} with mntr: {source} \
         (ZooKeeper needs 4lw.commands.whitelist to include mntr)"
    )]
    CountersUnreadable {
        /// The connect string.
        connect: String,
        /// Why.
        source: Box<Error>,
    },
    /// The benchmark cannot run as asked on this machine or server (a limit, a lost session).
    #[error("{0}")]
    Refused(String),
    /// A deadline passed.
    #[error("timed out {0}")]
    TimedOut(String),
    /// A contender acquired the lock while the coordinator's node still blocked it: the
    /// recipe and the coordinator disagree about the lock's layout.
    #[error("a contender got the lock while the coordinator held it")]
    Unblocked,
    /// `plotters` could not draw the chart.
    #[error("cannot draw the chart: {0}")]
    Plot(#[from] plotters::drawing::DrawingAreaErrorKind<std::io::Error>),
    /// A `--from-csv` file is not what `--csv` writes.
    #[error("{}:{line}: {reason}", path.display())]
    Csv {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A run read back from a CSV that had failed when it was measured (the CSV keeps no
    /// reason).
    #[error("failed (the CSV records no reason)")]
    Recorded,
}

/// Shorthand for a benchmark's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
