//! The tree's mutations as requests make them: each records how to undo itself, so that a
//! failed multi rolls back exactly (docs/protocol.md §10.3).
//!
//! Invariants: every mutation keeps the tree digest, the data size and the kind indexes as
//! `mod.rs` states them; an [`Undo`] list applied newest first restores the tree exactly,
//! Stat fields and child order included.

use shepherd_protocol::{Acl, Stat};

use super::{Node, Owner, Tree};
use crate::acl_table::AclRef;
use crate::path;
use crate::short::Value;

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
        data: Value,
        version: i32,
        mzxid: i64,
        mtime: i64,
    },
}

impl Tree {
    /// Moves the parent's pzxid (and its create counter, for a create) before a child of
    /// `path` is added or removed, returning the parent's index.
    fn touch_parent(&mut self, path: &str, zxid: i64, created: bool, undo: &mut Vec<Undo>) -> u32 {
        let (parent, _) = path::split(path);
        let i = self.lookup(parent).expect("parent exists");
        self.unhash(i);
        let p = self.nodes.get_mut(i).expect("parent exists");
        undo.push(Undo::ParentMeta {
            path: parent.to_string(),
            creates: p.creates,
            pzxid: p.pzxid,
        });
        if created {
            p.creates = p.creates.wrapping_add(1);
        }
        p.pzxid = zxid;
        self.rehash(i, parent);
        i
    }

    /// Creates a node whose parent exists and which does not (checked by the caller), and
    /// returns its Stat and its interned ACL (for the reply and the events).
    pub fn create(
        &mut self,
        path: &str,
        data: Option<Vec<u8>>,
        acl: Vec<Acl>,
        owner: Owner,
        (zxid, time): (i64, i64),
        undo: &mut Vec<Undo>,
    ) -> (Stat, AclRef) {
        let acl = self.acls.intern(acl);
        let parent = self.touch_parent(path, zxid, true, undo);
        let node = Node::new(data, acl.clone(), zxid, time, owner);
        // Linking names and hangs the node; no Stat field changes.
        let stat = node.stat();
        self.attach_under(parent, path, node);
        undo.push(Undo::Created(path.to_string()));
        (stat, acl)
    }

    /// Deletes a childless node (checked by the caller), returning its ACL for event filtering.
    pub fn delete(&mut self, path: &str, zxid: i64, undo: &mut Vec<Undo>) -> AclRef {
        self.touch_parent(path, zxid, false, undo);
        let node = self.detach(path);
        let acl = node.acl_ref().clone();
        undo.push(Undo::Deleted(path.to_string(), node));
        acl
    }

    /// Replaces a node's data: version +1, mzxid and mtime updated (docs/protocol.md §6.4).
    /// Returns the node's new Stat.
    pub fn set_data(
        &mut self,
        path: &str,
        data: Option<Vec<u8>>,
        (zxid, time): (i64, i64),
        undo: &mut Vec<Undo>,
    ) -> Stat {
        let i = self.lookup(path).expect("node exists");
        self.unhash(i);
        let node = self.nodes.get_mut(i).expect("node exists");
        let data = Value::new(data);
        self.data_size = self.data_size + data.len() as u64 - node.data.len() as u64;
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
        let stat = node.stat();
        self.rehash(i, path);
        stat
    }

    /// Replaces a node's data as a logged setData does: version, mzxid and mtime as given.
    /// False if there is no such node.
    pub fn replace_data(
        &mut self,
        path: &str,
        data: Option<Vec<u8>>,
        stat: (i32, i64, i64),
    ) -> bool {
        self.replace_value(path, Value::new(data), stat)
    }

    fn replace_value(&mut self, path: &str, data: Value, stat: (i32, i64, i64)) -> bool {
        let Some(node) = self.get(path) else {
            return false;
        };
        self.data_size = self.data_size + data.len() as u64 - node.data.len() as u64;
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
        if self.lookup(path).is_none() {
            return false;
        }
        let acl = self.acls.intern(acl);
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
                    self.replace_value(&path, data, (version, mzxid, mtime));
                }
            }
        }
    }
}
