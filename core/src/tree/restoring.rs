//! A restore's attach: nodes hung under their parents as a snapshot lists them, and the
//! parents' child lists built once at the end.
//!
//! A snapshot lists every node after its parent, but a folder's children in no useful order
//! (ZooKeeper writes them in its hash set's order). Putting each child in its sorted place as
//! it comes costs a search among names scattered over the arena, a third of recovering a
//! million-node directory ZooKeeper wrote. So a restored node is stored and indexed at once
//! (its path resolves, its digest counts), and only its place in the parent's child list
//! waits: [`Tree::finish_restore`] sorts each parent's children in one go.
//!
//! Invariants: between the first [`Tree::attach_restored`] and [`Tree::finish_restore`],
//! every restored node's (parent, index) is in `restored` and in no child list, and nothing
//! reads a child list (a restore only looks paths up, through the path index); after it,
//! `restored` is empty and the tree keeps the module invariants. Nodes attached otherwise
//! (`attach`) go to their child list at once, so the system nodes are added after the finish.

use super::super::children::Children;
use super::super::path;
use super::{Refused, Tree, name_of};

impl Tree {
    /// Hangs a restored node under its parent with one lookup of each (a million-node
    /// restore does this a million times, mostly under the parent of the one before):
    /// refused, changing nothing, when the parent is missing or a node of that path is
    /// already there.
    pub(in super::super) fn attach_restored(
        &mut self,
        path: &str,
        node: super::Node,
    ) -> Result<(), Refused> {
        let (parent, name) = path::split(path);
        let cached = match &self.last_parent {
            Some((p, i)) if p == parent => Some(*i),
            _ => None,
        };
        let p = match cached {
            Some(i) => i,
            None => {
                let i = self.lookup(parent).ok_or(Refused::Orphan)?;
                self.last_parent = Some((parent.to_string(), i));
                i
            }
        };
        // A path given twice is refused here, before it is indexed: each copy would share one
        // hash, and every later insert of it probe past all the copies before it.
        let hash = self.index.hash(path);
        if self.index.find(hash, |j| self.is_at(j, path)).is_some() {
            return Err(Refused::Duplicate);
        }
        let i = self.store(p, name, node)?;
        self.restored.push((p, i));
        self.index_new(i, path, hash);
        Ok(())
    }

    /// Puts every restored node in its parent's child list, each list sorted once. No parent
    /// gets two children of one name: [`Tree::attach_restored`] refused the second, and by the
    /// module's invariant nothing was attached otherwise since the restore began.
    pub(in super::super) fn finish_restore(&mut self) {
        let mut restored = std::mem::take(&mut self.restored);
        // By parent; within one, the order does not matter.
        restored.sort_unstable();
        let mut rest = &restored[..];
        while let Some(&(parent, _)) = rest.first() {
            let n = rest.partition_point(|&(p, _)| p == parent);
            let (group, after) = rest.split_at(n);
            rest = after;
            let mut indexes: Vec<u32> = group.iter().map(|&(_, i)| i).collect();
            // A parent that already had children (none in a restore, but keep them if so).
            if let Some(kids) = self.nodes.get_mut(parent).and_then(|p| p.children.take()) {
                indexes.extend(kids.iter());
            }
            let kids = Children::from_unsorted(indexes, name_of(&self.nodes));
            if let Some(p) = self.nodes.get_mut(parent) {
                p.children = (!kids.is_empty()).then(|| Box::new(kids));
            }
        }
    }
}
