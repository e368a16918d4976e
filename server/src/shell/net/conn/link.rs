//! What one connection's task holds and shares between its reader and its writer: the
//! connection ([`Conn`]), the state both halves read ([`Link`]), how a half ended ([`End`]),
//! and the wait while a test holds the connection.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use shepherd_protocol::FourLetterWord;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use crate::core::{ConnId, SessionId};
use crate::shell::route::outbox::Queue;
use crate::shell::state::shared::Shared;
use crate::shell::state::stats::ConnStats;

/// What the connection's task holds, read by its reader and writer alike.
pub(crate) struct Conn {
    pub(crate) shared: Arc<Shared>,
    pub(crate) id: ConnId,
    pub(crate) stats: Arc<ConnStats>,
    /// What the router queued for the connection, and its byte meter.
    pub(crate) queue: Arc<Queue>,
    /// Cancelled on shutdown, by the close_connection control, at the outbound limit, and by a
    /// close that owes the peer nothing.
    pub(crate) kill: CancellationToken,
    /// The server's shutdown, of which `kill` is a child: its member's token, cancelled when
    /// the member stops.
    pub(crate) shutdown: CancellationToken,
    /// The ensemble member it came in on: partitioning that member holds it (`controls/freeze.rs`).
    pub(crate) member: u64,
}

impl Conn {
    /// Whether the connection is held: its member partitioned or its session frozen.
    pub(crate) fn held(&self, link: &Link) -> bool {
        self.shared.frozen.holds(self.member, link.session())
    }
}

/// What the reader and the writer share within one task.
pub(crate) struct Link {
    /// How long a write may make no progress, in ms: the handshake limit, then the session's
    /// timeout, fixed for the life of the connection.
    pub(crate) stall_ms: AtomicU64,
    /// The connection's session once the handshake is answered; 0 before.
    pub(crate) session: AtomicI64,
    /// Notified whenever the writer has taken frames off the queue.
    pub(crate) drained: Notify,
}

impl Link {
    pub(crate) fn stall(&self) -> Duration {
        Duration::from_millis(self.stall_ms.load(Relaxed))
    }

    pub(crate) fn session(&self) -> Option<SessionId> {
        Some(self.session.load(Relaxed)).filter(|s| *s != 0)
    }
}

/// How a connection's reading or writing ended.
#[derive(Debug)]
pub(crate) enum End {
    /// Nothing read for the connection's idle limit.
    Idle,
    /// A queued `Close` was reached and written: the core's, or the one the reader queued
    /// behind the replies it owed at the peer's end of stream or its bad input.
    Closed,
    /// A four-letter word, to answer before closing.
    FourLetterWord(FourLetterWord),
    /// The kill token: shutdown, a control, the outbound limit, or an expiry.
    Killed,
    /// A write made no progress for the connection's stall limit.
    Stalled,
}

/// Waits until the connection is no longer held (its session thawed, its member healed).
/// False when `cancel` (the kill token, or shutdown) comes first.
///
/// Boxed: a connection is held only under a test's partition, and the wait's futures would
/// otherwise be part of every connection's task, at each of the places it waits.
pub(crate) fn wait_thawed<'a>(
    conn: &'a Conn,
    session: Option<SessionId>,
    freeze: &'a mut watch::Receiver<u64>,
    cancel: &'a CancellationToken,
) -> Pin<Box<dyn Future<Output = bool> + Send + 'a>> {
    Box::pin(wait_unheld(conn, session, freeze, cancel))
}

async fn wait_unheld(
    conn: &Conn,
    session: Option<SessionId>,
    freeze: &mut watch::Receiver<u64>,
    cancel: &CancellationToken,
) -> bool {
    loop {
        freeze.borrow_and_update();
        if !conn.shared.frozen.holds(conn.member, session) {
            return true;
        }
        tokio::select! {
            _ = cancel.cancelled() => return false,
            changed = freeze.changed() => if changed.is_err() { return false },
        }
    }
}
