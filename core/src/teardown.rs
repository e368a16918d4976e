//! How connections and sessions end: a connection is forgotten (docs/protocol.md §13.3), a session is closed by
//! its client or expires (docs/protocol.md §13.2, §13.4).
//!
//! Invariants: watches and auth identities belong to the connection and go with it, while the
//! session outlives it; ending a session is one closeSession txn taking one zxid, whose
//! ephemeral deletions fire their events like any delete; on expiry the connection's watches
//! are dropped before those events are delivered, so nothing is queued to a socket about to
//! close, and its `Close` comes after them.

use shepherd_protocol::OpCode;
use shepherd_protocol::txn::{CloseSessionTxn, TxnBody};

use super::txn::Txn;
use super::{Action, ConnId, Core, Now, SessionId};

impl Core {
    /// Forgets a connection: its watches and identities go; its session stays (docs/protocol.md §13.3).
    pub(super) fn drop_conn(&mut self, conn: ConnId) {
        self.data_watches.remove_conn(conn);
        self.child_watches.remove_conn(conn);
        if let Some(c) = self.conns.remove(&conn)
            && let Some(session) = c.session.and_then(|s| self.sessions.get_mut(s))
            && session.conn == Some(conn)
        {
            session.conn = None;
        }
    }

    /// Ends a session (docs/protocol.md §13.2, §13.4): one closeSession txn, then its ephemerals deleted with
    /// their events. On expiry the live connection is closed without a reply or notification,
    /// and its watches are dropped first so that nothing is queued to a socket about to close.
    /// `cxid` is the closeSession request's xid, 0 on expiry (ZooKeeper's own request). The
    /// txn is logged with the deleted paths (3.8's default `closeSessionTxn.enabled`) and the
    /// digest after them. Returns the txn's zxid, or `None` if the session is unknown.
    pub(super) fn end_session(
        &mut self,
        id: SessionId,
        now: Now,
        cxid: i32,
        expiring: bool,
        out: &mut Vec<Action>,
    ) -> Option<i64> {
        let session = self.sessions.remove(id)?;
        if expiring && let Some(conn) = session.conn {
            self.drop_conn(conn);
        }
        self.zxid += 1;
        let mut txn = Txn::new(self.zxid, now.wall_ms, id, cxid, false);
        let paths: Vec<String> = self.tree.ephemerals_of(id).cloned().collect();
        for path in &paths {
            self.remove_node(path, &mut txn);
        }
        let body = || {
            TxnBody::CloseSession(Some(CloseSessionTxn {
                paths2_delete: paths,
            }))
        };
        self.log_txn(&txn, OpCode::CloseSession.into(), body, Some(0));
        self.deliver(txn.fired, out);
        // After the deliveries: the ending session's connection no longer receives any.
        self.metrics.forget_session(id);
        if expiring && let Some(conn) = session.conn {
            out.push(Action::Close(conn));
        }
        Some(self.zxid)
    }
}
