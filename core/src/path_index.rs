//! Finding a node's arena index by its full path, without storing the path.
//!
//! A hash table of (index, 32 bits of the path's hash): eight bytes a node, where a table
//! keyed by path strings held a heap string (and, before the arena, the whole node). Whether an
//! entry is the path asked for is decided by the caller, walking the node's name and its
//! ancestors' names back to the root. Keeping the hash in the entry lets the table grow
//! without touching a node: at a million nodes a doubling copies 16 MB of entries instead of
//! every node.
//!
//! Invariants: the hash is aHash, randomly keyed per process (paths come from clients, so a
//! chosen-collision flood must not be possible); an entry's hash is that of its node's path;
//! each node is in the table once, the root never (callers find it directly).

use hashbrown::HashTable;

#[derive(Debug, Clone, Copy)]
struct Entry {
    node: u32,
    hash: u32,
}

/// Arena indexes by path hash.
#[derive(Debug, Clone, Default)]
pub(crate) struct PathIndex {
    table: HashTable<Entry>,
    state: ahash::RandomState,
}

/// The table's 64-bit hash from the 32 stored: multiplied by an odd constant so that the high
/// bits hashbrown tags its slots with depend on all of them.
fn spread(hash: u32) -> u64 {
    u64::from(hash).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl PathIndex {
    /// The stored hash of a path.
    pub fn hash(&self, path: &str) -> u32 {
        (self.state.hash_one(path.as_bytes()) >> 32) as u32
    }

    /// The node whose path has this hash and for which `is` holds.
    pub fn find(&self, hash: u32, mut is: impl FnMut(u32) -> bool) -> Option<u32> {
        self.table
            .find(spread(hash), |e| e.hash == hash && is(e.node))
            .map(|e| e.node)
    }

    /// Adds a node (the caller has checked that its path is not there yet).
    pub fn insert(&mut self, hash: u32, node: u32) {
        self.table
            .insert_unique(spread(hash), Entry { node, hash }, |e| spread(e.hash));
    }

    /// Removes a node, found by its path's hash.
    pub fn remove(&mut self, hash: u32, node: u32) {
        if let Ok(entry) = self.table.find_entry(spread(hash), |e| e.node == node) {
            entry.remove();
        }
    }
}
