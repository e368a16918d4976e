//! Durable storage in ZooKeeper 3.8's own on-disk format (docs/storage.md).
//!
//! This module owns the files of a data directory and nothing else: it never touches the
//! core, reads no clock and spawns no thread. Its callers hand it records (log entries, node
//! records the core produced) and get records back.

mod data_dir;
mod error;
mod java_buffer;
mod log_reader;
mod names;
mod recovery;
mod secret;
mod snapshot_reader;
mod snapshot_writer;
#[cfg(test)]
mod tests;
mod txn_log;

pub use data_dir::{DataDir, LOCK_FILE};
pub use error::StorageError;
pub use log_reader::{LogReader, TailProblem, TornTail, read_logs, truncate_torn_tail};
pub use names::{
    LOG_PREFIX, SNAPSHOT_PREFIX, VERSION_DIR, log_name, snapshot_name, zxid_from_name,
};
pub use recovery::{RecoveryReport, RecoverySink, SkippedSnapshot, recover};
pub use secret::SECRET_FILE;
pub use snapshot_reader::{SnapshotNode, SnapshotReader, ZxidDigest};
pub use snapshot_writer::{DIGEST_VERSION, SnapshotWriter, encode_node};
pub use txn_log::{DEFAULT_PREALLOC, TxnLog, padded_size};
