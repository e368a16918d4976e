//! How many client connections a server may hold before its descriptors run short: the open-file
//! limit, less what is open at start and a reserve for what the server itself must still open
//! (the next log file at a roll, a snapshot and its directory, the purge, the HTTP endpoints'
//! connections). A connection past that share is refused, as one past `maxCnxns` is, so that a
//! flood of connections costs the flood, never the log: a durable server that cannot open its
//! next log file must stop.
//!
//! Invariant: the share is read once, at start; `shepherd serve` raises its soft limit to the
//! hard one before (the JVM does the same for ZooKeeper), an embedded server takes its host
//! process's limit as it is.

use rustix::process::{Resource, getrlimit};

/// Descriptors kept for the server's own files: the current and the rolled log files until
/// their commit, a snapshot being written, the directories synced after them, the purge.
const FILES_RESERVE: usize = 32;

/// The most client connections to serve: `max_cnxns` (ZooKeeper's `maxCnxns`, 0 for none) and
/// the open-file share, whichever is lower. `http` is how many descriptors the HTTP endpoints
/// may hold at once.
pub(crate) fn connection_cap(max_cnxns: usize, http: usize) -> usize {
    let share = match getrlimit(Resource::Nofile).current {
        None => usize::MAX,
        Some(soft) => {
            let soft = usize::try_from(soft).unwrap_or(usize::MAX);
            // Linux lists a process's open descriptors here; elsewhere count none.
            let open = std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count);
            soft.saturating_sub(open + FILES_RESERVE + http)
        }
    };
    match max_cnxns {
        0 => share,
        limit => limit.min(share),
    }
}
