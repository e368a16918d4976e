//! Watches as callers hold them: [`WatchedEvent`], the [`OneshotWatcher`] future and the
//! [`PersistentWatcher`] stream.
//!
//! Invariants: a handle only receives; what it receives is decided by the registry the
//! connection task owns (`conn::watch_registry`), which this module does not know about. A
//! dropped persistent handle reports itself through [`Unwatch`], implemented by the task's side,
//! so the dependency goes one way: from the connection task to these handles, never back.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::Stream;
use shepherd_protocol::{EventType, KeeperState};
use tokio::sync::{mpsc, oneshot};

use crate::error::Error;

/// A watch notification, with the chroot already stripped from its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchedEvent {
    /// What happened; `None` for session events on persistent watchers.
    pub event_type: EventType,
    /// `SyncConnected` for node events; the session's state for session events.
    pub state: KeeperState,
    /// The node concerned (empty for session events).
    pub path: String,
}

/// The sending side of a [`OneshotWatcher`], kept by the registry until the watch fires.
pub(crate) type OneshotTx = oneshot::Sender<Result<WatchedEvent, Error>>;

/// Resolves once, with the event that fired a one-shot watch.
///
/// Resolves with `Err` only when the session ends first: [`Error::SessionExpired`],
/// [`Error::Closed`] or [`Error::AuthFailed`]. A disconnection alone does not resolve it: the
/// watch is re-armed on the next connection, and changes made meanwhile fire it at once.
/// Dropping it leaves the server-side watch in place; its event is then discarded.
#[derive(Debug)]
#[must_use = "a watcher does nothing unless awaited"]
pub struct OneshotWatcher {
    rx: oneshot::Receiver<Result<WatchedEvent, Error>>,
}

impl OneshotWatcher {
    pub(crate) fn new() -> (OneshotWatcher, OneshotTx) {
        let (tx, rx) = oneshot::channel();
        (OneshotWatcher { rx }, tx)
    }
}

impl Future for OneshotWatcher {
    type Output = Result<WatchedEvent, Error>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.rx)
            .poll(cx)
            .map(|r| r.unwrap_or(Err(Error::Closed)))
    }
}

/// A stream of the events of a persistent (or persistent recursive) watch.
///
/// Besides node events it yields session events (`event_type` `None`, `state`
/// `Disconnected`, then `SyncConnected` once re-armed): events that happen while disconnected
/// are not replayed (docs/protocol.md §9.7), so a gap is visible. The stream ends after a terminal session state
/// (`Expired`, `Closed`, `AuthFailed`), or after a `PersistentWatchRemoved` event from
/// [`crate::Client::remove_watches`]. Dropping it removes the watch from the server.
#[derive(Debug)]
#[must_use = "a watcher does nothing unless polled"]
pub struct PersistentWatcher {
    rx: mpsc::UnboundedReceiver<WatchedEvent>,
    id: u64,
    server_path: String,
    unwatch: Box<dyn Unwatch>,
}

/// Where a dropped [`PersistentWatcher`] reports itself, so that the owner of the registry can
/// forget it (and remove the server-side watch once nothing else local watches the path).
pub(crate) trait Unwatch: fmt::Debug + Send + Sync {
    /// Called once, from `Drop`: must neither block nor fail loudly. Best effort.
    fn unwatch(&self, server_path: String, id: u64);
}

impl PersistentWatcher {
    /// A handle on the events sent to `rx` for the watch `id` on `server_path`.
    pub(crate) fn new(
        rx: mpsc::UnboundedReceiver<WatchedEvent>,
        id: u64,
        server_path: String,
        unwatch: Box<dyn Unwatch>,
    ) -> PersistentWatcher {
        PersistentWatcher {
            rx,
            id,
            server_path,
            unwatch,
        }
    }

    /// The next event, or `None` once the stream has ended.
    ///
    /// Cancellation safe: an event is never lost by dropping this future.
    pub async fn next_event(&mut self) -> Option<WatchedEvent> {
        self.rx.recv().await
    }
}

impl Stream for PersistentWatcher {
    type Item = WatchedEvent;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<WatchedEvent>> {
        self.rx.poll_recv(cx)
    }
}

impl Drop for PersistentWatcher {
    fn drop(&mut self) {
        let path = std::mem::take(&mut self.server_path);
        self.unwatch.unwatch(path, self.id);
    }
}
