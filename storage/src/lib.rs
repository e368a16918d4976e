//! Durable storage in ZooKeeper 3.8's own on-disk format, byte for byte, so that a data
//! directory moves between ZooKeeper and Shepherd both ways (docs/storage.md is the reference).
//!
//! This crate owns the files of a data directory and nothing else: it never touches the core,
//! reads no clock and spawns no thread; all of it is blocking file I/O for the shell to run on
//! its own threads. Callers hand it records (log entries, node records the core produced) and
//! get records back.
//!
//! * [`DataDir`] opens and locks `DIR/version-2` (and a separate log directory), lists files,
//!   purges old ones ([`DataDir::purge`]) and keeps the secret file ([`DataDir::secret`]).
//! * [`TxnLog`] appends `log.<zxid>` files; [`read_logs`] reads entries after a zxid, stopping at
//!   a [`TornTail`]; [`truncate_torn_tail`] cuts one.
//! * [`SnapshotWriter`] and [`SnapshotReader`] write and stream `snapshot.<zxid>` files.
//! * [`recover`] feeds the newest usable snapshot and the later log entries to a
//!   [`RecoverySink`], and reports what it did ([`RecoveryReport`]); a log is cut only where a
//!   write was torn ([`is_torn_write`]).
//! * [`inspect`] reads a directory as recovery would and changes nothing; [`truncate_after`] is
//!   the operator's repair, which keeps a copy of all it removes.
//!
//! Invariants: a file named `log.*` or `snapshot.*` is only ever written in ZooKeeper's format
//! (temporary files have names ZooKeeper ignores); nothing read from disk can panic or allocate
//! more than the file holds; a damaged file is reported with its path and offset, never applied
//! past the damage.

mod damage;
mod data_dir;
mod error;
mod inspect;
mod java_buffer;
mod log_reader;
mod names;
mod recovery;
mod repair;
mod secret;
mod skipped_snapshot;
mod snapshot_reader;
mod snapshot_writer;
#[cfg(test)]
mod tests;
mod txn_log;
mod zeros;

pub use damage::is_torn_write;
pub use data_dir::DataDir;
pub use error::StorageError;
pub use inspect::{Inspection, LogDamage, SnapshotCheck, inspect};
pub use log_reader::{LogReader, TailProblem, TornTail, read_logs, truncate_torn_tail};
pub use names::{
    LOG_PREFIX, SNAPSHOT_PREFIX, VERSION_DIR, log_name, snapshot_name, zxid_from_name,
};
pub use recovery::{RecoverOptions, RecoveryReport, RecoverySink, recover, recover_with};
pub use repair::{Repair, truncate_after};
pub use secret::SECRET_FILE;
pub use skipped_snapshot::SkippedSnapshot;
pub use snapshot_reader::{SnapshotNode, SnapshotReader, ZxidDigest};
pub use snapshot_writer::{DIGEST_VERSION, SnapshotWriter, encode_node};
pub use txn_log::{DEFAULT_PREALLOC, TxnLog, padded_size};
