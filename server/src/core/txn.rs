//! The record of one transaction in progress: its zxid and time, the session it runs for, the
//! undo steps of every mutation so far, and the events its changes fire.
//!
//! Invariants: a [`Txn`] is created with the zxid it was just handed (one per write, docs/protocol.md §3.3);
//! its `undo` list holds, in order, every mutation the tree made for it, so rolling it back
//! restores the tree exactly; its `fired` list is only delivered once the txn is committed
//! (for a multi, after the last op), in the order the changes were made (docs/protocol.md §9.2).

use shepherd_protocol::Acl;

use super::SessionId;
use super::tree::Undo;

/// What a committed change fires (docs/protocol.md §9.2).
#[derive(Debug)]
pub(crate) enum Fired {
    /// NodeCreated(path), then NodeChildrenChanged(parent).
    Created {
        path: String,
        acl: Vec<Acl>,
        parent_acl: Vec<Acl>,
    },
    /// NodeDeleted(path) to data then child watchers, then NodeChildrenChanged(parent).
    Deleted {
        path: String,
        acl: Vec<Acl>,
        parent_acl: Vec<Acl>,
    },
    /// NodeDataChanged(path).
    DataChanged { path: String, acl: Vec<Acl> },
}

/// One transaction in progress: its zxid and time, and what it did.
#[derive(Debug)]
pub(crate) struct Txn {
    pub zxid: i64,
    /// Wall-clock ms, for ctime and mtime.
    pub time: i64,
    pub session: SessionId,
    pub undo: Vec<Undo>,
    pub fired: Vec<Fired>,
}

impl Txn {
    pub fn new(zxid: i64, time: i64, session: SessionId) -> Txn {
        Txn {
            zxid,
            time,
            session,
            undo: Vec::new(),
            fired: Vec::new(),
        }
    }
}
