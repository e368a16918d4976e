//! A node's child names, sorted, with their jute wire form cached for getChildren.
//!
//! Invariant: the cached wire form, when present, is exactly the encoding of the names; it is
//! dropped by every change of them.

use std::collections::BTreeSet;

use shepherd_protocol::Codec;

/// A node's child names, sorted, with their wire form kept for getChildren.
///
/// In a herd every release wakes ~N waiters that each re-read the same unchanged list, so the
/// jute vector (count, then each name) is built once per change of the list instead of once per
/// read; a read then costs one copy instead of one allocation per name. The names can only
/// change through [`Children::insert`] and [`Children::remove`], which drop the cached form, so
/// it can never disagree with them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Children {
    names: BTreeSet<String>,
    /// The encoded `vector<ustring>` of `names`; `None` until asked for after a change.
    wire: Option<Vec<u8>>,
}

impl Children {
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether `name` is a child: a set lookup, never a scan (replay asks once per create).
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The names, sorted (byte order, as ZooKeeper's sorted reply lists them).
    pub fn iter(&self) -> std::collections::btree_set::Iter<'_, String> {
        self.names.iter()
    }

    /// The names after `name` (all of them for `None`), in order.
    pub fn iter_after(&self, name: Option<&str>) -> impl Iterator<Item = &String> {
        use std::ops::Bound::{Excluded, Unbounded};
        let from = name.map_or(Unbounded, Excluded);
        self.names.range::<str, _>((from, Unbounded))
    }

    pub(super) fn insert(&mut self, name: String) {
        if self.names.insert(name) {
            self.wire = None;
        }
    }

    pub(super) fn remove(&mut self, name: &str) {
        if self.names.remove(name) {
            self.wire = None;
        }
    }

    /// The names as a jute `vector<ustring>`, exactly as `Vec<String>::encode` writes them.
    pub fn wire(&mut self) -> &[u8] {
        let names = &self.names;
        self.wire.get_or_insert_with(|| {
            let len = 4 + names.iter().map(|n| 4 + n.len()).sum::<usize>();
            let mut buf = Vec::with_capacity(len);
            i32::try_from(names.len())
                .unwrap_or(i32::MAX)
                .encode(&mut buf);
            for name in names {
                name.encode(&mut buf);
            }
            buf
        })
    }
}
