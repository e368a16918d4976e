//! Whether an accepted connection leaves the server the descriptors it must still open itself:
//! the next log file at a roll, a snapshot and the directories synced after them, the purge. A
//! connection that would eat into that reserve is refused, as one past `maxClientCnxns` is, so
//! that a flood of connections costs the flood, never the log: a durable server that cannot
//! open its next log file must stop.
//!
//! The kernel hands out the lowest free descriptor, so an accepted socket's number is the count
//! of descriptors open below it: the check reads the live state of the whole process (other
//! servers in it, the HTTP endpoints' connections, files) with one `getrlimit` and nothing
//! counted. `shepherd serve` raises its soft limit to the hard one at start, as the JVM does for
//! ZooKeeper; an embedded server takes its host process's limit as it is.

use std::os::fd::RawFd;

use rustix::process::{Resource, getrlimit};

/// Descriptors kept for the server's own files: the current and the rolled log files until
/// their commit, a snapshot being written, the directories synced after them, the purge.
const FILES_RESERVE: u64 = 32;

/// Whether a connection accepted as descriptor `fd` leaves the reserve free.
pub(crate) fn leaves_reserve(fd: RawFd) -> bool {
    match (getrlimit(Resource::Nofile).current, u64::try_from(fd)) {
        (Some(soft), Ok(fd)) => fd.saturating_add(FILES_RESERVE) < soft,
        _ => true,
    }
}
