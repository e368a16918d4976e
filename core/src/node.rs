//! One znode as the tree stores it: its Stat fields, owner, data (inline when short), a
//! shared reference to its interned ACL list, its name, its parent's arena index and its
//! children's indexes (`tree.rs` explains the layout).
//!
//! Invariants: `name` and `parent` are where the node hangs once a tree has attached it (the
//! root: empty name, [`NO_PARENT`]); `digest` is what the tree digest last counted for it;
//! `children` is `None` rather than empty, so a leaf spends eight bytes on it.

use shepherd_protocol::{Acl, Stat};

use super::acl_table::AclRef;
use super::children::Children;
use super::owner::Owner;
use super::short::{Name, Value};

/// The parent index of the root, which has none.
pub(crate) const NO_PARENT: u32 = u32::MAX;

/// One znode. Its name and parent are set when it is attached to a tree.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub czxid: i64,
    pub mzxid: i64,
    pub pzxid: i64,
    pub ctime: i64,
    pub mtime: i64,
    pub version: i32,
    pub aversion: i32,
    /// C: children ever created here; the sequence counter (docs/protocol.md §8.1).
    pub creates: i32,
    pub owner: Owner,
    pub(super) data: Value,
    pub(super) acl: AclRef,
    pub(super) name: Name,
    pub(super) parent: u32,
    /// This node's digest (a CRC32) as last added to the tree digest (0 while digests are off).
    pub(super) digest: u32,
    /// `None` for a leaf, which most nodes are.
    pub(super) children: Option<Box<Children>>,
}

impl Node {
    pub(super) fn new(
        data: Option<Vec<u8>>,
        acl: AclRef,
        zxid: i64,
        time: i64,
        owner: Owner,
    ) -> Node {
        Node {
            czxid: zxid,
            mzxid: zxid,
            pzxid: zxid,
            ctime: time,
            mtime: time,
            version: 0,
            aversion: 0,
            creates: 0,
            owner,
            data: Value::new(data),
            acl,
            name: Name::new(""),
            parent: NO_PARENT,
            digest: 0,
            children: None,
        }
    }

    /// The data, `None` for Java's `null`.
    pub fn data(&self) -> Option<&[u8]> {
        self.data.get()
    }

    /// A copy of the data, as requests and replies carry it.
    pub fn data_vec(&self) -> Option<Vec<u8>> {
        self.data.to_option()
    }

    /// The ACL list.
    pub fn acl(&self) -> &[Acl] {
        &self.acl
    }

    /// The shared ACL list itself (its identity names it in a snapshot's ACL map).
    pub fn acl_ref(&self) -> &AclRef {
        &self.acl
    }

    pub fn num_children(&self) -> usize {
        self.children.as_ref().map_or(0, |c| c.len())
    }

    /// This node's digest as the tree digest counts it.
    pub fn digest(&self) -> i64 {
        i64::from(self.digest)
    }

    /// The Stat clients see (docs/protocol.md §7).
    pub fn stat(&self) -> Stat {
        let num_children = self.num_children() as i32;
        Stat {
            czxid: self.czxid,
            mzxid: self.mzxid,
            ctime: self.ctime,
            mtime: self.mtime,
            version: self.version,
            // The visible cversion counts child creates plus child deletes (docs/protocol.md §8.1).
            cversion: self.creates.wrapping_mul(2).wrapping_sub(num_children),
            aversion: self.aversion,
            // Containers and TTL nodes show 0 although their internal owner is a marker (docs/protocol.md §7).
            ephemeral_owner: match self.owner {
                Owner::Ephemeral(session) => session,
                _ => 0,
            },
            data_length: self.data.len() as i32,
            num_children,
            pzxid: self.pzxid,
        }
    }
}
