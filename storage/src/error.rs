//! [`StorageError`]: why a data directory could not be opened or recovered. Every variant names
//! the file or directory involved, so that the message alone tells an operator where to look.

use std::io;
use std::path::PathBuf;

use thiserror::Error;

use super::log_reader::TornTail;
use super::skipped_snapshot::SkippedSnapshot;

/// Why a data directory could not be opened, recovered, purged, or its secret read.
#[derive(Debug, Error)]
pub enum StorageError {
    /// An I/O error on a path.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// A directory that cannot be created or written to.
    #[error("cannot write to data directory {}: {source}", path.display())]
    NotWritable {
        /// The directory.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// Another server (in this process or another) holds the lock on the directory.
    #[error(
        "data directory {} is in use by another server (it holds the lock on the directory \
         itself); stop that server first",
        dir.display()
    )]
    Locked {
        /// The data (or data log) directory.
        dir: PathBuf,
    },
    /// Logs and snapshots in the wrong directories, as ZooKeeper's `FileTxnSnapLog` refuses.
    #[error("{}: {what}; check that dataDir and dataLogDir are the right way round", dir.display())]
    Misplaced {
        /// The directory.
        dir: PathBuf,
        /// What was found there.
        what: &'static str,
    },
    /// Snapshot files exist but none reads completely with matching checksums.
    #[error("no valid snapshot in {}: {}", dir.display(), skipped_list(skipped))]
    NoValidSnapshot {
        /// The snapshot directory.
        dir: PathBuf,
        /// Each snapshot tried, and why it was rejected.
        skipped: Vec<SkippedSnapshot>,
    },
    /// No snapshot file, but the logs hold transactions: the snapshot they build on is gone, and
    /// replaying them from an empty tree would serve part of the data. ZooKeeper 3.8 refuses
    /// the same directory ("No snapshot found, but there are log entries. Something is
    /// broken!"); both take `zookeeper.snapshot.trust.empty` to replay them anyway.
    #[error(
        "No snapshot found, but there are log entries. Something is broken! {} holds no \
         snapshot, while {} log file(s) hold transactions{}: {}. Replaying them from an empty \
         tree would serve only the writes they hold; nothing was changed on disk. Restore the \
         snapshot files (a volume not mounted?), or, if these logs are the directory's whole \
         history, start once with zookeeper.snapshot.trust.empty=true (zoo.cfg \
         `snapshot.trust.empty=true`, or `--set zookeeper.snapshot.trust.empty=true`)",
        snap_dir.display(),
        logs.len(),
        first_zxid.map(|z| format!(" from zxid {z:#x}")).unwrap_or_default(),
        path_list(logs)
    )]
    LogsWithoutSnapshot {
        /// The snapshot directory, empty of snapshots.
        snap_dir: PathBuf,
        /// The log files found.
        logs: Vec<PathBuf>,
        /// The first logged transaction's zxid, when it reads.
        first_zxid: Option<i64>,
    },
    /// A log file other than the last is damaged: cutting it would drop the later files'
    /// transactions, so recovery stops and leaves the choice to the operator.
    #[error(
        "transaction log {tail} is damaged and {} later log file(s) follow it; nothing was \
         changed on disk. `shepherd datadir repair DIR --truncate-after {zxid:#x}` keeps \
         everything up to the damage and moves the rest aside, or restore from a backup",
        tail.later_files.len(),
        zxid = tail.last_zxid
    )]
    CorruptLog {
        /// Where reading stopped.
        tail: TornTail,
    },
    /// The newest log file is damaged, and not by a torn write: a whole record fails its check,
    /// or data follows the damaged one. Cutting there could drop acknowledged transactions, so
    /// recovery refuses and leaves every file as it was.
    #[error(
        "transaction log {tail} is damaged, not torn (data follows the damaged entry); nothing \
         was changed on disk. `shepherd datadir check DIR` reports the damage; `shepherd datadir \
         repair DIR --truncate-after {zxid:#x}` keeps a copy of what it cuts",
        zxid = tail.last_zxid
    )]
    DamagedLog {
        /// Where reading stopped.
        tail: TornTail,
    },
    /// An operator's repair that would not leave a directory recovery accepts, with the reason.
    #[error("{0}")]
    Refused(String),
    /// The secret file exists but is not 32 bytes.
    #[error("secret file {} holds {len} bytes, not 32", path.display())]
    BadSecret {
        /// The file.
        path: PathBuf,
        /// Its length.
        len: u64,
    },
    /// The logs skip transactions: after zxid `after` (the snapshot's, or the entry before) the
    /// next logged one in the same epoch is `found`, not the one after it. A log file is missing
    /// or a snapshot does not belong to these logs; replaying past the gap would serve a tree
    /// without the missing writes, so recovery stops and leaves every file as it was.
    #[error(
        "transaction log {} does not follow zxid {after:#x}: its next transaction is {found:#x} \
         (at offset {offset}), so the transactions between are missing; nothing was changed on \
         disk. A log file was removed, or a snapshot was copied in from another server; restore \
         the missing file, or `shepherd datadir repair DIR --truncate-after {after:#x}` to keep \
         only what precedes the gap",
        path.display()
    )]
    LogGap {
        /// The zxid the gap follows.
        after: i64,
        /// The first zxid after the gap.
        found: i64,
        /// The log file holding `found`.
        path: PathBuf,
        /// The offset just after the entry `found`.
        offset: u64,
    },
    /// The sink refused a logged transaction.
    #[error("replaying the transaction at zxid {zxid:#x}: {source}")]
    Replay {
        /// The transaction's zxid.
        zxid: i64,
        /// The sink's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

fn skipped_list(skipped: &[SkippedSnapshot]) -> String {
    skipped
        .iter()
        .map(|s| format!("{} ({})", s.path.display(), s.reason))
        .collect::<Vec<_>>()
        .join("; ")
}

fn path_list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Attaches a path to an I/O error.
pub(super) fn at(path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> StorageError {
    let path = path.into();
    move |source| StorageError::Io { path, source }
}
