//! Snapshots: the clean one at start and the walk that writes any snapshot. The live ones the
//! log asks for every `snapCount` txns, and the purge of old ones (`autopurge.*`), are started
//! by `lifecycle.rs`.
//!
//! A live snapshot is fuzzy, as ZooKeeper's are: the walk takes the core lock for one slice of
//! about [`SLICE_NODES`] nodes at a time and releases it between slices, so requests keep
//! being served while the tree is written; the log replayed after the snapshot's zxid repairs
//! whatever changed during the walk. The records stream to [`SnapshotWriter`], which keeps them
//! in a temporary file until the snapshot is complete.
//!
//! Invariants: a snapshot never holds a txn the log does not have on disk (it waits for the
//! log to reach the last zxid the walk saw before it is sealed, and is abandoned if the log
//! stops); a snapshot file exists under its final name only once complete (the writer's
//! rename); the walk never holds the core lock across I/O.

use std::io;
use std::path::PathBuf;
use std::time::Instant;

use crate::core::Core;
use crate::shell::durable::store::{Durable, io_error_at};
use crate::storage::SnapshotWriter;

/// Nodes per slice of a live snapshot: short enough that a request waits on the core lock
/// about as long as it does behind a large multi, long enough to keep the walk's overhead low.
pub(crate) const SLICE_NODES: usize = 2_000;

/// Read access to a core, under its lock or not.
pub(crate) trait CoreAccess {
    fn with<R>(&self, f: impl FnOnce(&Core) -> R) -> R;
}

/// A core nobody else holds (start-up, before serving).
impl CoreAccess for &Core {
    fn with<R>(&self, f: impl FnOnce(&Core) -> R) -> R {
        f(self)
    }
}

/// The clean snapshot ZooKeeper takes once it has loaded its data (`ZooKeeperServer.loadData`),
/// of a core not yet serving. Blocking.
///
/// # Errors
/// A [`StorageError`](crate::storage::StorageError) naming the snapshot directory.
pub(crate) fn take_now(durable: &Durable, core: &Core) -> io::Result<PathBuf> {
    write(durable, core, |_| true)
}

/// Walks the core in slices into a [`SnapshotWriter`]; `durable_up_to(zxid)` blocks until the
/// log holds `zxid` and says whether it does.
pub(crate) fn write(
    durable: &Durable,
    core: impl CoreAccess,
    durable_up_to: impl FnOnce(i64) -> bool,
) -> io::Result<PathBuf> {
    let started = Instant::now();
    let dir = durable.dir.snap_dir();
    let fail = |error| io_error_at(dir, error);
    let mut cursor = core.with(|core| core.snapshot_begin());
    let mut writer = SnapshotWriter::create(dir, cursor.zxid()).map_err(fail)?;
    let mut slice = Vec::new();
    let last_seen = loop {
        slice.clear();
        let (done, last) = core.with(|core| {
            let done = core.snapshot_slice(&mut cursor, SLICE_NODES, &mut slice);
            (done, core.last_zxid())
        });
        writer.append_nodes(&slice).map_err(fail)?;
        if done {
            break last;
        }
    };
    if !durable_up_to(last_seen) {
        // Interrupted: abandoned because the log stopped (a close, a restart, or a failure the
        // log reports itself), not a failure of the snapshot.
        return Err(io::Error::new(
            io::ErrorKind::Interrupted,
            "the transaction log stopped before the snapshot's txns were on disk",
        ));
    }
    let path = writer
        .finish(
            cursor.sessions(),
            cursor.acls(),
            cursor.digest(),
            durable.settings.force_sync,
        )
        .map_err(fail)?;
    tracing::info!(
        path = %path.display(),
        sessions = cursor.sessions().len(),
        ms = started.elapsed().as_millis() as u64,
        "snapshot written"
    );
    Ok(path)
}
