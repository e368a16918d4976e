//! The durability gate: with a data directory, nothing a client can observe leaves the server
//! before the writes it may reflect are on disk.
//!
//! Every message the core produces is tagged, under the core lock, with the last zxid handed to
//! the transaction log at that moment: a reply, an event or a read of another session may
//! reveal any write up to it. Messages wait here in one FIFO until the log thread reports that
//! zxid durable; a message whose tag is already durable, with nothing held before it, goes out
//! at once (the common case of reads between group commits).
//!
//! Invariants:
//! * one FIFO for every connection, released in order: each connection receives its messages in
//!   the core's single total order (docs/protocol.md §9.6), whether they waited or not. The log
//!   thread takes what a commit made durable off the FIFO under this gate's lock and delivers
//!   it after releasing the lock, so that the core calls sealing meanwhile never wait for its
//!   deliveries; while it does, nothing is delivered directly (a sealed message joins the FIFO,
//!   behind the ones being delivered, and the log thread delivers it next);
//! * tags never decrease along the FIFO, since they are taken under the core lock from a zxid
//!   that only grows; so releasing stops at the first message not yet durable;
//! * once failed (the log could not be written), nothing more is released, ever: a client must
//!   not see a write the disk does not have. The held messages are dropped.
//!
//! What is held counts in the server's [`Backlog`], whose bound stops the readers while the disk
//! lags. The windows on the core that are not messages of the core (four-letter words, the
//! AdminServer, `/metrics`) wait on [`Gate::until_durable`] for what they read to be on disk.
//!
//! Lock order: the core lock, then this gate's, then the connection table's.

use std::collections::VecDeque;

use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::core::ConnId;
use crate::shell::route::backlog::Backlog;
use crate::shell::route::outbound::Outbound;

/// Messages for connections, in the order they must be delivered.
pub(crate) type Routed = Vec<(ConnId, Outbound)>;

/// Messages handed to the deliverer, in order, taken straight from where the gate kept them.
pub(crate) type Release<'a> = &'a mut dyn Iterator<Item = (ConnId, Outbound)>;

/// What the gate holds and knows.
#[derive(Default)]
struct GateState {
    /// Routed during the current core call, waiting for its tag.
    staged: Routed,
    /// Tagged and waiting for their zxid to be durable, in delivery order.
    held: VecDeque<(i64, ConnId, Outbound)>,
    /// The last zxid handed to the log.
    handed: i64,
    /// The last zxid the log reported durable.
    durable: i64,
    /// The log failed: release nothing more.
    failed: bool,
    /// The log thread is delivering messages it took off `held`: nothing goes out directly.
    releasing: bool,
    /// The bytes of the frames in `held`, as counted in the backlog.
    held_bytes: usize,
}

/// The gate of one server with a data directory. See the module documentation.
#[derive(Default)]
pub(crate) struct Gate {
    state: Mutex<GateState>,
    /// Where what is held is counted, so that readers stop while too much is.
    backlog: Arc<Backlog>,
    /// Notified (all waiters) when the durable zxid moves or the log fails: wakes
    /// [`Gate::until_durable`].
    moved: Notify,
}

/// The bytes a held message keeps.
fn held_size(out: &Outbound) -> usize {
    match out {
        Outbound::Frame(bytes) => bytes.len(),
        _ => 0,
    }
}

impl Gate {
    /// A gate whose held messages count in `backlog`.
    pub(crate) fn new(backlog: Arc<Backlog>) -> Gate {
        Gate {
            state: Mutex::default(),
            backlog,
            moved: Notify::new(),
        }
    }

    /// Starts (or starts again, after recovery) with everything up to `zxid` durable and
    /// nothing held.
    pub(crate) fn reset(&self, zxid: i64) {
        let mut state = self.state.lock();
        self.backlog.sub(state.held_bytes, state.held.len());
        *state = GateState {
            handed: zxid,
            durable: zxid,
            ..GateState::default()
        };
        drop(state);
        self.moved.notify_waiters();
    }

    /// Keeps messages routed during a core call until [`Gate::seal`] tags them: `fill` adds
    /// them, under this gate's lock (the router charges each to its connection as it adds it,
    /// under the connection table's lock, which comes after this one). Called under the core
    /// lock.
    pub(crate) fn stage(&self, fill: impl FnOnce(&mut Routed)) {
        fill(&mut self.state.lock().staged);
    }

    /// Ends a core call: `handed` is the last zxid handed to the log so far (or `None` if the
    /// call logged nothing). The staged messages are tagged with it and delivered through
    /// `deliver` if already durable with nothing held before them, else held. Called under the
    /// core lock, after the call's log entries went to the log thread. The staging vector is
    /// drained, never replaced, so it keeps its capacity from call to call: every write would
    /// otherwise grow a new one.
    pub(crate) fn seal(&self, handed: Option<i64>, deliver: impl FnOnce(Release<'_>)) {
        let mut guard = self.state.lock();
        let state = &mut *guard;
        if let Some(zxid) = handed {
            state.handed = state.handed.max(zxid);
        }
        if state.staged.is_empty() {
            return;
        }
        let tag = state.handed;
        if state.failed {
            state.staged.clear();
        } else if state.held.is_empty() && tag <= state.durable && !state.releasing {
            // Delivered under the gate's lock, with nothing held or being released before it:
            // nothing can overtake it.
            deliver(&mut state.staged.drain(..));
        } else {
            let (messages, bytes) = (
                state.staged.len(),
                state.staged.iter().map(|(_, o)| held_size(o)).sum(),
            );
            self.backlog.add(bytes, messages);
            state.held_bytes += bytes;
            state
                .held
                .extend(state.staged.drain(..).map(|(conn, out)| (tag, conn, out)));
        }
    }

    /// The log has everything up to `zxid` on disk: delivers, in order, every held message
    /// tagged at or below it, and those that join the FIFO while it delivers. Called by the log
    /// thread (one caller at a time); `deliver` runs without the gate's lock.
    pub(crate) fn durable(&self, zxid: i64, mut deliver: impl FnMut(Release<'_>)) {
        let mut state = self.state.lock();
        debug_assert!(
            !state.releasing,
            "the gate released from two threads at once"
        );
        state.durable = state.durable.max(zxid);
        self.moved.notify_waiters();
        loop {
            let ready = state
                .held
                .iter()
                .position(|(tag, _, _)| *tag > state.durable)
                .unwrap_or(state.held.len());
            if state.failed || ready == 0 {
                state.releasing = false;
                return;
            }
            let batch: Vec<_> = state.held.drain(..ready).collect();
            let bytes = batch.iter().map(|(_, _, out)| held_size(out)).sum();
            state.held_bytes -= bytes;
            state.releasing = true;
            drop(state);
            // Counted out before delivery: from here on the bytes are the connections' queues',
            // which their own caps bound.
            self.backlog.sub(bytes, batch.len());
            deliver(&mut batch.into_iter().map(|(_, conn, out)| (conn, out)));
            state = self.state.lock();
        }
    }

    /// The log failed: drops what is held and releases nothing from now on.
    pub(crate) fn fail(&self) {
        let mut state = self.state.lock();
        state.failed = true;
        self.backlog
            .sub(std::mem::take(&mut state.held_bytes), state.held.len());
        state.held.clear();
        state.staged.clear();
        drop(state);
        self.moved.notify_waiters();
    }

    /// The last zxid handed to the log: a window on the core (a four-letter word, the
    /// AdminServer, `/metrics`) computed before this was read shows nothing past it.
    pub(crate) fn handed(&self) -> i64 {
        self.state.lock().handed
    }

    /// Resolves once everything up to `zxid` is on disk (true), or once the log has failed
    /// (false: what depends on it must never be shown). Cancellation safe.
    pub(crate) async fn until_durable(&self, zxid: i64) -> bool {
        loop {
            let moved = self.moved.notified();
            tokio::pin!(moved);
            moved.as_mut().enable();
            {
                let state = self.state.lock();
                if state.failed {
                    return false;
                }
                if state.durable >= zxid {
                    return true;
                }
            }
            moved.await;
        }
    }

    /// Where what is held is counted.
    pub(crate) fn backlog(&self) -> &Backlog {
        &self.backlog
    }

    /// Messages waiting for the disk.
    pub(crate) fn held(&self) -> usize {
        self.state.lock().held.len()
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    fn frame(conn: ConnId, byte: u8) -> (ConnId, Outbound) {
        (conn, Outbound::Frame(Bytes::from(vec![byte])))
    }

    fn bytes(routed: Release<'_>) -> Vec<(ConnId, u8)> {
        routed
            .map(|(conn, out)| match out {
                Outbound::Frame(b) => (conn, b[0]),
                _ => (conn, 0),
            })
            .collect()
    }

    #[test]
    fn held_until_durable_in_order_and_direct_when_nothing_waits() {
        let gate = Gate::default();
        gate.reset(10);
        let mut out = Vec::new();
        // A read with nothing pending goes at once.
        gate.stage(|s| s.extend([frame(1, 1)]));
        gate.seal(None, |r| out.extend(bytes(r)));
        assert_eq!(out, [(1, 1)]);
        // A write's reply waits for zxid 11; a later read of another connection waits behind.
        gate.stage(|s| s.extend(vec![frame(1, 2), frame(2, 3)]));
        gate.seal(Some(11), |r| out.extend(bytes(r)));
        gate.stage(|s| s.extend(vec![frame(2, 4)]));
        gate.seal(None, |r| out.extend(bytes(r)));
        gate.stage(|s| s.extend(vec![frame(1, 5)]));
        gate.seal(Some(12), |r| out.extend(bytes(r)));
        assert_eq!(out.len(), 1);
        assert_eq!(gate.held(), 4);
        gate.durable(11, |r| out.extend(bytes(r)));
        assert_eq!(out, [(1, 1), (1, 2), (2, 3), (2, 4)]);
        gate.durable(12, |r| out.extend(bytes(r)));
        assert_eq!(out.last(), Some(&(1, 5)));
        assert_eq!(gate.held(), 0);
    }

    #[test]
    fn a_message_sealed_while_the_log_thread_delivers_goes_out_behind_that_delivery() {
        let gate = Gate::default();
        gate.reset(0);
        gate.stage(|s| s.extend([frame(1, 1)]));
        gate.seal(Some(1), |_| panic!("not durable yet"));
        let out = std::cell::RefCell::new(Vec::new());
        let mut first = true;
        gate.durable(1, |r| {
            out.borrow_mut().extend(bytes(r));
            if std::mem::take(&mut first) {
                // A core call seals a read while the log thread delivers: its tag is durable
                // and nothing is held, yet it must not overtake what is being delivered.
                gate.stage(|s| s.extend([frame(1, 2)]));
                gate.seal(None, |r| out.borrow_mut().extend(bytes(r)));
                out.borrow_mut().push((9, 9));
            }
        });
        assert_eq!(out.into_inner(), [(1, 1), (9, 9), (1, 2)]);
        assert_eq!(gate.held(), 0);
        // Once the log thread is done, reads go out directly again.
        let mut direct = Vec::new();
        gate.stage(|s| s.extend([frame(2, 3)]));
        gate.seal(None, |r| direct.extend(bytes(r)));
        assert_eq!(direct, [(2, 3)]);
    }

    #[test]
    fn a_failed_gate_releases_nothing_more() {
        let gate = Gate::default();
        gate.reset(0);
        let mut out = Vec::new();
        gate.stage(|s| s.extend([frame(1, 1)]));
        gate.seal(Some(1), |r| out.extend(bytes(r)));
        gate.fail();
        gate.durable(1, |r| out.extend(bytes(r)));
        gate.stage(|s| s.extend(vec![frame(1, 2)]));
        gate.seal(None, |r| out.extend(bytes(r)));
        assert!(out.is_empty());
        assert_eq!(gate.held(), 0);
    }
}
