//! What the write path hands a connection's task: a frame, a close, a delay or an abort. The
//! router, the gate, the outbox, the writer and the fault rules all speak it, so it sits below
//! them all and depends on nothing of the shell.

use bytes::Bytes;
use tokio::time::Instant;

use crate::core::{Action, ConnId};

/// What a connection task is asked to write.
#[derive(Debug)]
pub(crate) enum Outbound {
    /// One frame payload, without the length prefix.
    Frame(Bytes),
    /// Flush what is queued, then close.
    Close,
    /// Write nothing queued after this before this instant (a delayed reply, `Fault::Delay`).
    Delay(Instant),
    /// Drop the connection at once, queue and all: a close that owes the peer nothing (an
    /// expired or taken-over session, an unreadable frame). Never queued (see `net::conn::outbox`).
    Abort,
}

impl Outbound {
    /// Where an action of the core goes, and what is written there.
    pub(crate) fn from_action(action: Action) -> (ConnId, Outbound) {
        match action {
            Action::Send(conn, payload) => (conn, Outbound::Frame(Bytes::from(payload))),
            Action::Close(conn) => (conn, Outbound::Close),
        }
    }
}
