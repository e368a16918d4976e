//! Building a core from a snapshot's records ([`Restore`]), and the dead-session clean-up
//! ZooKeeper runs once its log is replayed.
//!
//! Invariants: nodes arrive parents first (ZooKeeper's `DataTree.deserialize` refuses a
//! child whose parent it has not seen), the root first of all under the path `""`; a node's
//! owner is decoded from its `ephemeralOwner` as ZooKeeper's `EphemeralType` does, which
//! rebuilds the ephemeral, container and TTL indexes; the stored cversion is the create
//! counter; ACL id -1 is `OPEN_ACL_UNSAFE` and every other id must have been given by
//! [`Restore::acl`]. Restored sessions are armed from the `now` given, with no connection.

use std::collections::HashMap;

use shepherd_protocol::Acl;
use shepherd_protocol::txn::StatPersisted;

use super::owner::Owner;
use super::session::Sessions;
use super::snapshot::OPEN_ACL_UNSAFE_ID;
use super::tree::{AclRef, Node, Refused, Tree};
use super::{Core, CoreConfig, Now, SessionId, path};

/// Why a snapshot's records do not make a tree.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RestoreError {
    /// A node came before its parent (or before the root).
    #[error("snapshot node {path:?} comes before its parent")]
    Orphan {
        /// The node.
        path: String,
    },
    /// A node came twice.
    #[error("snapshot node {path:?} appears twice")]
    Duplicate {
        /// The node.
        path: String,
    },
    /// A path ZooKeeper could not have stored.
    #[error("snapshot node {path:?} has an invalid path")]
    InvalidPath {
        /// The path.
        path: String,
    },
    /// A node's ACL id is not in the snapshot's ACL map.
    #[error("snapshot node {path:?} uses ACL id {id}, which the snapshot does not define")]
    UnknownAcl {
        /// The node.
        path: String,
        /// The ACL id.
        id: i64,
    },
    /// A node's `ephemeralOwner` is an extended type ZooKeeper refuses.
    #[error("snapshot node {path:?} has an invalid owner {owner:#x}")]
    BadOwner {
        /// The node.
        path: String,
        /// The raw owner.
        owner: i64,
    },
    /// The snapshot had no root node.
    #[error("snapshot has no root node")]
    NoRoot,
}

/// A core being rebuilt from a snapshot: sessions, the ACL map and nodes, in the snapshot's
/// order, then [`Restore::finish`].
#[derive(Debug)]
pub struct Restore {
    config: CoreConfig,
    now: Now,
    tree: Tree,
    sessions: Sessions,
    /// The snapshot's ACL map, each list interned once: a node then costs a lookup.
    acls: HashMap<i64, AclRef>,
}

impl Restore {
    /// An empty restore for a core with this configuration; `now` is when the restored
    /// sessions' timeouts start counting and what seeds new session ids.
    pub fn new(config: CoreConfig, now: Now) -> Restore {
        let sessions = Core::new_sessions(&config, now);
        let mut tree = Tree::empty();
        if config.log_txns {
            // Kept from the first node on: each is hashed as it is attached, with its path
            // in hand, instead of in a second walk that rebuilds every path.
            tree.start_digest();
        }
        Restore {
            config,
            now,
            tree,
            sessions,
            acls: HashMap::new(),
        }
    }

    /// A session of the snapshot's session table.
    pub fn session(&mut self, id: SessionId, timeout_ms: i32) {
        self.sessions.insert(id, timeout_ms, self.now.mono_ms);
    }

    /// An entry of the snapshot's ACL map.
    pub fn acl(&mut self, id: i64, acl: Vec<Acl>) {
        let acl = self.tree.intern_acl(acl);
        self.acls.insert(id, acl);
    }

    /// A node record, in the snapshot's order: the root (path `""`) first, then every node
    /// after its parent.
    ///
    /// # Errors
    /// [`RestoreError`] for a record that cannot join the tree; the restore is then unusable.
    pub fn node(
        &mut self,
        path: &str,
        data: Option<Vec<u8>>,
        acl_id: i64,
        stat: StatPersisted,
    ) -> Result<(), RestoreError> {
        let key = if path.is_empty() { "/" } else { path };
        let fail = |make: fn(String) -> RestoreError| Err(make(path.to_string()));
        // The parent must be in the tree (checked as the node is attached below), so it is
        // valid; what this record adds is its last name.
        let valid = key == "/" || path::is_valid_below_valid_parent(key);
        if !valid {
            return fail(|path| RestoreError::InvalidPath { path });
        }
        if key == "/" && self.tree.get(key).is_some() {
            return fail(|path| RestoreError::Duplicate { path });
        }
        let acl = if acl_id == OPEN_ACL_UNSAFE_ID {
            self.tree.open_acl()
        } else {
            self.acls
                .get(&acl_id)
                .cloned()
                .ok_or_else(|| RestoreError::UnknownAcl {
                    path: path.to_string(),
                    id: acl_id,
                })?
        };
        let owner = Owner::from_raw(stat.ephemeral_owner, self.config.extended_types_enabled)
            .map_err(|_| RestoreError::BadOwner {
                path: path.to_string(),
                owner: stat.ephemeral_owner,
            })?;
        let mut node = Node::new(data, acl, stat.czxid, stat.ctime, owner);
        node.mzxid = stat.mzxid;
        node.mtime = stat.mtime;
        node.pzxid = stat.pzxid;
        node.version = stat.version;
        node.aversion = stat.aversion;
        node.creates = stat.cversion;
        if key == "/" {
            self.tree.insert_root(node);
            return Ok(());
        }
        match self.tree.attach_restored(key, node) {
            Ok(()) => Ok(()),
            Err(Refused::Orphan) => fail(|path| RestoreError::Orphan { path }),
            Err(Refused::Duplicate) => fail(|path| RestoreError::Duplicate { path }),
        }
    }

    /// The core, at the snapshot's `zxid`; replay the log entries after it next. The system
    /// nodes a snapshot lacks are added as a fresh server has them.
    ///
    /// # Errors
    /// [`RestoreError::NoRoot`] when no root node came.
    pub fn finish(self, zxid: i64) -> Result<Core, RestoreError> {
        let mut tree = self.tree;
        if tree.get("/").is_none() {
            return Err(RestoreError::NoRoot);
        }
        tree.finish_restore();
        tree.add_missing_system_nodes();
        Ok(Core::assemble(
            self.config,
            self.now,
            tree,
            self.sessions,
            zxid,
        ))
    }
}

impl Core {
    /// ZooKeeper's clean-up once its log is replayed (`ZooKeeperServer.loadData`): the
    /// ephemerals of sessions that no longer exist are deleted, with the last zxid as their
    /// parents' pzxid, and nothing is logged (ZooKeeper takes a snapshot right after; a shell
    /// should too). Returns how many nodes went.
    pub fn kill_dead_sessions(&mut self) -> usize {
        let dead: Vec<String> = self
            .tree
            .ephemeral_owners()
            .filter(|id| self.sessions.get(*id).is_none())
            .flat_map(|id| self.tree.ephemerals_of(id).cloned().collect::<Vec<_>>())
            .collect();
        for p in &dead {
            self.replay_delete(p, self.zxid);
        }
        dead.len()
    }
}
