//! The record of one transaction in progress: its zxid and time, the session and xid it runs
//! for, the undo steps of every mutation so far, the events its changes fire, and (when the
//! core logs) the log records of its ops.
//!
//! Invariants: a [`Txn`] is created with the zxid it was just handed (one per write, docs/protocol.md §3.3);
//! its `undo` list holds, in order, every mutation the tree made for it, so rolling it back
//! restores the tree exactly; its `fired` list is only delivered once the txn is committed
//! (for a multi, after the last op), in the order the changes were made (docs/protocol.md §9.2);
//! its `records` hold one `(type, body)` per op that succeeded, in order, exactly as ZooKeeper
//! 3.8's `PrepRequestProcessor` builds them.

use shepherd_protocol::txn::TxnBody;

use super::SessionId;
use super::acl_table::AclRef;
use super::tree::Undo;

/// What a committed change fires (docs/protocol.md §9.2), with the ACLs its events are
/// filtered by: the nodes' own shared lists, not copies.
#[derive(Debug)]
pub(crate) enum Fired {
    /// NodeCreated(path), then NodeChildrenChanged(parent).
    Created {
        path: String,
        acl: AclRef,
        parent_acl: AclRef,
    },
    /// NodeDeleted(path) to data then child watchers, then NodeChildrenChanged(parent).
    Deleted {
        path: String,
        acl: AclRef,
        parent_acl: AclRef,
    },
    /// NodeDataChanged(path).
    DataChanged { path: String, acl: AclRef },
}

/// One transaction in progress: its zxid and time, and what it did.
#[derive(Debug)]
pub(crate) struct Txn {
    pub zxid: i64,
    /// Wall-clock ms, for ctime and mtime.
    pub time: i64,
    pub session: SessionId,
    /// The request's xid (0 for the server's own txns), the log header's `cxid`.
    pub cxid: i32,
    pub undo: Vec<Undo>,
    pub fired: Vec<Fired>,
    /// The log records of the ops applied so far; `None` when the core does not log.
    pub records: Option<Vec<(i32, TxnBody)>>,
    /// What ZooKeeper's prepared digest differs from the tree's by (see `Core::create`).
    pub digest_skew: i64,
}

impl Txn {
    pub fn new(zxid: i64, time: i64, session: SessionId, cxid: i32, logging: bool) -> Txn {
        Txn {
            zxid,
            time,
            session,
            cxid,
            undo: Vec::new(),
            fired: Vec::new(),
            records: logging.then(Vec::new),
            digest_skew: 0,
        }
    }

    /// Adds an op's log record, built only when the core logs.
    pub fn record(&mut self, op_type: i32, body: impl FnOnce() -> TxnBody) {
        if let Some(records) = &mut self.records {
            records.push((op_type, body()));
        }
    }
}
