//! The life of a server with a data directory: the log thread started after recovery, told
//! back what is on disk, a snapshot started when the log asks for one, a reload at a restart,
//! the close at shutdown, and the autopurge of old files.
//!
//! Invariants: at most one snapshot thread at a time (ZooKeeper skips a snapshot while one is
//! in progress); the log thread runs only between a successful recovery and the next close; on a
//! failure of the log or of a snapshot (an error or a panic) the server crash-stops: every
//! connection is closed, nothing more is acknowledged, and the first reason is kept.

use std::io;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use tokio_util::sync::CancellationToken;

use crate::core::Core;
use crate::shell::durable::journal::{JournalEvents, panic_text};
use crate::shell::durable::recovery::recover_and_snapshot;
use crate::shell::durable::snapshot::{CoreAccess, write};
use crate::shell::durable::store::Durable;
use crate::shell::state::shared::Shared;

/// Starts the log thread of a server whose core was just recovered up to `durable_zxid`.
///
/// # Errors
/// The OS refused a thread.
pub(crate) fn start(shared: &Arc<Shared>, durable_zxid: i64) -> io::Result<()> {
    let Some(durable) = &shared.durable else {
        return Ok(());
    };
    let log = durable.dir.txn_log(durable.settings.prealloc_bytes);
    durable.failure.send_replace(None);
    durable.journal.start(
        log,
        durable_zxid,
        &durable.settings,
        Arc::new(Events(Arc::downgrade(shared))),
    )?;
    if durable.snapshot_after_start.swap(false, Ordering::AcqRel) {
        snapshot_due(shared);
    }
    Ok(())
}

/// Stops the log (everything queued written and fsynced) and waits for a snapshot in
/// progress. Blocking. Returns the log's failure, if it had one.
pub(crate) fn close(shared: &Shared) -> Option<String> {
    let durable = shared.durable.as_ref()?;
    let failure = durable.journal.stop();
    let snapshot = durable.snapshot_thread.lock().take();
    if let Some(thread) = snapshot
        && thread.join().is_err()
    {
        tracing::error!("the snapshot thread panicked");
    }
    failure
}

/// A restart with a data directory: closes the log, recovers the core from disk as at start,
/// swaps it in, and starts the log again. Blocking.
///
/// # Errors
/// As [`recover_and_snapshot`]; the server then keeps its old core, with the log closed.
pub(crate) fn reload(shared: &Arc<Shared>) -> io::Result<()> {
    let Some(durable) = &shared.durable else {
        return Ok(());
    };
    close(shared);
    let core = recover_and_snapshot(durable, shared.clock.now())?;
    let zxid = core.last_zxid();
    shared.replace_core(core, zxid);
    start(shared, zxid)
}

/// Starts a snapshot on its own thread unless one is in progress.
fn snapshot_due(shared: &Arc<Shared>) {
    let Some(durable) = &shared.durable else {
        return;
    };
    if durable.snapshotting.swap(true, Ordering::AcqRel) {
        tracing::warn!("too busy to snapshot, skipping");
        return;
    }
    let mut slot = durable.snapshot_thread.lock();
    // The previous thread has finished (the flag was clear); reap it.
    if let Some(done) = slot.take() {
        let _ = done.join();
    }
    let worker = shared.clone();
    let spawned = std::thread::Builder::new()
        .name("shepherd-snapshot".into())
        .spawn(move || {
            if let Some(durable) = &worker.durable {
                let taken = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    take_live(&worker, durable)
                }))
                .unwrap_or_else(|panic| {
                    Err(io::Error::other(format!(
                        "the snapshot thread panicked: {}",
                        panic_text(&*panic)
                    )))
                });
                match taken {
                    Ok(_) => {}
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => {
                        tracing::info!(%error, "snapshot abandoned");
                    }
                    // ZooKeeper exits when it cannot take a snapshot
                    // (ExitCode.TXNLOG_ERROR_TAKING_SNAPSHOT); so does this server.
                    Err(error) => fail(&worker, &format!("cannot take a snapshot: {error}")),
                }
                durable.snapshotting.store(false, Ordering::Release);
            }
        });
    match spawned {
        Ok(thread) => *slot = Some(thread),
        Err(error) => {
            tracing::warn!(%error, "cannot start a snapshot thread");
            durable.snapshotting.store(false, Ordering::Release);
        }
    }
}

/// What the log thread tells the server, through a weak reference: the thread must not keep a
/// dropped server alive.
struct Events(Weak<Shared>);

impl JournalEvents for Events {
    fn durable(&self, zxid: i64) {
        if let Some(shared) = self.0.upgrade() {
            shared.router().release(zxid);
        }
    }

    fn snapshot_due(&self) {
        if let Some(shared) = self.0.upgrade() {
            snapshot_due(&shared);
        }
    }

    fn failed(&self, error: &io::Error) {
        if let Some(shared) = self.0.upgrade() {
            fail(&shared, &error.to_string());
        }
    }
}

/// The crash-stop of a durable server whose disk failed it (the log, or a snapshot): nothing more
/// is acknowledged, every connection and the listener close, and the reason is kept for
/// `Server::failure` (`shepherd serve` exits with it). Said once, loudly.
fn fail(shared: &Shared, reason: &str) {
    tracing::error!(
        %reason,
        "the data directory failed; nothing more is acknowledged and every connection is closed"
    );
    if let Some(gate) = shared.router().gate() {
        gate.fail();
    }
    shared.generation.lock().cancel();
    if let Some(durable) = &shared.durable {
        durable.failure.send_if_modified(|failure| {
            let first = failure.is_none();
            if first {
                *failure = Some(reason.to_owned());
            }
            first
        });
    }
}

/// A live server's core, one lock turn per call.
impl CoreAccess for &Shared {
    fn with<R>(&self, f: impl FnOnce(&Core) -> R) -> R {
        self.query(f)
    }
}

/// A snapshot of a serving core, in slices. Blocking: run on the snapshot thread.
///
/// # Errors
/// A [`StorageError`](crate::storage::StorageError) naming the snapshot directory; or the
/// log stopped before it had everything the snapshot holds.
pub(crate) fn take_live(shared: &Shared, durable: &Durable) -> io::Result<PathBuf> {
    write(durable, shared, |zxid| durable.journal.wait_durable(zxid))
}

/// `autopurge`: every `purgeInterval` (the first time at start, as ZooKeeper's
/// `DatadirCleanupManager` does), removes all but the newest `snapRetainCount` snapshots and
/// the logs only they need. Does nothing with an interval of zero. Runs until `shutdown`.
pub(crate) async fn purge_loop(shared: Arc<Shared>, shutdown: CancellationToken) {
    let Some(interval) = shared.durable.as_ref().map(|d| d.settings.purge_interval) else {
        return;
    };
    if interval.is_zero() {
        return;
    }
    let mut every = tokio::time::interval(interval);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = every.tick() => {}
        }
        let worker = shared.clone();
        let purged = tokio::task::spawn_blocking(move || {
            let durable = worker.durable.as_ref()?;
            let retain = durable.settings.snap_retain_count as usize;
            Some(durable.dir.purge(retain))
        })
        .await;
        match purged {
            Ok(Some(Ok(deleted))) => {
                if !deleted.is_empty() {
                    tracing::info!(
                        files = deleted.len(),
                        "autopurge removed old snapshots and logs"
                    );
                }
            }
            Ok(Some(Err(error))) => {
                tracing::warn!(%error, "autopurge failed; trying again next time");
            }
            Ok(None) => return,
            Err(error) => tracing::warn!(%error, "autopurge did not finish"),
        }
    }
}
