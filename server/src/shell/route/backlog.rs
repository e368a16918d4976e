//! The work a durable server holds for its disk: log entries handed to the log thread and not
//! yet written, and replies, events and reads held by the gate until their writes are on disk.
//! While an fsync is pending both grow with every request read, so past a bound the connections
//! stop reading until the disk catches up: memory stays bounded under a slow disk, and nothing
//! acknowledged or accepted is ever dropped for it (ZooKeeper stops reading at 1 000 requests in
//! flight, `globalOutstandingLimit`).
//!
//! Invariant: counters only move with the work they count (added when it is queued or held,
//! taken back when it is written, released or dropped), so they return to zero whenever the
//! log is idle; every fall below the bound wakes the waiting readers.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Messages held at once before reading stops: ZooKeeper's `globalOutstandingLimit`.
pub(crate) const MAX_HELD_MESSAGES: usize = 1000;

/// Bytes held at once (log entries and held messages) before reading stops: with 1 MiB
/// requests, a few dozen in flight, far below what a server holds without the bound.
pub(crate) const MAX_HELD_BYTES: usize = 32 << 20;

/// The counters and the readers' wake-up. See the module documentation.
#[derive(Debug, Default)]
pub(crate) struct Backlog {
    bytes: AtomicUsize,
    messages: AtomicUsize,
    room: Notify,
}

impl Backlog {
    /// Counts work held: `bytes` of it, `messages` of them replies, events or reads.
    pub(crate) fn add(&self, bytes: usize, messages: usize) {
        self.bytes.fetch_add(bytes, Relaxed);
        self.messages.fetch_add(messages, Relaxed);
    }

    /// Takes back work written, released or dropped, and wakes the readers once below the
    /// bound.
    pub(crate) fn sub(&self, bytes: usize, messages: usize) {
        let before_bytes = self.bytes.fetch_sub(bytes, Relaxed);
        let before_messages = self.messages.fetch_sub(messages, Relaxed);
        debug_assert!(before_bytes >= bytes && before_messages >= messages);
        if !self.full() {
            self.room.notify_waiters();
        }
    }

    /// Whether reading must stop.
    pub(crate) fn full(&self) -> bool {
        self.bytes.load(Relaxed) >= MAX_HELD_BYTES
            || self.messages.load(Relaxed) >= MAX_HELD_MESSAGES
    }

    /// Messages held for the disk: `outstanding_requests` in `mntr` and `/metrics`.
    pub(crate) fn messages(&self) -> usize {
        self.messages.load(Relaxed)
    }

    /// Bytes held for the disk.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes.load(Relaxed)
    }

    /// Waits until the backlog is below its bound. False when `cancel` comes first.
    pub(crate) async fn room(&self, cancel: &CancellationToken) -> bool {
        loop {
            let notified = self.room.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if !self.full() {
                return true;
            }
            tokio::select! {
                () = cancel.cancelled() => return false,
                () = notified => {}
            }
        }
    }
}
