//! Recovery: the core rebuilt from a data directory, at start and at a restart.
//!
//! [`storage::recover`](crate::storage::recover) reads the newest valid snapshot and the log
//! after it; [`CoreSink`] feeds what it reads to the core's [`Restore`] and then to
//! [`Core::replay`], as ZooKeeper 3.8's `FileTxnSnapLog.restore` feeds its `DataTree`. The
//! sessions come back armed from the moment of recovery (each gets a full timeout for its
//! client to return), the zxid continues from the last one on disk, and ephemerals of sessions
//! that no longer exist are removed, as ZooKeeper's `loadData` does.
//!
//! One line says what was recovered and how long it took; a cut torn tail and every skipped
//! snapshot get a warning of their own.
//!
//! A digest mismatch (a snapshot's or a txn's recorded tree digest against the rebuilt tree's)
//! stops recovery: the tree being built is not the one the writer had, and serving it would
//! then snapshot it, and purge the files that could still have rebuilt the right one.
//! ZooKeeper 3.8 only logs it (`DataTree.compareDigest`); its digests and ours agree on every
//! directory either writes (`.ci/zk-tools-check.sh` fails on any mismatch), so a mismatch is
//! damage or a foreign file, never a difference of the two servers. A snapshot's digest recorded
//! at the snapshot's own zxid is checked when it is loaded: a mismatch rejects that snapshot, and
//! recovery falls back to an older one as for any other unusable snapshot. A live snapshot's
//! digest is recorded at a later zxid and checked once replay reaches it: a mismatch there stops
//! recovery like a transaction's.

use std::io;
use std::sync::atomic::Ordering;
use std::time::Instant;

use shepherd_protocol::Acl;
use shepherd_protocol::txn::TxnEntry;

use crate::core::{Core, CoreConfig, Now, ReplayError, Restore, RestoreError};
use crate::shell::durable::snapshot::take_now;
use crate::shell::durable::store::{Durable, io_error, io_error_at};
use crate::storage::{self, RecoverySink, SnapshotNode, ZxidDigest};

/// Why recovered records do not make a core.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SinkError {
    /// The snapshot's records do not make a tree.
    #[error(transparent)]
    Restore(#[from] RestoreError),
    /// A logged txn cannot be applied.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// Records came in an order recovery never produces.
    #[error("recovery records out of order: {0}")]
    Order(&'static str),
    /// The tree rebuilt so far is not the tree the writer recorded a digest of.
    #[error(
        "the tree digest recorded at zxid {zxid:#x} is {recorded:#x}, the rebuilt tree's is \
         {rebuilt:#x}: the files do not rebuild the tree that was written (damage, or a file \
         from another directory); nothing was changed on disk. `shepherd datadir check DIR` \
         reads the directory; restore it from a backup"
    )]
    Digest {
        /// The zxid the digest was recorded at.
        zxid: i64,
        /// The recorded digest.
        recorded: i64,
        /// The rebuilt tree's.
        rebuilt: i64,
    },
}

/// The core being rebuilt: a [`Restore`] until the snapshot is done, then the core.
struct CoreSink {
    now: Now,
    config: CoreConfig,
    restore: Option<Restore>,
    core: Option<Core>,
    /// Whether the snapshot had any node (a directory with no snapshot has none).
    nodes: u64,
    /// A digest recorded for a zxid not yet reached: checked once replay gets there.
    pending_digest: Option<ZxidDigest>,
}

impl CoreSink {
    fn new(config: CoreConfig, now: Now) -> CoreSink {
        CoreSink {
            now,
            restore: Some(Restore::new(config.clone(), now)),
            config,
            core: None,
            nodes: 0,
            pending_digest: None,
        }
    }

    fn restore(&mut self) -> Result<&mut Restore, SinkError> {
        self.restore
            .as_mut()
            .ok_or(SinkError::Order("a snapshot record after the snapshot"))
    }

    /// Compares the pending recorded digest with the tree's, once the core is at its zxid.
    fn check_digest(&mut self) -> Result<(), SinkError> {
        let (Some(core), Some(recorded)) = (&self.core, self.pending_digest) else {
            return Ok(());
        };
        if core.last_zxid() < recorded.zxid {
            return Ok(());
        }
        self.pending_digest = None;
        match core.tree_digest() {
            Some(rebuilt) if core.last_zxid() == recorded.zxid && rebuilt != recorded.digest => {
                Err(SinkError::Digest {
                    zxid: recorded.zxid,
                    recorded: recorded.digest,
                    rebuilt,
                })
            }
            _ => Ok(()),
        }
    }
}

impl RecoverySink for CoreSink {
    type Error = SinkError;

    fn session(&mut self, id: i64, timeout_ms: i32) -> Result<(), SinkError> {
        self.restore()?.session(id, timeout_ms);
        Ok(())
    }

    fn acl(&mut self, id: i64, acl: Vec<Acl>) -> Result<(), SinkError> {
        self.restore()?.acl(id, acl);
        Ok(())
    }

    fn node(&mut self, node: SnapshotNode) -> Result<(), SinkError> {
        self.nodes += 1;
        let SnapshotNode {
            path,
            data,
            acl,
            stat,
        } = node;
        Ok(self.restore()?.node(&path, data, acl, stat)?)
    }

    fn snapshot_done(&mut self, zxid: i64, digest: Option<ZxidDigest>) -> Result<(), SinkError> {
        let restore = self
            .restore
            .take()
            .ok_or(SinkError::Order("a second end of snapshot"))?;
        self.core = Some(if self.nodes == 0 {
            // No snapshot: a fresh tree, which the log (if any) then builds on from zxid 0.
            let config = CoreConfig {
                initial_zxid: zxid,
                ..self.config.clone()
            };
            Core::new(config, self.now)
        } else {
            restore.finish(zxid)?
        });
        self.pending_digest = digest;
        self.check_digest()
    }

    fn txn(&mut self, entry: &TxnEntry) -> Result<(), SinkError> {
        let core = self
            .core
            .as_mut()
            .ok_or(SinkError::Order("a txn before the snapshot's end"))?;
        core.replay(entry, self.now)?;
        self.check_digest()?;
        // A live snapshot is fuzzy: until replay reaches the zxid its digest was recorded at,
        // the tree holds changes from later txns too, and a txn's recorded digest (the tree
        // after that txn, when it was first applied) is not expected to match. ZooKeeper
        // skips the comparison there too (`DataTree.compareDigest`, "still in fuzzy state").
        if self.pending_digest.is_some() {
            return Ok(());
        }
        let core = self.core.as_ref().ok_or(SinkError::Order("no core"))?;
        match (&entry.digest, core.tree_digest()) {
            (Some(recorded), Some(rebuilt)) if recorded.tree_digest != rebuilt => {
                Err(SinkError::Digest {
                    zxid: entry.header.zxid,
                    recorded: recorded.tree_digest,
                    rebuilt,
                })
            }
            _ => Ok(()),
        }
    }
}

/// Recovers the core from `durable`'s directory, at `now`. An empty directory gives a fresh
/// core at the configured initial zxid.
/// Blocking.
///
/// # Errors
/// A [`StorageError`](crate::storage::StorageError) inside the `io::Error`, naming the file.
pub(crate) fn recover(durable: &Durable, now: Now) -> io::Result<Core> {
    let started = Instant::now();
    let config = durable.core_config.clone();
    let options = storage::RecoverOptions {
        trust_empty_snapshot: durable.settings.trust_empty_snapshot,
    };
    if options.trust_empty_snapshot {
        tracing::warn!(
            "zookeeper.snapshot.trust.empty is set: logs without a snapshot are replayed from \
             an empty tree. This should only be allowed when the logs hold the whole history"
        );
    }
    let (sink, report) =
        storage::recover_with(&durable.dir, options, || CoreSink::new(config.clone(), now))
            .map_err(io_error)?;
    let Some(mut core) = sink.core else {
        return Err(io::Error::other("recovery ended without a core"));
    };
    for skipped in &report.skipped {
        tracing::warn!(
            path = %skipped.path.display(),
            reason = %skipped.reason,
            "skipped a snapshot that does not read completely; recovered from an older one"
        );
    }
    if let Some(tail) = &report.tail_cut {
        tracing::warn!(
            %tail,
            "cut a torn tail off the transaction log (a write the process did not finish, \
             never acknowledged)"
        );
    }
    let fresh = report.snapshot.is_none() && report.txns_replayed == 0;
    if fresh {
        // The builder has settled it: the one configured, or the clock's epoch.
        core.set_last_zxid(config.initial_zxid);
        tracing::info!(
            dir = %durable.dir.root().display(),
            "data directory is empty: starting a fresh tree"
        );
    } else {
        let dead = core.kill_dead_sessions();
        tracing::info!(
            dir = %durable.dir.root().display(),
            %report,
            sessions = core.sessions().len(),
            dead_session_nodes = dead,
            ms = started.elapsed().as_millis() as u64,
            "recovered"
        );
    }
    Ok(core)
}

/// Recovers the core from the data directory, or starts a fresh one (at the configured initial
/// zxid) if it holds nothing. Blocking.
///
/// ZooKeeper takes a clean snapshot after loading, before it serves (`ZooKeeperServer.loadData`).
/// Here that snapshot is taken before serving only when the directory has none yet (a fresh or
/// logs-only directory: the snapshot is small, and without one ZooKeeper could not open the
/// directory). Otherwise the directory already holds a snapshot and the logs after it, which
/// recover to the same state again, so the clean snapshot is taken live, in the background, once
/// the log runs (`lifecycle::start`): a million-node tree serves seconds earlier.
///
/// # Errors
/// A [`StorageError`](crate::storage::StorageError) inside the `io::Error`, naming the path that
/// could not be read or written.
pub(crate) fn recover_and_snapshot(durable: &Durable, now: Now) -> io::Result<Core> {
    let had_snapshot = !durable
        .dir
        .snapshots()
        .map_err(|e| io_error_at(durable.dir.root(), e))?
        .is_empty();
    let recovered = recover(durable, now)?;
    if had_snapshot {
        durable.snapshot_after_start.store(true, Ordering::Release);
    } else {
        take_now(durable, &recovered)?;
    }
    Ok(recovered)
}
