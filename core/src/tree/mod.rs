//! The znode tree: nodes, their Stat bookkeeping (docs/protocol.md §7, §8.1), the indexes of ephemerals,
//! containers and TTL nodes, and undoable mutation primitives for multi (docs/protocol.md §10.3).
//!
//! Layout (docs/bench/scale.md, "Layout"): nodes live in an [`Arena`] addressed by `u32`, each
//! holding its own name, its parent's index, its data (inline when short), a shared reference
//! to its interned ACL list ([`AclTable`]) and its children as indexes sorted by name
//! ([`Children`]). A path is found through a [`PathIndex`] that stores no path: its entries are
//! checked by walking the names back to the root. No string is stored twice.
//!
//! Invariants: every stored path is valid and its parent exists; outside a restore, a node's
//! `children` names exactly the nodes one level below it (during one, some are still in
//! `restored`, see `restoring.rs`), and its `parent` and `name` are where it hangs;
//! `index` holds every node but the root, under the hash of its path; `creates` (the create
//! counter C) only grows, so the visible cversion `2·C − numChildren` moves by one per child
//! create or delete; ephemeral, container and TTL indexes hold exactly the nodes of that kind;
//! `data_size` equals the sum that ZooKeeper's `approximateDataSize` reports. Mutations record
//! [`Undo`] entries so a failed multi can be rolled back exactly; this module performs no
//! permission or argument checks.

use std::collections::{BTreeMap, BTreeSet};

use shepherd_protocol::Acl;

pub(crate) use super::acl_table::AclRef;
use super::acl_table::AclTable;
use super::arena::Arena;
/// A place among a node's children (see [`Tree::children_from`]).
pub(crate) use super::children::Pos as ChildPlace;
pub(crate) use super::node::{NO_PARENT, Node};
pub(crate) use super::owner::Owner;
use super::path_index::PathIndex;
use super::short::Name;
use super::{SessionId, digest, path};

mod edit;
mod link;
mod restoring;
pub(crate) use edit::Undo;

/// The wire form of an empty child list: a jute vector of count 0.
const NO_CHILDREN_WIRE: [u8; 4] = [0; 4];

/// Why [`Tree::attach_restored`] refused a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Its parent is not in the tree.
    Orphan,
    /// A node of that path is already there (or, beyond any memory this runs in, the arena's
    /// 2³² indexes are all taken).
    Duplicate,
}

/// The tree and its indexes.
#[derive(Debug)]
pub(crate) struct Tree {
    nodes: Arena<Node>,
    index: PathIndex,
    root: Option<u32>,
    acls: AclTable,
    ephemerals: BTreeMap<SessionId, BTreeSet<String>>,
    containers: BTreeSet<String>,
    ttls: BTreeSet<String>,
    /// Ephemeral nodes in `ephemerals`, counted as they come and go (mntr reads it under the
    /// core lock, so it must not be a walk).
    ephemeral_count: usize,
    data_size: u64,
    /// ZooKeeper's tree digest (`digest.rs`), kept only once [`Tree::start_digest`] is called.
    digest: Option<i64>,
    /// The parent a restore attached to last: a snapshot lists a folder's children one after
    /// another, so most of them find their parent without a lookup. Cleared by every detach.
    last_parent: Option<(String, u32)>,
    /// (parent, child) of every node a restore attached, not yet in its parent's child list
    /// (`restoring.rs`); empty outside a restore.
    restored: Vec<(u32, u32)>,
}

/// Java measures path lengths in UTF-16 code units.
fn java_len(s: &str) -> u64 {
    if s.is_ascii() {
        return s.len() as u64;
    }
    s.encode_utf16().count() as u64
}

/// A node's name by index, for ordering children ("" for a free slot, which no child list
/// holds).
fn name_of<'a>(nodes: &'a Arena<Node>) -> impl Fn(u32) -> &'a [u8] + Copy + 'a {
    move |i| nodes.get(i).map_or(&[][..], |n| n.name.as_bytes())
}

impl Tree {
    /// The fresh tree of docs/protocol.md §16, with its odd stats: `/zookeeper` hangs under the root without
    /// counting as a create (root cversion -1, `/zookeeper` -2), and `/zookeeper/config` is
    /// READ-only with aversion -1.
    pub fn new() -> Tree {
        let mut tree = Tree::empty();
        tree.add_missing_system_nodes();
        tree
    }

    /// Adds whichever of the system nodes (docs/protocol.md §16) the tree lacks, as a fresh
    /// ZooKeeper has them: all zero stats and empty data, `/zookeeper/config` READ-only with
    /// aversion -1; hanging them under their parents counts no create.
    pub fn add_missing_system_nodes(&mut self) {
        for p in path::SYSTEM_NODES {
            if self.lookup(p).is_some() {
                continue;
            }
            let acl = if p == "/zookeeper/config" {
                self.acls.intern(Acl::read_unsafe())
            } else {
                self.acls.open_unsafe()
            };
            let mut node = Node::new(Some(Vec::new()), acl, 0, 0, Owner::Persistent);
            if p == "/zookeeper/config" {
                node.aversion = -1;
            }
            if p == "/" {
                self.insert_root(node);
            } else {
                self.attach(p, node);
            }
        }
    }

    /// Puts the root in place (a tree being restored has none yet).
    pub fn insert_root(&mut self, mut node: Node) {
        if self.root.is_some() {
            return;
        }
        node.name = Name::new("");
        node.parent = NO_PARENT;
        self.data_size += java_len("/") + node.data.len() as u64;
        self.root = self.nodes.insert(node);
        self.last_parent = None;
        if let Some(root) = self.root {
            self.rehash(root, "/");
        }
    }

    /// An empty tree, not even a root: what a snapshot restore fills in.
    pub fn empty() -> Tree {
        Tree {
            nodes: Arena::default(),
            index: PathIndex::default(),
            root: None,
            acls: AclTable::new(),
            ephemerals: BTreeMap::new(),
            containers: BTreeSet::new(),
            ttls: BTreeSet::new(),
            ephemeral_count: 0,
            data_size: 0,
            digest: None,
            last_parent: None,
            restored: Vec::new(),
        }
    }

    /// The shared copy of an ACL list, for a node about to be made.
    pub fn intern_acl(&mut self, acl: Vec<Acl>) -> AclRef {
        self.acls.intern(acl)
    }

    /// `OPEN_ACL_UNSAFE`'s shared copy.
    pub fn open_acl(&self) -> AclRef {
        self.acls.open_unsafe()
    }

    /// Starts keeping the tree digest, computed afresh over every node; from here on every
    /// mutation keeps it up to date. Nothing to do if it is kept already (a restore starts
    /// it on the empty tree, so that each node's digest is computed with the path at hand).
    pub fn start_digest(&mut self) {
        if self.digest.is_some() {
            return;
        }
        let mut digests = Vec::with_capacity(self.len());
        self.walk(|path, i, node| digests.push((i, digest::node_digest(path, node))));
        let mut sum = 0i64;
        for (i, d) in digests {
            if let Some(node) = self.nodes.get_mut(i) {
                node.digest = d as u32;
                sum = sum.wrapping_add(d);
            }
        }
        self.digest = Some(sum);
    }

    /// The tree digest, if kept.
    pub fn digest(&self) -> Option<i64> {
        self.digest
    }

    /// The tree digest computed from scratch, for checking the incremental one.
    #[cfg(test)]
    pub fn recompute_digest(&self) -> i64 {
        let mut sum = 0i64;
        self.walk(|p, _, n| sum = sum.wrapping_add(digest::node_digest(p, n)));
        sum
    }

    /// Whether node `i` is the one at `path`: its name and its ancestors' names, read back to
    /// the root, spell the path.
    fn is_at(&self, mut i: u32, path: &str) -> bool {
        let mut rest = path.as_bytes();
        loop {
            if Some(i) == self.root {
                return rest.is_empty();
            }
            let Some(node) = self.nodes.get(i) else {
                return false;
            };
            let Some(head) = rest
                .strip_suffix(node.name.as_bytes())
                .and_then(|h| h.strip_suffix(b"/"))
            else {
                return false;
            };
            // Each step strips at least the slash, so this ends.
            rest = head;
            i = node.parent;
        }
    }

    /// The arena index of the node at `path`.
    pub fn lookup(&self, path: &str) -> Option<u32> {
        if path == "/" {
            return self.root;
        }
        self.index
            .find(self.index.hash(path), |i| self.is_at(i, path))
    }

    /// Takes a node's digest out of the tree digest, before the node changes.
    fn unhash(&mut self, i: u32) {
        if let (Some(sum), Some(node)) = (&mut self.digest, self.nodes.get(i)) {
            *sum = sum.wrapping_sub(node.digest());
        }
    }

    /// Puts a node's digest (recomputed) back into the tree digest, after it changed.
    fn rehash(&mut self, i: u32, path: &str) {
        if let (Some(sum), Some(node)) = (&mut self.digest, self.nodes.get_mut(i)) {
            let d = digest::node_digest(path, node);
            node.digest = d as u32;
            *sum = sum.wrapping_add(d);
        }
    }

    /// Changes a node's stored fields (not its data, owner or children) through `change`,
    /// keeping the digest. False if there is no such node.
    pub fn update(&mut self, path: &str, change: impl FnOnce(&mut Node)) -> bool {
        let Some(i) = self.lookup(path) else {
            return false;
        };
        self.unhash(i);
        if let Some(node) = self.nodes.get_mut(i) {
            change(node);
        }
        self.rehash(i, path);
        true
    }

    pub fn get(&self, path: &str) -> Option<&Node> {
        self.nodes.get(self.lookup(path)?)
    }

    /// The node at an index [`Tree::lookup`] gave.
    pub fn get_index(&self, i: u32) -> Option<&Node> {
        self.nodes.get(i)
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// ZooKeeper's `approximateDataSize`: its node map holds the root twice (`""` and `/`), so
    /// the root's data counts twice.
    pub fn data_size(&self) -> u64 {
        self.data_size + self.get("/").map_or(0, |n| n.data.len() as u64)
    }

    /// Calls `f` with every node's path, index and node, parents before children, siblings
    /// in name order.
    pub fn walk(&self, mut f: impl FnMut(&str, u32, &Node)) {
        let Some(root) = self.root else { return };
        let mut stack = vec![(root, "/".to_string())];
        while let Some((i, p)) = stack.pop() {
            let Some(node) = self.nodes.get(i) else {
                continue;
            };
            f(&p, i, node);
            if let Some(kids) = &node.children {
                let at = stack.len();
                stack.extend(kids.iter().filter_map(|c| {
                    let name = self.nodes.get(c)?.name.as_str();
                    Some((c, path::join(&p, name)))
                }));
                stack[at..].reverse();
            }
        }
    }

    /// A node's child names, sorted.
    pub fn child_names<'a>(&'a self, node: &'a Node) -> impl Iterator<Item = &'a str> + 'a {
        node.children
            .iter()
            .flat_map(|k| k.iter())
            .filter_map(|c| Some(self.nodes.get(c)?.name.as_str()))
    }

    /// The place among `node`'s children of the first child whose name sorts after `after`
    /// (of the first child, for `None`), for [`Tree::children_from`].
    pub fn child_place_after(&self, node: &Node, after: Option<&str>) -> ChildPlace {
        node.children.as_ref().map_or((0, 0), |k| {
            k.place_after(after.map(str::as_bytes), name_of(&self.nodes))
        })
    }

    /// `node`'s children from `place` on, in name order, each with its place and index. A
    /// place is good until the next change of the tree.
    pub fn children_from<'a>(
        &'a self,
        node: &'a Node,
        place: ChildPlace,
    ) -> impl Iterator<Item = (ChildPlace, u32, &'a Node)> + 'a {
        node.children
            .iter()
            .flat_map(move |k| k.iter_from(place))
            .filter_map(|(place, c)| Some((place, c, self.nodes.get(c)?)))
    }

    /// Whether `node` has a child called `name`: a search of its sorted list, never a scan.
    pub fn has_child(&self, node: &Node, name: &str) -> bool {
        node.children
            .as_ref()
            .is_some_and(|k| k.find(name.as_bytes(), name_of(&self.nodes)).is_some())
    }

    /// The jute `vector<ustring>` of node `i`'s child names, built once per change of them.
    pub fn children_wire(&mut self, i: u32) -> &[u8] {
        let kids = self.nodes.get_mut(i).and_then(|n| n.children.take());
        if let Some(mut kids) = kids {
            kids.wire(name_of(&self.nodes));
            if let Some(node) = self.nodes.get_mut(i) {
                node.children = Some(kids);
            }
        }
        match self.nodes.get(i).and_then(|n| n.children.as_deref()) {
            Some(kids) => kids.cached_wire().unwrap_or(&NO_CHILDREN_WIRE),
            None => &NO_CHILDREN_WIRE,
        }
    }

    pub fn ephemerals_of(&self, session: SessionId) -> impl Iterator<Item = &String> {
        self.ephemerals.get(&session).into_iter().flatten()
    }

    /// A session's ephemerals that sort after `after` (all when `None`), in order: a walk
    /// that resumes where it stopped, for the bounded slices of `dump`.
    pub fn ephemerals_after<'a>(
        &'a self,
        session: SessionId,
        after: Option<&'a str>,
    ) -> impl Iterator<Item = &'a String> {
        use std::ops::Bound::{Excluded, Unbounded};
        let from = after.map_or(Unbounded, Excluded);
        self.ephemerals
            .get(&session)
            .into_iter()
            .flat_map(move |set| set.range::<str, _>((from, Unbounded)))
    }

    /// The sessions that own ephemerals.
    pub fn ephemeral_owners(&self) -> impl Iterator<Item = SessionId> + '_ {
        self.ephemerals.keys().copied()
    }

    pub fn ephemerals_count(&self) -> usize {
        self.ephemeral_count
    }

    pub fn containers(&self) -> &BTreeSet<String> {
        &self.containers
    }

    pub fn ttls(&self) -> &BTreeSet<String> {
        &self.ttls
    }

    /// Number of descendants (getAllChildrenNumber, docs/protocol.md §6.5).
    pub fn descendants(&self, path: &str) -> usize {
        let mut count = 0;
        let mut stack: Vec<u32> = self.lookup(path).into_iter().collect();
        while let Some(i) = stack.pop() {
            if let Some(kids) = self.nodes.get(i).and_then(|n| n.children.as_deref()) {
                count += kids.len();
                stack.extend(kids.iter());
            }
        }
        count
    }

    /// Hangs a node under its parent, which must exist, and indexes it.
    pub(super) fn attach(&mut self, path: &str, node: Node) {
        let (parent, _) = path::split(path);
        let p = self.lookup(parent).expect("parent exists");
        self.attach_under(p, path, node);
    }

    /// [`Tree::attach`] under the parent at index `parent`.
    pub(super) fn attach_under(&mut self, parent: u32, path: &str, node: Node) {
        let (_, name) = path::split(path);
        let linked = self.link(parent, path, name, node);
        debug_assert!(linked.is_ok(), "{path} attached twice");
    }

    /// Takes a node out of the tree and its indexes (its children, if any, stay: callers
    /// detach them first).
    pub(super) fn detach(&mut self, path: &str) -> Node {
        let i = self.lookup(path).expect("node exists");
        self.unhash(i);
        self.last_parent = None;
        let (_, name) = path::split(path);
        let parent = self.nodes.get(i).map_or(NO_PARENT, |n| n.parent);
        let kids = self.nodes.get_mut(parent).and_then(|p| p.children.take());
        if let Some(mut kids) = kids {
            kids.remove(name.as_bytes(), name_of(&self.nodes));
            if let Some(p) = self.nodes.get_mut(parent) {
                p.children = (!kids.is_empty()).then_some(kids);
            }
        }
        self.index.remove(self.index.hash(path), i);
        let node = self.nodes.remove(i).expect("node exists");
        self.data_size -= java_len(path) + node.data.len() as u64;
        self.index_kind(path, node.owner, false);
        node
    }
}
