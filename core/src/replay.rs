//! Replay of logged txns (ZooKeeper 3.8's `DataTree.processTxn` and `FileTxnSnapLog`'s
//! session bookkeeping on load): a txn read back from the log is applied to the tree and the
//! sessions as it was when it ran, without checks, events or replies.
//!
//! Invariants: replay is tolerant exactly where ZooKeeper is, because a snapshot taken in
//! slices (`snapshot.rs`) is fuzzy — it may already hold some effects of txns logged after its
//! zxid: a create of a node that exists, or under a parent that does not, is skipped (a plain
//! create still moves the parent's cversion and pzxid forward, as `processTxn`'s NodeExists
//! fix-up does); a delete of a missing node still moves the parent's pzxid forward; cversion
//! and pzxid only ever move forward; setData and setACL of a missing node are skipped. An entry
//! that cannot be applied at all ([`ReplayError`]) is refused before anything changes.

use shepherd_protocol::txn::{TxnBody, TxnEntry, TxnHeader};

use super::owner::{MAX_TTL, Owner};
use super::tree::Node;
use super::{Core, Now, path};

/// A logged txn that cannot be applied at all. The core is left as it was.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// The header's type does not go with the body (or the type cannot be logged there,
    /// e.g. a session txn inside a multi).
    #[error("txn 0x{zxid:x}: type {op_type} cannot carry this record")]
    TypeMismatch {
        /// The txn's zxid.
        zxid: i64,
        /// The header's (or multi op's) type.
        op_type: i32,
    },
    /// A path the tree could not hold (ZooKeeper would corrupt its tree with it).
    #[error("txn 0x{zxid:x}: invalid path {path:?}")]
    InvalidPath {
        /// The txn's zxid.
        zxid: i64,
        /// The path.
        path: String,
    },
    /// An owner ZooKeeper's `EphemeralType` refuses: a TTL out of range, or an unknown
    /// extended type (ZooKeeper throws and stops loading).
    #[error("txn 0x{zxid:x}: invalid owner or TTL {value:#x}")]
    BadOwner {
        /// The txn's zxid.
        zxid: i64,
        /// The TTL or raw owner.
        value: i64,
    },
}

/// Whether a stored cversion `a` is ahead of `b`. Java compares with `>`; the live core lets
/// the create counter wrap past `i32::MAX` (docs/protocol.md §8.1), so replay compares as
/// serial numbers, which agrees with `>` everywhere but across that wrap.
fn ahead(a: i32, b: i32) -> bool {
    a.wrapping_sub(b) > 0
}

impl Core {
    /// Applies one logged txn as ZooKeeper does when loading its log (see the module docs for
    /// the tolerance of a fuzzy snapshot), and moves the last zxid up to the entry's (never
    /// down). Sessions it creates are armed at `now`. No event fires, nothing is sent, nothing
    /// is logged again. When the core keeps a digest, it follows the changes.
    ///
    /// # Errors
    /// [`ReplayError`] for an entry that cannot be applied at all; the core is unchanged.
    pub fn replay(&mut self, entry: &TxnEntry, now: Now) -> Result<(), ReplayError> {
        let h = &entry.header;
        self.check_logged(h, h.op_type, &entry.body, false)?;
        self.apply_logged(h, h.op_type, &entry.body, now);
        self.zxid = self.zxid.max(h.zxid);
        Ok(())
    }

    /// Refuses what cannot be applied, before anything is.
    fn check_logged(
        &self,
        h: &TxnHeader,
        op_type: i32,
        body: &TxnBody,
        in_multi: bool,
    ) -> Result<(), ReplayError> {
        let zxid = h.zxid;
        let node_path = |p: &str, allow_root: bool| {
            if path::is_valid(p) && (allow_root || p != "/") {
                Ok(())
            } else {
                Err(ReplayError::InvalidPath {
                    zxid,
                    path: p.to_string(),
                })
            }
        };
        let mismatch = Err(ReplayError::TypeMismatch { zxid, op_type });
        match (op_type, body) {
            (1, TxnBody::Create(t)) | (15, TxnBody::Create(t)) if !(in_multi && op_type == 15) => {
                node_path(&t.path, false)?;
                if t.ephemeral {
                    self.owner(h.client_id, zxid)?;
                }
                Ok(())
            }
            (19, TxnBody::CreateContainer(t)) => node_path(&t.path, false),
            (21, TxnBody::CreateTTL(t)) => {
                node_path(&t.path, false)?;
                if !(1..=MAX_TTL).contains(&t.ttl) {
                    return Err(ReplayError::BadOwner { zxid, value: t.ttl });
                }
                Ok(())
            }
            (2 | 20, TxnBody::Delete(t)) => node_path(&t.path, false),
            (5, TxnBody::SetData(t)) => node_path(&t.path, true),
            (7, TxnBody::SetACL(t)) if !in_multi => node_path(&t.path, true),
            (13, TxnBody::CheckVersion(_)) | (-1, TxnBody::Error(_)) => Ok(()),
            (-10, TxnBody::CreateSession(_)) if !in_multi => Ok(()),
            (-11, TxnBody::CloseSession(paths)) if !in_multi => {
                let mut paths = paths.iter().flat_map(|t| &t.paths2_delete);
                paths.try_for_each(|p| node_path(p, false))
            }
            (14, TxnBody::Multi(ops)) if !in_multi => ops
                .iter()
                .try_for_each(|(t, b)| self.check_logged(h, *t, b, true)),
            _ => mismatch,
        }
    }

    /// The owner an ephemeral create records (`EphemeralType.get` of the session id).
    fn owner(&self, raw: i64, zxid: i64) -> Result<Owner, ReplayError> {
        Owner::from_raw(raw, self.config.extended_types_enabled)
            .map_err(|e| ReplayError::BadOwner { zxid, value: e.0 })
    }

    /// Applies a checked txn (`DataTree.processTxn`).
    fn apply_logged(&mut self, h: &TxnHeader, op_type: i32, body: &TxnBody, now: Now) {
        let (zxid, time) = (h.zxid, h.time);
        match body {
            TxnBody::Create(t) => {
                let raw = if t.ephemeral { h.client_id } else { 0 };
                let owner = self.owner(raw, zxid).unwrap_or(Owner::Persistent);
                let acl = self.tree.intern_acl(t.acl.clone());
                let node = Node::new(t.data.clone(), acl, zxid, time, owner);
                // Only a plain create fixes up the parent of a node that already exists.
                self.replay_create(&t.path, node, t.parent_c_version, op_type == 1);
            }
            TxnBody::CreateContainer(t) => {
                let acl = self.tree.intern_acl(t.acl.clone());
                let node = Node::new(t.data.clone(), acl, zxid, time, Owner::Container);
                self.replay_create(&t.path, node, t.parent_c_version, false);
            }
            TxnBody::CreateTTL(t) => {
                let raw = Owner::Ttl(t.ttl).raw();
                let owner = self.owner(raw, zxid).unwrap_or(Owner::Ttl(t.ttl));
                let acl = self.tree.intern_acl(t.acl.clone());
                let node = Node::new(t.data.clone(), acl, zxid, time, owner);
                self.replay_create(&t.path, node, t.parent_c_version, false);
            }
            TxnBody::Delete(t) => self.replay_delete(&t.path, zxid),
            TxnBody::SetData(t) => {
                self.tree
                    .replace_data(&t.path, t.data.clone(), (t.version, zxid, time));
            }
            TxnBody::SetACL(t) => {
                self.tree.set_acl(&t.path, t.acl.clone(), t.version);
            }
            TxnBody::CreateSession(t) => {
                self.sessions.insert(h.client_id, t.time_out, now.mono_ms);
            }
            TxnBody::CloseSession(paths) => {
                // `killSession`: the logged paths, then whatever else the session still owns.
                self.sessions.remove(h.client_id);
                for p in paths.iter().flat_map(|t| &t.paths2_delete) {
                    self.replay_delete(p, zxid);
                }
                let rest: Vec<String> = self.tree.ephemerals_of(h.client_id).cloned().collect();
                for p in rest {
                    self.replay_delete(&p, zxid);
                }
            }
            TxnBody::Multi(ops) => {
                // A multi with an error record failed: ZooKeeper turns every op into an
                // error, so nothing is applied.
                if ops.iter().all(|(t, _)| *t != -1) {
                    for (t, b) in ops {
                        self.apply_logged(h, *t, b, now);
                    }
                }
            }
            TxnBody::CheckVersion(_) | TxnBody::Error(_) => {}
        }
    }

    /// `DataTree.createNode` on load: skipped under a missing parent; on an existing node
    /// only the NodeExists fix-up (`fix_up`); the parent's cversion and pzxid move only
    /// forward (a parentCVersion of -1 means "one more than now").
    fn replay_create(&mut self, path: &str, node: Node, parent_c_version: i32, fix_up: bool) {
        let (parent, name) = path::split(path);
        let Some(p) = self.tree.get(parent) else {
            return;
        };
        let exists = self.tree.has_child(p, name);
        if exists && !fix_up {
            return;
        }
        let target = if parent_c_version == -1 {
            p.creates.wrapping_add(1)
        } else {
            parent_c_version
        };
        if ahead(target, p.creates) {
            let zxid = node.czxid;
            self.tree.update(parent, |p| {
                p.creates = target;
                p.pzxid = zxid;
            });
        }
        if !exists {
            self.tree.attach(path, node);
        }
    }

    /// `DataTree.deleteNode` on load: the parent's pzxid moves forward even when the node is
    /// already gone. A node that still has children (only possible with a fuzzy snapshot,
    /// where later txns recreate them) goes with its whole subtree, so the tree stays whole.
    pub(super) fn replay_delete(&mut self, path: &str, zxid: i64) {
        let (parent, _) = path::split(path);
        if self.tree.get(parent).is_none() || path == "/" {
            return;
        }
        self.tree.update(parent, |p| p.pzxid = p.pzxid.max(zxid));
        if self.tree.get(path).is_none() {
            return;
        }
        // Deepest first: each detach finds its parent still there.
        let mut doomed = vec![path.to_string()];
        let mut i = 0;
        while i < doomed.len() {
            if let Some(node) = self.tree.get(&doomed[i]) {
                let children: Vec<String> = self
                    .tree
                    .child_names(node)
                    .map(|c| path::join(&doomed[i], c))
                    .collect();
                doomed.extend(children);
            }
            i += 1;
        }
        for p in doomed.iter().rev() {
            self.tree.detach(p);
        }
    }
}
