//! [`recover`]: a data directory's state handed to a [`RecoverySink`], as ZooKeeper 3.8's
//! `FileTxnSnapLog.restore` and `FileSnap.deserialize` rebuild it (docs/storage.md, "Recovery").
//!
//! Order: the newest snapshot that reads completely with matching seals; a snapshot that fails
//! (short, damaged, compressed, or refused by the sink) is logged and skipped, and the next
//! older one is loaded into a fresh sink from `make_sink`, since a sink may have taken part of
//! the bad one. Then every logged transaction after the snapshot's zxid, in order. A torn tail
//! of the last log file (a partial record followed only by zeros) is cut, logged as a warning;
//! any other damage is an error, since cutting it could silently drop acknowledged writes: a
//! damaged file with later files after it, or a damaged record with data after it. So are logs
//! that skip transactions after the snapshot or between files (a missing file, a snapshot from
//! elsewhere): replaying past a gap would serve a tree without the writes in it.
//!
//! Logs with no snapshot at all are refused ([`StorageError::LogsWithoutSnapshot`]), as
//! ZooKeeper 3.8's `FileTxnSnapLog.restore` refuses them: both servers write a snapshot before
//! the first transaction of a directory, so logs without one mean the snapshot the logs build on
//! was lost (a missing snapshot volume, files removed by hand). Replaying them from an empty
//! tree would serve part of the data, and the next snapshot and purge would make that part
//! permanent. [`RecoverOptions::trust_empty_snapshot`] (ZooKeeper's
//! `zookeeper.snapshot.trust.empty`) replays them anyway, for the operator who knows the logs
//! are the whole history.
//!
//! Invariants: the sink sees sessions, ACLs and nodes only from one snapshot, then exactly one
//! `snapshot_done`, then transactions in strictly increasing zxid order; a directory with no
//! snapshot and no logged transaction is the sink's fresh state; snapshot files that all fail
//! are an error, never an empty tree; nothing on disk changes before recovery has decided to go
//! on, and a log is cut only where a write was torn ([`is_torn_write`]), and otherwise left
//! untouched.

use std::fmt;
use std::path::{Path, PathBuf};

use shepherd_protocol::Acl;
use shepherd_protocol::txn::TxnEntry;

use super::damage::is_torn_write;
use super::data_dir::DataDir;
use super::error::{StorageError, at};
use super::log_reader::{TornTail, read_logs, truncate_torn_tail};
use super::names::{LOG_PREFIX, is_compressed_snapshot, list};
use super::skipped_snapshot::SkippedSnapshot;
use super::snapshot_reader::{SnapshotNode, SnapshotReader, ZxidDigest};

/// Receives recovered state. Errors from the snapshot methods reject that snapshot (recovery
/// falls back to an older one); an error from [`RecoverySink::txn`] stops recovery.
pub trait RecoverySink {
    /// The sink's own error.
    type Error: std::error::Error + Send + Sync + 'static;

    /// A session from the snapshot: its id and negotiated timeout.
    fn session(&mut self, id: i64, timeout_ms: i32) -> Result<(), Self::Error>;

    /// An entry of the snapshot's ACL cache.
    fn acl(&mut self, id: i64, acl: Vec<Acl>) -> Result<(), Self::Error>;

    /// A node, parents before children; the root's path is `""`. An error names the node:
    /// recovery reports it as the reason the snapshot was skipped.
    fn node(&mut self, node: SnapshotNode) -> Result<(), Self::Error>;

    /// The snapshot is complete and its seals check out. `zxid` is the snapshot's (0 when
    /// there was none); `digest` the tree digest it recorded, if any.
    fn snapshot_done(&mut self, zxid: i64, digest: Option<ZxidDigest>) -> Result<(), Self::Error>;

    /// A logged transaction after the snapshot.
    fn txn(&mut self, entry: &TxnEntry) -> Result<(), Self::Error>;
}

/// How [`recover_with`] treats what ZooKeeper would refuse.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecoverOptions {
    /// ZooKeeper's `zookeeper.snapshot.trust.empty`: with no snapshot file, replay the logs from
    /// an empty tree instead of refusing them. Only right when the logs are known to hold the
    /// directory's whole history.
    pub trust_empty_snapshot: bool,
}

/// What [`recover`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// The snapshot loaded: its zxid and file.
    pub snapshot: Option<(i64, PathBuf)>,
    /// Newer snapshots that were skipped, newest first.
    pub skipped: Vec<SkippedSnapshot>,
    /// Transactions replayed after the snapshot.
    pub txns_replayed: u64,
    /// The torn tail that was cut off the last log file.
    pub tail_cut: Option<TornTail>,
    /// The zxid of the recovered state (the last transaction replayed, or the snapshot's).
    pub last_zxid: i64,
}

impl fmt::Display for RecoveryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.snapshot {
            Some((zxid, path)) => write!(f, "snapshot {} (zxid {zxid:#x})", path.display())?,
            None => write!(f, "no snapshot")?,
        }
        write!(
            f,
            ", {} transaction(s) replayed, last zxid {:#x}",
            self.txns_replayed, self.last_zxid
        )?;
        if !self.skipped.is_empty() {
            write!(f, ", {} snapshot(s) skipped", self.skipped.len())?;
        }
        if let Some(tail) = &self.tail_cut {
            write!(f, ", torn tail cut: {tail}")?;
        }
        Ok(())
    }
}

/// Recovers `dir` into a sink with the default (ZooKeeper's) options; see [`recover_with`].
///
/// # Errors
/// As [`recover_with`].
pub fn recover<S: RecoverySink>(
    dir: &DataDir,
    make_sink: impl FnMut() -> S,
) -> Result<(S, RecoveryReport), StorageError> {
    recover_with(dir, RecoverOptions::default(), make_sink)
}

/// Recovers `dir` into a sink; see the module docs.
///
/// Blocking (file I/O); run it before serving or off the async runtime.
///
/// # Errors
/// [`StorageError::NoValidSnapshot`] when snapshot files exist and none is usable;
/// [`StorageError::LogsWithoutSnapshot`] when there is no snapshot file but the logs hold
/// transactions (unless `options.trust_empty_snapshot`);
/// [`StorageError::CorruptLog`] for a damaged log file with later files after it;
/// [`StorageError::DamagedLog`] for a damaged last log file that is not a torn write;
/// [`StorageError::LogGap`] when the logs skip transactions after the snapshot or a file;
/// [`StorageError::Replay`] when the sink refuses a transaction; [`StorageError::Io`] for
/// directories or files that cannot be read, or a tail that cannot be cut.
pub fn recover_with<S: RecoverySink>(
    dir: &DataDir,
    options: RecoverOptions,
    mut make_sink: impl FnMut() -> S,
) -> Result<(S, RecoveryReport), StorageError> {
    let mut report = RecoveryReport::default();
    let snapshots = dir.snapshots().map_err(at(dir.snap_dir()))?;
    let mut loaded = None;
    for (zxid, path) in snapshots.iter().rev() {
        let mut sink = make_sink();
        let result = load_snapshot(&mut sink, path, *zxid).map(|()| sink);
        match result {
            Ok(sink) => {
                loaded = Some((sink, *zxid, path.clone()));
                break;
            }
            Err(reason) => {
                tracing::warn!(path = %path.display(), %reason, "skipping snapshot");
                report.skipped.push(SkippedSnapshot {
                    path: path.clone(),
                    reason,
                });
            }
        }
    }
    let (mut sink, snap_zxid) = match loaded {
        Some((sink, zxid, path)) => {
            report.snapshot = Some((zxid, path));
            (sink, zxid)
        }
        None if !snapshots.is_empty() => {
            return Err(StorageError::NoValidSnapshot {
                dir: dir.snap_dir().to_path_buf(),
                skipped: report.skipped,
            });
        }
        None => {
            if !options.trust_empty_snapshot {
                refuse_logs_without_snapshot(dir.snap_dir(), dir.log_dir())?;
            }
            let mut sink = make_sink();
            sink.snapshot_done(0, None)
                .map_err(|e| StorageError::Replay {
                    zxid: 0,
                    source: Box::new(e),
                })?;
            (sink, 0)
        }
    };
    report.last_zxid = snap_zxid;
    // Only logs trusted without a snapshot may start anywhere; after a snapshot (zxid 0
    // included: ZooKeeper's first snapshot) the first entry must follow it.
    let mut from_scratch = report.snapshot.is_none();
    let mut reader = read_logs(dir.log_dir(), snap_zxid).map_err(at(dir.log_dir()))?;
    for entry in reader.by_ref() {
        let entry = entry.map_err(at(dir.log_dir()))?;
        let zxid = entry.header.zxid;
        if !std::mem::take(&mut from_scratch) && skips(report.last_zxid, zxid) {
            let (path, offset) = reader.entry_end().map_or_else(
                || (dir.log_dir().to_path_buf(), 0),
                |(path, offset)| (path.to_path_buf(), offset),
            );
            return Err(StorageError::LogGap {
                after: report.last_zxid,
                found: zxid,
                path,
                offset,
            });
        }
        sink.txn(&entry).map_err(|e| StorageError::Replay {
            zxid,
            source: Box::new(e),
        })?;
        report.txns_replayed += 1;
        report.last_zxid = zxid;
    }
    if let Some(tail) = reader.torn_tail() {
        judge_tail(tail)?;
        tracing::warn!(%tail, "cutting the torn tail of the transaction log");
        truncate_torn_tail(tail).map_err(at(&tail.path))?;
        report.tail_cut = Some(tail.clone());
    }
    Ok((sink, report))
}

/// Refuses a directory without snapshots whose logs hold a transaction (ZooKeeper's
/// `txnLog.getLastLoggedZxid() != -1`). A log whose first entry cannot be read counts as
/// holding one: only files with no entry at all (fresh, preallocated) are nothing to lose.
/// `inspect` reports the same refusal.
pub(crate) fn refuse_logs_without_snapshot(
    snap_dir: &Path,
    log_dir: &Path,
) -> Result<(), StorageError> {
    let logs = list(log_dir, LOG_PREFIX).map_err(at(log_dir))?;
    if logs.is_empty() {
        return Ok(());
    }
    let first = read_logs(log_dir, 0)
        .map_err(at(log_dir))?
        .next()
        .map(|entry| entry.map(|e| e.header.zxid));
    let Some(first) = first else {
        return Ok(());
    };
    Err(StorageError::LogsWithoutSnapshot {
        snap_dir: snap_dir.to_path_buf(),
        logs: logs.into_iter().map(|(_, path)| path).collect(),
        first_zxid: first.ok(),
    })
}

/// Whether `next` leaves out transactions after `last`: in one epoch (the high 32 bits) every
/// transaction takes the next counter, so a larger step means missing entries. A new epoch
/// starts its counter again, so that is not a gap.
fn skips(last: i64, next: i64) -> bool {
    last >> 32 == next >> 32 && next != last + 1
}

/// Whether recovery may cut the logs where they stopped: only a torn write in the last file.
/// Anything else is the error recovery refuses with, which `inspect` reports as it is.
///
/// # Errors
/// [`StorageError::CorruptLog`] with later files after the damage; [`StorageError::DamagedLog`]
/// for damage that is not a torn write; [`StorageError::Io`] when the file cannot be read.
pub(crate) fn judge_tail(tail: &TornTail) -> Result<(), StorageError> {
    if !tail.later_files.is_empty() {
        return Err(StorageError::CorruptLog { tail: tail.clone() });
    }
    if !is_torn_write(tail).map_err(at(&tail.path))? {
        return Err(StorageError::DamagedLog { tail: tail.clone() });
    }
    Ok(())
}

/// Feeds one snapshot to a sink; the error is the reason to skip it.
pub(crate) fn load_snapshot<S: RecoverySink>(
    sink: &mut S,
    path: &std::path::Path,
    zxid: i64,
) -> Result<(), String> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if is_compressed_snapshot(name) {
        return Err("compressed snapshots are not supported".to_owned());
    }
    // A snapshot cut short by a crash is refused by `open` from its last bytes alone.
    let mut reader = SnapshotReader::open(path).map_err(|e| e.to_string())?;
    for &(id, timeout) in reader.sessions() {
        sink.session(id, timeout)
            .map_err(|e| format!("session {id:#x} refused: {e}"))?;
    }
    for (id, acl) in reader.acls() {
        sink.acl(*id, acl.clone())
            .map_err(|e| format!("ACL {id} refused: {e}"))?;
    }
    // The sink's error names the node (see `RecoverySink::node`): no copy of every path is
    // kept for a message that is almost never written.
    while let Some(node) = reader.next_node().map_err(|e| e.to_string())? {
        sink.node(node).map_err(|e| format!("refused: {e}"))?;
    }
    sink.snapshot_done(zxid, reader.digest())
        .map_err(|e| format!("refused: {e}"))
}
