//! What the write path hands a connection's task: a frame, a close, a delay or an abort, and
//! the one conversion of the core's actions into them ([`from_actions`]). The router, the
//! gate, the outbox, the writer and the fault rules all speak it, so it sits below them all and
//! depends on nothing of the shell.

use std::collections::HashSet;

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
    /// expired or taken-over session, an unreadable frame). Never queued (see `outbox.rs`).
    Abort,
}

/// Where an action of the core goes, and what is written there.
fn from_action(action: Action) -> (ConnId, Outbound) {
    match action {
        Action::Send(conn, payload) => (conn, Outbound::Frame(Bytes::from(payload))),
        Action::Close(conn) => (conn, Outbound::Close),
    }
}

/// The core's actions as messages for the connections they are for, in order. A `Close` with
/// no frame before it for the same connection in this batch owes the peer nothing and becomes
/// [`Outbound::Abort`]; one after such a frame stays a `Close`, written after the frame.
pub(crate) fn from_actions(actions: Vec<Action>) -> impl Iterator<Item = (ConnId, Outbound)> {
    // Most batches are frames alone: they need no set (nor its allocation).
    let mut owed: Option<HashSet<ConnId>> = actions
        .iter()
        .any(|action| matches!(action, Action::Close(_)))
        .then(HashSet::new);
    actions
        .into_iter()
        .map(move |action| match (from_action(action), owed.as_mut()) {
            ((conn, Outbound::Close), Some(owed)) if !owed.contains(&conn) => {
                (conn, Outbound::Abort)
            }
            ((conn, message), owed) => {
                if let (Outbound::Frame(_), Some(owed)) = (&message, owed) {
                    owed.insert(conn);
                }
                (conn, message)
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_close_that_owes_nothing_aborts_and_one_after_a_reply_waits_for_it() {
        let routed: Vec<_> = from_actions(vec![
            Action::Close(1),
            Action::Send(2, vec![1]),
            Action::Close(2),
            Action::Send(3, vec![1]),
        ])
        .collect();
        assert!(matches!(routed[0], (1, Outbound::Abort)));
        assert!(matches!(routed[2], (2, Outbound::Close)));
        // Frames alone pass as they are.
        let frames: Vec<_> = from_actions(vec![Action::Send(4, vec![1])]).collect();
        assert!(matches!(frames[..], [(4, Outbound::Frame(_))]));
    }
}
