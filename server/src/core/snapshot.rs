//! Snapshots taken in slices: [`Core::snapshot_begin`] fixes the zxid and the session table;
//! each [`Core::snapshot_slice`] then appends the next few nodes as ZooKeeper 3.8's snapshot
//! node records (`ustring path`, then the `DataNode`: `buffer data, long acl,
//! StatPersisted`), so the shell can write a snapshot while holding the core lock only a
//! slice at a time.
//!
//! Invariants: the walk is the pre-order of the tree with children in sorted order, so a
//! parent is always written before its children. It resumes from the **paths** of the node
//! written last and its ancestors, never from an iterator, so creates and deletes between
//! slices (those nodes' own deletion included) cannot derail it: the next node is the first
//! one after them in walk order in the tree as it is now. A node's children are those it had
//! when it was written (a child whose czxid is later is left out, as ZooKeeper copies a node's
//! child list together with its stat), so a parent's cversion and pzxid never lag a child the
//! snapshot holds, and replaying that child's create repairs both. What changes between
//! slices makes the snapshot fuzzy exactly as ZooKeeper's are: every change has a zxid above
//! the snapshot's, and replaying the log from there (`replay.rs`) repairs it. The root is written under the path `""`, as
//! ZooKeeper writes it. ACL ids are numbered per snapshot, one per distinct ACL list, from 1;
//! ZooKeeper's id -1 stands for `OPEN_ACL_UNSAFE` and is never listed.

use std::collections::HashMap;

use shepherd_protocol::txn::StatPersisted;
use shepherd_protocol::{Acl, Codec};

use super::tree::{AclRef, Node};
use super::{Core, SessionId, path};

/// `ReferenceCountedACLCache.OPEN_UNSAFE_ACL_ID`: the id of `OPEN_ACL_UNSAFE`, never in the
/// ACL map.
pub const OPEN_ACL_UNSAFE_ID: i64 = -1;

/// A snapshot in progress: its zxid and sessions, where the walk stands, and the ACL ids it
/// has handed out. Made by [`Core::snapshot_begin`], advanced by [`Core::snapshot_slice`].
#[derive(Debug, Clone)]
pub struct SnapshotCursor {
    zxid: i64,
    sessions: Vec<(SessionId, i32)>,
    /// The node written last and its ancestors, root first, each with the zxid it was
    /// written at; empty before the first node.
    stack: Vec<(String, i64)>,
    started: bool,
    done: bool,
    /// Ids by the address of the interned list (the lists in `acls` and `open` stay alive).
    acl_ids: HashMap<usize, i64>,
    acls: Vec<(i64, AclRef)>,
    /// Interned `OPEN_ACL_UNSAFE` lists seen (id -1), kept alive like the others.
    open: Vec<AclRef>,
    digest: Option<(i64, i64)>,
}

impl SnapshotCursor {
    /// The last zxid when the snapshot began: the snapshot's name, and where replay resumes.
    pub fn zxid(&self) -> i64 {
        self.zxid
    }

    /// The live sessions when the snapshot began, as (id, timeout ms), by id.
    pub fn sessions(&self) -> &[(SessionId, i32)] {
        &self.sessions
    }

    /// Every ACL id the slices written so far use, with its list, by id. Complete once the
    /// walk is done; the snapshot's ACL map.
    pub fn acls(&self) -> impl Iterator<Item = (i64, &[Acl])> {
        self.acls.iter().map(|(id, acl)| (*id, &acl[..]))
    }

    /// The (zxid, tree digest) pair ZooKeeper writes after a snapshot's nodes: taken when the
    /// walk completes, so ZooKeeper checks it after replaying the log up to that zxid. `None`
    /// before then, or when the core keeps no digest.
    pub fn digest(&self) -> Option<(i64, i64)> {
        self.digest
    }

    /// Whether the walk has written every node.
    pub fn is_done(&self) -> bool {
        self.done
    }

    fn acl_id(&mut self, acl: &AclRef) -> i64 {
        let key = std::sync::Arc::as_ptr(acl) as usize;
        if let Some(&id) = self.acl_ids.get(&key) {
            return id;
        }
        let id = if **acl == Acl::open_unsafe() {
            self.open.push(acl.clone());
            OPEN_ACL_UNSAFE_ID
        } else {
            let id = i64::try_from(self.acls.len()).unwrap_or(i64::MAX - 1) + 1;
            self.acls.push((id, acl.clone()));
            id
        };
        self.acl_ids.insert(key, id);
        id
    }
}

/// Appends one node record: the path (`""` for the root), the data, the ACL id, the stored
/// stat.
fn write_node(path: &str, node: &Node, acl_id: i64, out: &mut Vec<u8>) {
    let path = if path == "/" { "" } else { path };
    path.to_string().encode(out);
    match node.data() {
        None => (-1i32).encode(out),
        Some(data) => {
            i32::try_from(data.len()).unwrap_or(i32::MAX).encode(out);
            out.extend_from_slice(data);
        }
    }
    acl_id.encode(out);
    StatPersisted {
        czxid: node.czxid,
        mzxid: node.mzxid,
        ctime: node.ctime,
        mtime: node.mtime,
        version: node.version,
        cversion: node.creates,
        aversion: node.aversion,
        ephemeral_owner: node.owner.raw(),
        pzxid: node.pzxid,
    }
    .encode(out);
}

/// # Snapshots
///
/// The shell's side of ZooKeeper's fuzzy snapshots; see the module documentation.
impl Core {
    /// Starts a snapshot at the current zxid with the current sessions. Nothing is written
    /// yet; the core is not changed.
    pub fn snapshot_begin(&self) -> SnapshotCursor {
        SnapshotCursor {
            zxid: self.zxid,
            sessions: self
                .sessions
                .iter()
                .map(|(&id, s)| (id, s.timeout_ms))
                .collect(),
            stack: Vec::new(),
            started: false,
            done: false,
            acl_ids: HashMap::new(),
            acls: Vec::new(),
            open: Vec::new(),
            digest: None,
        }
    }

    /// Appends the next node records of the walk to `out`, at most `max_nodes` of them (at
    /// least one), and returns true once every node has been written (later calls then write
    /// nothing). It does not write the `"/"` end marker. The work is bounded by `max_nodes`
    /// times the depth of the tree; calls may be interleaved with any other input.
    pub fn snapshot_slice(
        &self,
        cursor: &mut SnapshotCursor,
        max_nodes: usize,
        out: &mut Vec<u8>,
    ) -> bool {
        if cursor.done {
            return true;
        }
        let mut written = 0;
        loop {
            let next = if cursor.started {
                self.next_in_walk(&mut cursor.stack)
            } else {
                cursor.started = true;
                self.tree.get("/").map(|_| "/".to_string())
            };
            let Some(p) = next else { break };
            if let Some(node) = self.tree.get(&p) {
                let id = cursor.acl_id(node.acl_ref());
                write_node(&p, node, id, out);
                written += 1;
            }
            cursor.stack.push((p, self.zxid));
            if written == max_nodes.max(1) {
                return false;
            }
        }
        cursor.done = true;
        cursor.digest = self.tree.digest().map(|d| (self.zxid, d));
        true
    }

    /// The node after the top of `stack` in walk order (pre-order, sorted children), in the
    /// tree as it is now: the first child it had when written, else the next such sibling of
    /// it or of its nearest ancestor that has one. Pops the frames it climbs out of.
    fn next_in_walk(&self, stack: &mut Vec<(String, i64)>) -> Option<String> {
        let mut after: Option<String> = None;
        while let Some((top, written_at)) = stack.last() {
            if let Some(node) = self.tree.get(top) {
                let older = self
                    .tree
                    .children_after(node, after.as_deref())
                    .find(|(_, child)| child.czxid <= *written_at);
                if let Some((name, _)) = older {
                    return Some(path::join(top, name));
                }
            }
            let (done, _) = stack.pop()?;
            after = Some(path::split(&done).1.to_string());
        }
        None
    }
}
