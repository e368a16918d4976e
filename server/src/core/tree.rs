//! The znode tree: nodes, their Stat bookkeeping (docs/protocol.md §7, §8.1), the indexes of ephemerals,
//! containers and TTL nodes, and undoable mutation primitives for multi (docs/protocol.md §10.3).
//!
//! Invariants: every stored path is valid and its parent exists; a node's `children` names
//! exactly the nodes one level below it; `creates` (the create counter C) only grows, so the
//! visible cversion `2·C − numChildren` moves by one per child create or delete; ephemeral,
//! container and TTL indexes hold exactly the nodes of that kind; `data_size` equals the sum that
//! ZooKeeper's `approximateDataSize` reports. Mutations record [`Undo`] entries so a failed
//! multi can be rolled back exactly; this module performs no permission or argument checks.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use shepherd_protocol::{Acl, Stat};

pub(crate) use super::children::Children;
pub(crate) use super::owner::Owner;
use super::{SessionId, digest, path};

/// One znode.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub data: Option<Vec<u8>>,
    pub acl: Vec<Acl>,
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
    pub children: Children,
    /// This node's digest as last added to the tree digest (0 while digests are off).
    pub digest: i64,
}

impl Node {
    pub(super) fn new(
        data: Option<Vec<u8>>,
        acl: Vec<Acl>,
        zxid: i64,
        time: i64,
        owner: Owner,
    ) -> Node {
        Node {
            data,
            acl,
            czxid: zxid,
            mzxid: zxid,
            pzxid: zxid,
            ctime: time,
            mtime: time,
            version: 0,
            aversion: 0,
            creates: 0,
            owner,
            children: Children::default(),
            digest: 0,
        }
    }

    /// The Stat clients see (docs/protocol.md §7).
    pub fn stat(&self) -> Stat {
        let num_children = self.children.len() as i32;
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
            data_length: self.data.as_ref().map_or(0, |d| d.len() as i32),
            num_children,
            pzxid: self.pzxid,
        }
    }
}

/// How to reverse one mutation.
#[derive(Debug)]
pub(crate) enum Undo {
    /// A node was created; remove it.
    Created(String),
    /// A node was deleted; put it back.
    Deleted(String, Node),
    /// A parent's counter and pzxid changed.
    ParentMeta {
        path: String,
        creates: i32,
        pzxid: i64,
    },
    /// A node's data changed.
    Data {
        path: String,
        data: Option<Vec<u8>>,
        version: i32,
        mzxid: i64,
        mtime: i64,
    },
}

/// Why [`Tree::attach_restored`] refused a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Its parent is not in the tree.
    Orphan,
    /// A node of that path is already there.
    Duplicate,
}

/// The tree and its indexes.
#[derive(Debug)]
pub(crate) struct Tree {
    /// Keyed by full path. aHash, randomly keyed per process: paths come from clients, so the
    /// hasher must resist chosen collisions, and SipHash (std's) was the largest cost of
    /// restoring a million-node snapshot.
    nodes: HashMap<String, Node, ahash::RandomState>,
    ephemerals: BTreeMap<SessionId, BTreeSet<String>>,
    containers: BTreeSet<String>,
    ttls: BTreeSet<String>,
    /// Ephemeral nodes in `ephemerals`, counted as they come and go (mntr reads it under the
    /// core lock, so it must not be a walk).
    ephemeral_count: usize,
    data_size: u64,
    /// ZooKeeper's tree digest (`digest.rs`), kept only once [`Tree::start_digest`] is called.
    digest: Option<i64>,
}

/// Java measures path lengths in UTF-16 code units.
fn java_len(s: &str) -> u64 {
    s.encode_utf16().count() as u64
}

fn data_len(data: &Option<Vec<u8>>) -> u64 {
    data.as_ref().map_or(0, |d| d.len() as u64)
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
            if self.nodes.contains_key(p) {
                continue;
            }
            let acl = if p == "/zookeeper/config" {
                Acl::read_unsafe()
            } else {
                Acl::open_unsafe()
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
    pub fn insert_root(&mut self, node: Node) {
        self.data_size += java_len("/") + data_len(&node.data);
        self.nodes.insert("/".to_string(), node);
        self.rehash("/");
    }

    /// An empty tree, not even a root: what a snapshot restore fills in.
    pub fn empty() -> Tree {
        Tree {
            nodes: HashMap::default(),
            ephemerals: BTreeMap::new(),
            containers: BTreeSet::new(),
            ttls: BTreeSet::new(),
            ephemeral_count: 0,
            data_size: 0,
            digest: None,
        }
    }

    /// Starts keeping the tree digest, computed afresh over every node; from here on every
    /// mutation keeps it up to date.
    pub fn start_digest(&mut self) {
        let mut sum = 0i64;
        for (path, node) in &mut self.nodes {
            node.digest = digest::node_digest(path, node);
            sum = sum.wrapping_add(node.digest);
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
        self.nodes.iter().fold(0i64, |sum, (p, n)| {
            sum.wrapping_add(digest::node_digest(p, n))
        })
    }

    /// Takes a node's digest out of the tree digest, before the node changes.
    fn unhash(&mut self, path: &str) {
        if let (Some(sum), Some(node)) = (&mut self.digest, self.nodes.get(path)) {
            *sum = sum.wrapping_sub(node.digest);
        }
    }

    /// Puts a node's digest (recomputed) back into the tree digest, after it changed.
    fn rehash(&mut self, path: &str) {
        if let (Some(sum), Some(node)) = (&mut self.digest, self.nodes.get_mut(path)) {
            node.digest = digest::node_digest(path, node);
            *sum = sum.wrapping_add(node.digest);
        }
    }

    /// Changes a node's stored fields (not its data, owner or children) through `change`,
    /// keeping the digest. False if there is no such node.
    pub fn update(&mut self, path: &str, change: impl FnOnce(&mut Node)) -> bool {
        if !self.nodes.contains_key(path) {
            return false;
        }
        self.unhash(path);
        if let Some(node) = self.nodes.get_mut(path) {
            change(node);
        }
        self.rehash(path);
        true
    }

    pub fn get(&self, path: &str) -> Option<&Node> {
        self.nodes.get(path)
    }

    pub fn get_mut(&mut self, path: &str) -> Option<&mut Node> {
        self.nodes.get_mut(path)
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// ZooKeeper's `approximateDataSize`: its node map holds the root twice (`""` and `/`), so
    /// the root's data counts twice.
    pub fn data_size(&self) -> u64 {
        self.data_size + self.nodes.get("/").map_or(0, |n| data_len(&n.data))
    }

    /// Every node, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Node)> {
        self.nodes.iter()
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
        let mut stack = vec![path.to_string()];
        while let Some(p) = stack.pop() {
            if let Some(node) = self.nodes.get(&p) {
                count += node.children.len();
                stack.extend(node.children.iter().map(|c| path::join(&p, c)));
            }
        }
        count
    }

    fn index(&mut self, path: &str, owner: Owner, add: bool) {
        let set = match owner {
            Owner::Persistent => return,
            Owner::Ephemeral(session) => self.ephemerals.entry(session).or_default(),
            Owner::Container => &mut self.containers,
            Owner::Ttl(_) => &mut self.ttls,
        };
        let changed = if add {
            set.insert(path.to_string())
        } else {
            set.remove(path)
        };
        if changed && matches!(owner, Owner::Ephemeral(_)) {
            if add {
                self.ephemeral_count += 1;
            } else {
                self.ephemeral_count -= 1;
            }
        }
        if let Owner::Ephemeral(session) = owner
            && self
                .ephemerals
                .get(&session)
                .is_some_and(BTreeSet::is_empty)
        {
            self.ephemerals.remove(&session);
        }
    }

    /// Hangs a restored node under its parent with one lookup of each (a million-node
    /// restore does this a million times): refused, changing nothing, when the parent is
    /// missing or already has a child of that name.
    pub(super) fn attach_restored(&mut self, path: &str, mut node: Node) -> Result<(), Refused> {
        let (parent, name) = path::split(path);
        let Some(p) = self.nodes.get_mut(parent) else {
            return Err(Refused::Orphan);
        };
        if p.children.contains(name) {
            return Err(Refused::Duplicate);
        }
        p.children.insert(name.to_string());
        self.data_size += java_len(path) + data_len(&node.data);
        self.index(path, node.owner, true);
        if let Some(sum) = &mut self.digest {
            node.digest = digest::node_digest(path, &node);
            *sum = sum.wrapping_add(node.digest);
        }
        self.nodes.insert(path.to_string(), node);
        Ok(())
    }

    /// Hangs a node under its parent, which must exist, and indexes it.
    pub(super) fn attach(&mut self, path: &str, node: Node) {
        let (parent, name) = path::split(path);
        self.nodes
            .get_mut(parent)
            .expect("parent exists")
            .children
            .insert(name.to_string());
        self.data_size += java_len(path) + data_len(&node.data);
        self.index(path, node.owner, true);
        self.nodes.insert(path.to_string(), node);
        self.rehash(path);
    }

    /// Takes a node out of the tree and its indexes (its children, if any, stay: callers
    /// detach them first).
    pub(super) fn detach(&mut self, path: &str) -> Node {
        self.unhash(path);
        let node = self.nodes.remove(path).expect("node exists");
        let (parent, name) = path::split(path);
        if let Some(p) = self.nodes.get_mut(parent) {
            p.children.remove(name);
        }
        self.data_size -= java_len(path) + data_len(&node.data);
        self.index(path, node.owner, false);
        node
    }

    fn touch_parent(&mut self, path: &str, zxid: i64, created: bool, undo: &mut Vec<Undo>) {
        let (parent, _) = path::split(path);
        self.unhash(parent);
        let p = self.nodes.get_mut(parent).expect("parent exists");
        undo.push(Undo::ParentMeta {
            path: parent.to_string(),
            creates: p.creates,
            pzxid: p.pzxid,
        });
        if created {
            p.creates = p.creates.wrapping_add(1);
        }
        p.pzxid = zxid;
        self.rehash(parent);
    }

    /// Creates a node whose parent exists and which does not (checked by the caller).
    pub fn create(
        &mut self,
        path: &str,
        data: Option<Vec<u8>>,
        acl: Vec<Acl>,
        owner: Owner,
        (zxid, time): (i64, i64),
        undo: &mut Vec<Undo>,
    ) {
        self.touch_parent(path, zxid, true, undo);
        self.attach(path, Node::new(data, acl, zxid, time, owner));
        undo.push(Undo::Created(path.to_string()));
    }

    /// Deletes a childless node (checked by the caller), returning its ACL for event filtering.
    pub fn delete(&mut self, path: &str, zxid: i64, undo: &mut Vec<Undo>) -> Vec<Acl> {
        self.touch_parent(path, zxid, false, undo);
        let node = self.detach(path);
        let acl = node.acl.clone();
        undo.push(Undo::Deleted(path.to_string(), node));
        acl
    }

    /// Replaces a node's data: version +1, mzxid and mtime updated (docs/protocol.md §6.4).
    pub fn set_data(
        &mut self,
        path: &str,
        data: Option<Vec<u8>>,
        (zxid, time): (i64, i64),
        undo: &mut Vec<Undo>,
    ) {
        self.unhash(path);
        let node = self.nodes.get_mut(path).expect("node exists");
        self.data_size = self.data_size + data_len(&data) - data_len(&node.data);
        let old = std::mem::replace(&mut node.data, data);
        undo.push(Undo::Data {
            path: path.to_string(),
            data: old,
            version: node.version,
            mzxid: node.mzxid,
            mtime: node.mtime,
        });
        node.version = node.version.wrapping_add(1);
        node.mzxid = zxid;
        node.mtime = time;
        self.rehash(path);
    }

    /// Replaces a node's data as a logged setData does: version, mzxid and mtime as given.
    /// False if there is no such node.
    pub fn replace_data(
        &mut self,
        path: &str,
        data: Option<Vec<u8>>,
        stat: (i32, i64, i64),
    ) -> bool {
        let Some(node) = self.nodes.get(path) else {
            return false;
        };
        self.data_size = self.data_size + data_len(&data) - data_len(&node.data);
        let (version, mzxid, mtime) = stat;
        self.update(path, |node| {
            node.data = data;
            node.version = version;
            node.mzxid = mzxid;
            node.mtime = mtime;
        })
    }

    /// Replaces a node's ACL and ACL version (setACL). False if there is no such node.
    pub fn set_acl(&mut self, path: &str, acl: Vec<Acl>, aversion: i32) -> bool {
        self.update(path, |node| {
            node.acl = acl;
            node.aversion = aversion;
        })
    }

    /// Reverses mutations, newest first.
    pub fn rollback(&mut self, undo: Vec<Undo>) {
        for step in undo.into_iter().rev() {
            match step {
                Undo::Created(path) => {
                    self.detach(&path);
                }
                Undo::Deleted(path, node) => self.attach(&path, node),
                Undo::ParentMeta {
                    path,
                    creates,
                    pzxid,
                } => {
                    self.update(&path, |node| {
                        node.creates = creates;
                        node.pzxid = pzxid;
                    });
                }
                Undo::Data {
                    path,
                    data,
                    version,
                    mzxid,
                    mtime,
                } => {
                    self.replace_data(&path, data, (version, mzxid, mtime));
                }
            }
        }
    }
}
