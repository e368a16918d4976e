//! A server with a data directory: what it holds besides the in-memory server's state, and
//! its lifecycle (open and recover at start, reload at a restart, close at shutdown).
//!
//! The pieces: the log thread ([`Journal`], `journal.rs`) with the gate in the router
//! (`gate.rs`), the snapshot thread (`snapshot.rs`) and recovery (`recovery.rs`). This file
//! wires them: it tells the router what the log made durable, starts a snapshot when the log
//! asks for one, and on a failure of the log closes every connection and keeps the reason.
//!
//! Invariants: at most one snapshot thread at a time (ZooKeeper skips a snapshot while one is
//! in progress); the log thread runs only between a successful recovery and the next close;
//! a failure is final until a restart recovers from disk again.

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;

use parking_lot::Mutex;
use tokio::sync::watch;

use super::journal::{Journal, JournalEvents};
use super::router::Shared;
use super::{recovery, snapshot};
use crate::config::Durability;
use crate::core::{Core, CoreConfig, Now};
use crate::storage::{DataDir, StorageError};

/// A storage error as the `io::Error` that [`ServerBuilder::start`](crate::ServerBuilder::start)
/// and [`ServerHandle::restart`](crate::ServerHandle::restart) return: the [`StorageError`]
/// (which names the path) inside, with the kind of its cause.
pub(crate) fn io_error(error: StorageError) -> io::Error {
    let kind = match &error {
        StorageError::Io { source, .. } | StorageError::NotWritable { source, .. } => source.kind(),
        StorageError::Locked { .. } => io::ErrorKind::ResourceBusy,
        _ => io::ErrorKind::InvalidData,
    };
    io::Error::new(kind, error)
}

/// An I/O error on `path` as [`io_error`] makes it.
pub(crate) fn io_error_at(path: &Path, source: io::Error) -> io::Error {
    io_error(StorageError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// The durable side of one server.
pub(crate) struct Durable {
    pub(super) settings: Durability,
    /// The open (and locked) data directory, for the life of the server: a restart recovers
    /// from it without letting go of the lock.
    pub(super) dir: DataDir,
    /// The core's settings (with the directory's session secret), for every recovery.
    pub(super) core_config: CoreConfig,
    pub(super) journal: Arc<Journal>,
    /// A snapshot thread runs (ZooKeeper's `snapThreadMutex`).
    snapshotting: AtomicBool,
    /// Recovery left the clean snapshot for [`start`] to take live (see [`recover`]).
    snapshot_after_start: AtomicBool,
    snapshot_thread: Mutex<Option<JoinHandle<()>>>,
    /// Why the log stopped, once it failed.
    failure: watch::Sender<Option<String>>,
}

impl Durable {
    /// Opens (creating as needed) and locks the data directory `settings` names, and reads
    /// (or makes) its session secret, for a core that runs with `core_config`. Blocking.
    ///
    /// # Errors
    /// A [`StorageError`] inside the `io::Error`, naming the path: a directory that cannot be
    /// created or written, one another server holds, a bad secret file.
    pub(crate) fn open(settings: Durability, mut core_config: CoreConfig) -> io::Result<Durable> {
        let data_dir = settings.data_dir.clone().unwrap_or_default();
        let dir = DataDir::open(&data_dir, settings.data_log_dir.as_deref()).map_err(io_error)?;
        core_config.session_secret = dir.secret().map_err(io_error)?;
        core_config.log_txns = true;
        Ok(Durable {
            settings,
            dir,
            core_config,
            journal: Arc::new(Journal::default()),
            snapshotting: AtomicBool::new(false),
            snapshot_after_start: AtomicBool::new(false),
            snapshot_thread: Mutex::new(None),
            failure: watch::Sender::new(None),
        })
    }

    /// Why the log stopped, if it failed.
    pub(crate) fn failure(&self) -> Option<String> {
        self.failure.borrow().clone()
    }

    /// Resolves when the log fails, with the reason. Cancellation safe.
    pub(crate) async fn failed(&self) -> String {
        let mut rx = self.failure.subscribe();
        match rx.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone().unwrap_or_default(),
            // The sender lives as long as `self`.
            Err(_) => std::future::pending().await,
        }
    }
}

/// Recovers the core from the data directory, or starts a fresh one (at the configured
/// initial zxid) if it holds nothing. Blocking.
///
/// ZooKeeper takes a clean snapshot after loading, before it serves (`ZooKeeperServer.loadData`).
/// Here that snapshot is taken before serving only when the directory has none yet (a fresh
/// or logs-only directory: the snapshot is small, and without one ZooKeeper could not open the
/// directory). Otherwise the directory already holds a snapshot and the logs after it, which
/// recover to the same state again, so the clean snapshot is taken live, in the background,
/// once the log runs ([`start`]): a million-node tree serves seconds earlier.
///
/// # Errors
/// A [`StorageError`] inside the `io::Error`, naming the path that could not be read or
/// written.
pub(crate) fn recover(durable: &Durable, now: Now) -> io::Result<Core> {
    let had_snapshot = !durable
        .dir
        .snapshots()
        .map_err(|e| io_error_at(durable.dir.root(), e))?
        .is_empty();
    let recovered = recovery::recover(durable, now)?;
    if had_snapshot {
        durable.snapshot_after_start.store(true, Ordering::Release);
    } else {
        snapshot::take_now(durable, &recovered)?;
    }
    Ok(recovered)
}

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
/// As [`recover`]; the server then keeps its old core, with the log closed.
pub(crate) fn reload(shared: &Arc<Shared>) -> io::Result<()> {
    let Some(durable) = &shared.durable else {
        return Ok(());
    };
    close(shared);
    let core = recover(durable, shared.clock.now())?;
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
                if let Err(error) = snapshot::take_live(&worker, durable) {
                    tracing::warn!(%error, "snapshot failed; the log keeps everything meanwhile");
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
        let Some(shared) = self.0.upgrade() else {
            return;
        };
        if let Some(gate) = shared.router().gate() {
            gate.fail();
        }
        // Every connection and the listener: nothing more is acknowledged, nobody new comes.
        shared.generation.lock().cancel();
        if let Some(durable) = &shared.durable {
            durable.failure.send_replace(Some(error.to_string()));
        }
    }
}
