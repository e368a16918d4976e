//! How a node joins the tree: stored in the arena under its parent, put in the parent's child
//! list, and counted in the path index, the data size, the ephemeral, container and TTL
//! indexes and the digest. A restore does the same but for the child list, which it builds at
//! its end (`restoring.rs`).

use std::collections::BTreeSet;

use super::super::short::Name;
use super::{Node, Owner, Refused, Tree, java_len, name_of};

impl Tree {
    /// Stores `node` as `name` under the node at index `parent` with path `path`: refused,
    /// changing nothing, when the parent has a child of that name.
    pub(super) fn link(
        &mut self,
        parent: u32,
        path: &str,
        name: &str,
        node: Node,
    ) -> Result<u32, Refused> {
        let i = self.store(parent, name, node)?;
        let mut kids = self
            .nodes
            .get_mut(parent)
            .and_then(|p| p.children.take())
            .unwrap_or_default();
        let added = kids.insert(i, name.as_bytes(), name_of(&self.nodes));
        if let Some(p) = self.nodes.get_mut(parent) {
            p.children = (!kids.is_empty()).then_some(kids);
        }
        if !added {
            self.nodes.remove(i);
            return Err(Refused::Duplicate);
        }
        self.index_new(i, path, self.index.hash(path));
        Ok(i)
    }

    /// Puts `node` in the arena as `name` under the node at index `parent`, in no child list
    /// yet.
    pub(super) fn store(
        &mut self,
        parent: u32,
        name: &str,
        mut node: Node,
    ) -> Result<u32, Refused> {
        if self.nodes.get(parent).is_none() {
            return Err(Refused::Orphan);
        }
        node.name = Name::new(name);
        node.parent = parent;
        node.digest = 0;
        self.nodes.insert(node).ok_or(Refused::Duplicate)
    }

    /// Counts a stored node at `path`, whose hash in the path index is `hash`, in that index,
    /// the data size, the kind indexes and the digest.
    pub(super) fn index_new(&mut self, i: u32, path: &str, hash: u32) {
        let Some(node) = self.nodes.get(i) else {
            return;
        };
        let (data_len, owner) = (node.data.len() as u64, node.owner);
        self.index.insert(hash, i);
        self.data_size += java_len(path) + data_len;
        self.index_kind(path, owner, true);
        self.rehash(i, path);
    }

    pub(super) fn index_kind(&mut self, path: &str, owner: Owner, add: bool) {
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
}
