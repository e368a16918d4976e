//! Interned ACL lists: every node holds a shared reference to one copy of its list, as
//! ZooKeeper 3.8's `ReferenceCountedACLCache` stores one long per node instead of a list.
//!
//! A tree holds few distinct lists (most nodes have `OPEN_ACL_UNSAFE` or their creator's),
//! so a per-node copy (a vector and two heap strings per entry) was a large share of a
//! znode's memory.
//!
//! Invariants: the table holds at most one list of each content; a list a node references is
//! never changed (references are shared, so a node's ACL changes by pointing at another
//! list). Lists no node references any more are dropped the next time the table has grown to
//! twice its size after the last sweep, so the table stays within a constant factor of the
//! lists in use.

use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

use hashbrown::HashTable;
use shepherd_protocol::Acl;

/// A shared, immutable ACL list.
pub(crate) type AclRef = Arc<Vec<Acl>>;

/// The table of distinct ACL lists.
#[derive(Debug, Clone)]
pub(crate) struct AclTable {
    lists: HashTable<AclRef>,
    /// aHash, randomly keyed: lists come from clients.
    state: ahash::RandomState,
    /// Sweep unreferenced lists when the table reaches this size.
    sweep_at: usize,
    /// `OPEN_ACL_UNSAFE`, which most nodes have: restore and the system nodes take it
    /// without hashing.
    open: AclRef,
}

impl Default for AclTable {
    fn default() -> Self {
        AclTable::new()
    }
}

const FIRST_SWEEP: usize = 64;

fn hash_list(state: &ahash::RandomState, acl: &[Acl]) -> u64 {
    let mut h = state.build_hasher();
    acl.len().hash(&mut h);
    for entry in acl {
        entry.perms.hash(&mut h);
        entry.id.hash(&mut h);
    }
    h.finish()
}

impl AclTable {
    pub fn new() -> AclTable {
        let mut table = AclTable {
            lists: HashTable::new(),
            state: ahash::RandomState::new(),
            sweep_at: FIRST_SWEEP,
            open: Arc::new(Acl::open_unsafe()),
        };
        let open = table.open.clone();
        let hash = table.hash(&open);
        table.lists.insert_unique(hash, open, |_| hash);
        table
    }

    fn hash(&self, acl: &[Acl]) -> u64 {
        hash_list(&self.state, acl)
    }

    /// `OPEN_ACL_UNSAFE`.
    pub fn open_unsafe(&self) -> AclRef {
        self.open.clone()
    }

    /// The shared copy of `acl`, made if the table has none.
    pub fn intern(&mut self, acl: Vec<Acl>) -> AclRef {
        let hash = self.hash(&acl);
        if let Some(found) = self.lists.find(hash, |l| **l == acl) {
            return found.clone();
        }
        if self.lists.len() >= self.sweep_at {
            // Only the table (and `open`'s field) references a list no node has any more.
            let open = Arc::as_ptr(&self.open);
            self.lists
                .retain(|l| Arc::strong_count(l) > 1 || Arc::as_ptr(l) == open);
            self.sweep_at = (self.lists.len() * 2).max(FIRST_SWEEP);
        }
        let list = Arc::new(acl);
        let state = &self.state;
        self.lists
            .insert_unique(hash, list.clone(), |l| hash_list(state, l));
        list
    }

    /// How many lists the table holds (some perhaps unreferenced until the next sweep).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lists.len()
    }
}

#[cfg(test)]
mod tests {
    use shepherd_protocol::Id;

    use super::*;

    fn digest_acl(user: usize) -> Vec<Acl> {
        vec![Acl {
            perms: 31,
            id: Id::new("digest", format!("u{user}:x")),
        }]
    }

    #[test]
    fn equal_lists_share_one_copy_and_dropped_ones_are_swept() {
        let mut table = AclTable::new();
        let a = table.intern(Acl::open_unsafe());
        assert!(Arc::ptr_eq(&a, &table.open_unsafe()));
        let b1 = table.intern(digest_acl(1));
        let b2 = table.intern(digest_acl(1));
        assert!(Arc::ptr_eq(&b1, &b2));
        // Lists nobody keeps are swept once the table doubles: it stays bounded.
        for user in 2..10_000 {
            drop(table.intern(digest_acl(user)));
        }
        assert!(table.len() < 2 * FIRST_SWEEP + 2, "{}", table.len());
        // Those still referenced survive every sweep.
        assert!(Arc::ptr_eq(&b1, &table.intern(digest_acl(1))));
        assert!(Arc::ptr_eq(&a, &table.intern(Acl::open_unsafe())));
    }
}
