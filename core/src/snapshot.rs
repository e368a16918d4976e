//! Snapshots taken in slices: [`Core::snapshot_begin`] fixes the zxid and the session table;
//! each [`Core::snapshot_slice`] then appends the next few nodes as ZooKeeper 3.8's snapshot
//! node records (`ustring path`, then the `DataNode`: `buffer data, long acl,
//! StatPersisted`), so the shell can write a snapshot while holding the core lock only a
//! slice at a time.
//!
//! Invariants: the walk is the pre-order of the tree with children in sorted order, so a
//! parent is always written before its children. Each slice resumes from the **paths** of the
//! node written last and its ancestors, never from an iterator or an index kept across
//! slices, so creates and deletes between slices (those nodes' own deletion included) cannot
//! derail it: the next node is the first one after them in walk order in the tree as it is
//! now. Within a slice the tree cannot change, so the walk goes by arena index there, looking
//! paths up only once per slice (one per level), and keeps the paths in one growing buffer:
//! no allocation and no path hashing per node. A node's children are those it had
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

use super::tree::{AclRef, ChildPlace, Node};
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
    /// The path of the node written last (`""` for the root, as it is written).
    path: String,
    /// That node and its ancestors, root first: each one's path length in `path` and the
    /// zxid it was written at; empty before the first node.
    stack: Vec<Frame>,
    started: bool,
    done: bool,
    /// Ids by the address of the interned list (the lists in `acls` and `open` stay alive),
    /// looked up once per node: ahash, as the tree's own tables, not std's SipHash.
    acl_ids: HashMap<usize, i64, ahash::RandomState>,
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

/// A node on the walk's path: where its path ends in [`SnapshotCursor::path`], and the zxid
/// when it was written (its children created later are left out).
#[derive(Debug, Clone, Copy)]
struct Frame {
    len: usize,
    written_at: i64,
}

/// Appends one node record: the path (`""` for the root), the data, the ACL id, the stored
/// stat.
fn write_node(path: &str, node: &Node, acl_id: i64, out: &mut Vec<u8>) {
    // A jute ustring, as `String::encode` writes it, without copying the path first.
    i32::try_from(path.len()).unwrap_or(i32::MAX).encode(out);
    out.extend_from_slice(path.as_bytes());
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
            path: String::new(),
            stack: Vec::new(),
            started: false,
            done: false,
            acl_ids: HashMap::default(),
            acls: Vec::new(),
            open: Vec::new(),
            digest: None,
        }
    }

    /// Appends the next node records of the walk to `out`, at most `max_nodes` of them (at
    /// least one), and returns true once every node has been written (later calls then write
    /// nothing). It does not write the `"/"` end marker. The work is bounded by `max_nodes`
    /// plus the depth of the tree, in lookups of a name among siblings; calls may be
    /// interleaved with any other input.
    pub fn snapshot_slice(
        &self,
        cursor: &mut SnapshotCursor,
        max_nodes: usize,
        out: &mut Vec<u8>,
    ) -> bool {
        if cursor.done {
            return true;
        }
        let max_nodes = max_nodes.max(1);
        // Where the last slice stopped, as it is now: a node deleted since is `None`, and the
        // walk climbs out of it. No place among siblings is known yet (see `Step`).
        let mut at: Vec<Step> = cursor
            .stack
            .iter()
            .map(|frame| Step {
                node: self
                    .tree
                    .lookup(path::lookup_key(&cursor.path[..frame.len])),
                place: None,
            })
            .collect();
        let mut written = 0;
        if !cursor.started {
            cursor.started = true;
            if let Some(root) = self.tree.lookup("/") {
                self.write_at(cursor, &mut at, (root, None), out);
                written += 1;
            }
        }
        while written < max_nodes {
            let Some(next) = self.next_in_walk(cursor, &mut at) else {
                cursor.done = true;
                cursor.digest = self.tree.digest().map(|d| (self.zxid, d));
                return true;
            };
            self.write_at(cursor, &mut at, (next.0, Some(next.1)), out);
            written += 1;
        }
        false
    }

    /// Writes node `i` (at `place` among its siblings, when known), whose path `cursor.path`
    /// now ends with, and pushes its frame and its step: the one place both stacks grow, so
    /// they stay the same height.
    fn write_at(
        &self,
        cursor: &mut SnapshotCursor,
        at: &mut Vec<Step>,
        (i, place): (u32, Option<ChildPlace>),
        out: &mut Vec<u8>,
    ) {
        if let Some(node) = self.tree.get_index(i) {
            let id = cursor.acl_id(node.acl_ref());
            write_node(&cursor.path, node, id, out);
        }
        cursor.stack.push(Frame {
            len: cursor.path.len(),
            written_at: self.zxid,
        });
        at.push(Step {
            node: Some(i),
            place,
        });
    }

    /// Finds the node after the top of the stack in walk order (pre-order, sorted children):
    /// the first child it had when written, else the next such sibling of it or of its
    /// nearest ancestor that has one; returns its index and its place among its siblings.
    /// Pops the frames it climbs out of (and their steps from `at`) and leaves `cursor.path`
    /// as the found node's path.
    fn next_in_walk(
        &self,
        cursor: &mut SnapshotCursor,
        at: &mut Vec<Step>,
    ) -> Option<(u32, ChildPlace)> {
        // Where to go on among the top's children: from the first (just written), right
        // after a known place, or after a name (a range of `cursor.path`) where the place
        // was not known.
        let mut resume = Resume::First;
        while let Some(&top) = cursor.stack.last() {
            let node = at
                .last()
                .and_then(|step| step.node)
                .and_then(|i| self.tree.get_index(i));
            let found = node.and_then(|node| {
                let from = match resume {
                    Resume::First => (0, 0),
                    Resume::After((c, k)) => (c, k + 1),
                    Resume::AfterName(from, to) => self
                        .tree
                        .child_place_after(node, Some(&cursor.path[from..to])),
                };
                self.tree
                    .children_from(node, from)
                    .find(|(_, _, child)| child.czxid <= top.written_at)
            });
            if let Some((place, child, node)) = found {
                cursor.path.truncate(top.len);
                cursor.path.push('/');
                cursor.path.push_str(node.name.as_str());
                return Some((child, place));
            }
            cursor.stack.pop();
            let step = at.pop();
            // The parent's path ends where its frame says; the name follows its slash.
            let parent_len = cursor.stack.last().map_or(0, |frame| frame.len);
            resume = match step.and_then(|s| s.place) {
                Some(place) => Resume::After(place),
                None => Resume::AfterName(parent_len + 1, top.len),
            };
        }
        None
    }
}

/// A node of the walk within one slice: its arena index (`None` if it is gone) and, when
/// the slice reached it from its parent, its place among the parent's children, which spares
/// a search by name when the walk climbs back. Both are good only while the slice runs: the
/// tree may change between slices.
#[derive(Debug, Clone, Copy)]
struct Step {
    node: Option<u32>,
    place: Option<ChildPlace>,
}

/// Where the walk goes on among a node's children.
#[derive(Debug, Clone, Copy)]
enum Resume {
    First,
    After(ChildPlace),
    AfterName(usize, usize),
}
