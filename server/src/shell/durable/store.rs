//! What a server with a data directory holds besides the in-memory server's state: the
//! directory, the log thread ([`Journal`]), the snapshot thread's slot and the log's failure.
//! `lifecycle.rs` starts, reloads and closes it; nothing here touches the shared state, so the
//! state can own a `Durable` without a circle.
//!
//! Invariant: a failure, once recorded, stays until a restart recovers from disk again.

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::thread::JoinHandle;

use parking_lot::Mutex;
use tokio::sync::watch;

use crate::config::Durability;
use crate::core::{Core, CoreConfig};
use crate::shell::durable::journal::Journal;
use crate::shell::route::backlog::Backlog;
use crate::storage::{DataDir, StorageError};

/// A storage error as the `io::Error` that [`ServerBuilder::start`](crate::ServerBuilder::start)
/// and [`Server::restart`](crate::Server::restart) return: the [`StorageError`]
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
    pub(crate) settings: Durability,
    /// The open (and locked) data directory, for the life of the server: a restart recovers
    /// from it without letting go of the lock.
    pub(crate) dir: DataDir,
    /// The core's settings (with the directory's session secret), for every recovery.
    pub(crate) core_config: CoreConfig,
    pub(crate) journal: Arc<Journal>,
    /// What the log and the gate hold for the disk; readers stop while it is full.
    pub(crate) backlog: Arc<Backlog>,
    /// A snapshot thread runs (ZooKeeper's `snapThreadMutex`).
    pub(super) snapshotting: AtomicBool,
    /// Recovery left the clean snapshot for `lifecycle::start` to take live (see
    /// `recover_and_snapshot`).
    pub(super) snapshot_after_start: AtomicBool,
    pub(super) snapshot_thread: Mutex<Option<JoinHandle<()>>>,
    /// Why the log stopped, once it failed.
    pub(super) failure: watch::Sender<Option<String>>,
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
        let backlog = Arc::<Backlog>::default();
        Ok(Durable {
            settings,
            dir,
            core_config,
            journal: Arc::new(Journal::new(backlog.clone())),
            backlog,
            snapshotting: AtomicBool::new(false),
            snapshot_after_start: AtomicBool::new(false),
            snapshot_thread: Mutex::new(None),
            failure: watch::Sender::new(None),
        })
    }

    /// What the log and the gate hold for the disk: the gate of the server's write path counts
    /// in it too.
    pub(crate) fn backlog(&self) -> Arc<Backlog> {
        self.backlog.clone()
    }

    /// Hands the log entries a core call made to the log thread, in zxid order: the last zxid
    /// handed so far, if this call handed any. Called under the core lock, so that the write
    /// path's gate tags what the call routed with it; never blocks on I/O. The log thread is
    /// woken by [`Durable::wake_log`], once the lock is released.
    pub(crate) fn hand_over(&self, core: &mut Core) -> Option<i64> {
        self.journal.submit(|queue| core.take_log(queue))
    }

    /// Wakes the log thread for what [`Durable::hand_over`] handed it.
    pub(crate) fn wake_log(&self) {
        self.journal.kick();
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
