//! A node's children: their arena indexes sorted by name, with the jute wire form of the
//! names cached for getChildren.
//!
//! The names themselves live once, in the child nodes; every operation that orders takes a
//! `name_of` lookup into the arena. The indexes are kept in chunks of at most [`CHUNK`], so an
//! insert or remove moves at most one chunk (a flat sorted vector moves half of a million-child
//! folder each time) and the chunks are found by binary search on their last names.
//!
//! Each chunk's last name also has a [`Fence`] here: its first eight bytes as a number. Most
//! comparisons in the search over chunks then read this one small array instead of a child
//! node somewhere in the arena; only chunks whose fence ties with the name are compared by
//! name. A fence orders as the name does, because a name never holds a zero byte (path
//! validation refuses NUL), so padding a short name with zeros cannot reorder it.
//!
//! Invariants: the concatenation of the chunks is sorted by name (byte order, as ZooKeeper's
//! sorted reply lists them) without duplicates; no chunk is empty or longer than [`CHUNK`];
//! `fences[c]` is the fence of the last name of `chunks[c]`, for every `c`;
//! `len` is the total; the cached wire form, when present, is exactly the encoding of the
//! names, and every change of them drops it.

use shepherd_protocol::Codec;

/// Most indexes in one chunk: 2 KiB to move on an insert, and a million children in 2 000
/// chunks.
const CHUNK: usize = 512;

/// A node's children, sorted by name, with their wire form kept for getChildren.
///
/// In a herd every release wakes ~N waiters that each re-read the same unchanged list, so the
/// jute vector (count, then each name) is built once per change of the list instead of once
/// per read.
#[derive(Debug, Clone, Default)]
pub(crate) struct Children {
    chunks: Vec<Vec<u32>>,
    /// One per chunk: the [`Fence`] of its last name.
    fences: Vec<Fence>,
    len: usize,
    /// The encoded `vector<ustring>` of the names; `None` until asked for after a change.
    wire: Option<Box<[u8]>>,
}

/// A name's first eight bytes, big-endian, zero-padded: ordered as the names are, except that
/// names sharing those bytes tie.
type Fence = u64;

fn fence(name: &[u8]) -> Fence {
    let mut bytes = [0; 8];
    let n = name.len().min(8);
    bytes[..n].copy_from_slice(&name[..n]);
    Fence::from_be_bytes(bytes)
}

/// A place in the name order: chunk, and position in it.
pub(crate) type Pos = (usize, usize);

/// Where a name is (`Ok`), or would go (`Err`).
type Place = Result<Pos, Pos>;

impl Children {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Children holding `indexes`, given in any order, sorted once: what a restore builds for
    /// each parent once it has all of the parent's nodes. A snapshot ZooKeeper wrote lists a
    /// folder's children in hash order, and putting each in its place as it comes costs a
    /// search among names scattered over the arena; here the names are compared by their first
    /// sixteen bytes, held beside the indexes, and read whole only where those tie. The names
    /// must be distinct: the caller's path index refuses a second node of one path before it
    /// gets here.
    pub fn from_unsorted<'a>(indexes: Vec<u32>, name_of: impl Fn(u32) -> &'a [u8]) -> Children {
        /// A name's first sixteen bytes, zero-padded: ordered as the names are, ties aside
        /// (a name holds no zero byte, as for [`Fence`]).
        fn prefix(name: &[u8]) -> u128 {
            let mut bytes = [0; 16];
            let n = name.len().min(16);
            bytes[..n].copy_from_slice(&name[..n]);
            u128::from_be_bytes(bytes)
        }
        let mut keyed: Vec<(u128, u32)> = indexes
            .into_iter()
            .map(|i| (prefix(name_of(i)), i))
            .collect();
        keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| name_of(a.1).cmp(name_of(b.1))));
        debug_assert!(
            keyed
                .windows(2)
                .all(|w| w[0].0 != w[1].0 || name_of(w[0].1) != name_of(w[1].1)),
            "two children of one name"
        );
        let mut children = Children {
            len: keyed.len(),
            ..Children::default()
        };
        for chunk in keyed.chunks(CHUNK) {
            let chunk: Vec<u32> = chunk.iter().map(|&(_, i)| i).collect();
            if let Some(&last) = chunk.last() {
                children.fences.push(fence(name_of(last)));
                children.chunks.push(chunk);
            }
        }
        children
    }

    /// The wire form [`Children::wire`] built, unless a change dropped it since.
    pub fn cached_wire(&self) -> Option<&[u8]> {
        self.wire.as_deref()
    }

    fn locate<'a>(&self, name: &[u8], name_of: impl Fn(u32) -> &'a [u8]) -> Place {
        let (Some(&last_fence), Some(&last)) = (
            self.fences.last(),
            self.chunks.last().and_then(|c| c.last()),
        ) else {
            return Err((0, 0));
        };
        let key = fence(name);
        // Appending in order (a restore, sequential nodes) costs one comparison.
        if last_fence < key || (last_fence == key && name_of(last) < name) {
            let c = self.chunks.len() - 1;
            return Err((c, self.chunks[c].len()));
        }
        // The first chunk whose last name is not below `name`: past every smaller fence, then
        // by name among the chunks whose fence ties.
        let low = self.fences.partition_point(|&f| f < key);
        let ties = self.fences[low..].partition_point(|&f| f == key);
        let c = low
            + self.chunks[low..low + ties]
                .partition_point(|chunk| chunk.last().is_some_and(|&i| name_of(i) < name));
        match self.chunks[c].binary_search_by(|&i| name_of(i).cmp(name)) {
            Ok(at) => Ok((c, at)),
            Err(at) => Err((c, at)),
        }
    }

    /// Sets the fence of chunk `c` from its last name.
    fn refence<'a>(&mut self, c: usize, name_of: impl Fn(u32) -> &'a [u8]) {
        if let Some(&last) = self.chunks[c].last() {
            self.fences[c] = fence(name_of(last));
        }
    }

    /// The index of the child called `name`: two binary searches, never a scan.
    pub fn find<'a>(&self, name: &[u8], name_of: impl Fn(u32) -> &'a [u8]) -> Option<u32> {
        let (c, at) = self.locate(name, name_of).ok()?;
        Some(self.chunks[c][at])
    }

    /// Adds `index` under `name`; false (nothing changed) if a child has that name.
    pub fn insert<'a>(
        &mut self,
        index: u32,
        name: &[u8],
        name_of: impl Fn(u32) -> &'a [u8],
    ) -> bool {
        let (c, at) = match self.locate(name, &name_of) {
            Ok(_) => return false,
            Err(place) => place,
        };
        self.wire = None;
        self.len += 1;
        if self.chunks.is_empty() {
            self.chunks.push(vec![index]);
            self.fences.push(fence(name));
            return true;
        }
        let last = c + 1 == self.chunks.len();
        let chunk = &mut self.chunks[c];
        if chunk.len() < CHUNK {
            chunk.insert(at, index);
            if at + 1 == chunk.len() {
                self.fences[c] = fence(name);
            }
        } else if last && at == chunk.len() {
            // Appending past a full last chunk starts a new one, so names that arrive in
            // order fill their chunks instead of leaving each half empty.
            let mut next = Vec::with_capacity(CHUNK);
            next.push(index);
            self.chunks.push(next);
            self.fences.push(fence(name));
        } else {
            let mut tail = chunk.split_off(CHUNK / 2);
            if at <= CHUNK / 2 {
                chunk.insert(at, index);
            } else {
                tail.insert(at - CHUNK / 2, index);
            }
            self.chunks.insert(c + 1, tail);
            self.fences.insert(c + 1, 0);
            self.refence(c, &name_of);
            self.refence(c + 1, name_of);
        }
        true
    }

    /// Removes the child called `name`, returning its index.
    pub fn remove<'a>(&mut self, name: &[u8], name_of: impl Fn(u32) -> &'a [u8]) -> Option<u32> {
        let (c, at) = self.locate(name, &name_of).ok()?;
        self.wire = None;
        self.len -= 1;
        let index = self.chunks[c].remove(at);
        if self.chunks[c].is_empty() {
            self.chunks.remove(c);
            self.fences.remove(c);
        } else if at == self.chunks[c].len() {
            self.refence(c, name_of);
        }
        Some(index)
    }

    /// The indexes, in name order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.chunks.iter().flatten().copied()
    }

    /// The place of the first name after `name` (of the first name, for `None`), for
    /// [`Children::iter_from`].
    pub fn place_after<'a>(&self, name: Option<&[u8]>, name_of: impl Fn(u32) -> &'a [u8]) -> Pos {
        match name.map(|n| self.locate(n, name_of)) {
            None => (0, 0),
            Some(Ok((c, at))) => (c, at + 1),
            Some(Err(place)) => place,
        }
    }

    /// The indexes from `place` on, in name order, each with its own place: the place after
    /// one is `(c, at + 1)`, which goes on to the next chunk where a chunk ends. A place is
    /// good only until the next change of the list.
    pub fn iter_from(&self, (c, at): Pos) -> impl Iterator<Item = (Pos, u32)> + '_ {
        // Sliced, not skipped: a skip would step over the chunks before `c` on every call.
        let rest = self.chunks.get(c..).unwrap_or(&[]);
        rest.iter().enumerate().flat_map(move |(d, chunk)| {
            let from = if d == 0 { at.min(chunk.len()) } else { 0 };
            chunk[from..]
                .iter()
                .enumerate()
                .map(move |(j, &i)| ((c + d, from + j), i))
        })
    }

    /// The names as a jute `vector<ustring>`, exactly as `Vec<String>::encode` writes them.
    pub fn wire<'a>(&mut self, name_of: impl Fn(u32) -> &'a [u8]) -> &[u8] {
        let (chunks, len) = (&self.chunks, self.len);
        self.wire.get_or_insert_with(|| {
            let names = chunks.iter().flatten().map(|&i| name_of(i));
            let size = 4 + names.clone().map(|n| 4 + n.len()).sum::<usize>();
            let mut buf = Vec::with_capacity(size);
            i32::try_from(len).unwrap_or(i32::MAX).encode(&mut buf);
            for name in names {
                i32::try_from(name.len())
                    .unwrap_or(i32::MAX)
                    .encode(&mut buf);
                buf.extend_from_slice(name);
            }
            buf.into_boxed_slice()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `count` names from `name` of a number, in a scrambled order.
    fn scrambled(count: usize, name: impl Fn(usize) -> String) -> Vec<String> {
        (0..count).map(|i| name((i * 7919) % count)).collect()
    }

    /// Children holding every one of `names`, child `i` named `names[i]`.
    fn filled(names: &[String]) -> Children {
        let mut c = Children::default();
        for (i, n) in names.iter().enumerate() {
            assert!(c.insert(i as u32, n.as_bytes(), |j| names[j as usize].as_bytes()));
        }
        c
    }

    /// The invariants on chunks and fences.
    fn assert_chunks(c: &Children, names: &[String]) {
        assert!(c.chunks.iter().all(|k| !k.is_empty() && k.len() <= CHUNK));
        let fenced = c.chunks.iter().zip(&c.fences);
        assert!(
            fenced
                .into_iter()
                .all(|(k, &f)| f == fence(names[k[k.len() - 1] as usize].as_bytes()))
        );
    }

    #[test]
    fn stays_sorted_across_splits_appends_and_removals() {
        let names = scrambled(3000, |i| format!("n{i:05}"));
        let name_of = |i: u32| names[i as usize].as_bytes();
        let mut c = filled(&names);
        assert!(!c.insert(0, names[0].as_bytes(), name_of));
        assert_eq!(c.len(), 3000);
        let sorted: Vec<&[u8]> = c.iter().map(name_of).collect();
        assert!(sorted.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            c.find(b"n00042", name_of).map(name_of),
            Some(&b"n00042"[..])
        );
        let after: Vec<&[u8]> = c
            .iter_from(c.place_after(Some(b"n02997x"), name_of))
            .map(|(_, i)| name_of(i))
            .collect();
        assert_eq!(after, [&b"n02998"[..], b"n02999"]);
        // Every place iter_from gives resumes right after its own name, across chunk ends.
        for (place, i) in c.iter_from((0, 0)).step_by(97) {
            let next = c.iter_from((place.0, place.1 + 1)).next().map(|(_, j)| j);
            let by_name = c.iter_from(c.place_after(Some(name_of(i)), name_of)).next();
            assert_eq!(next, by_name.map(|(_, j)| j));
        }
        for n in names.iter().step_by(2) {
            assert!(c.remove(n.as_bytes(), name_of).is_some());
        }
        assert_eq!(c.remove(b"missing", name_of), None);
        assert_eq!(c.len(), 1500);
        assert_chunks(&c, &names);
        let expected: Vec<String> = c.iter().map(|i| names[i as usize].clone()).collect();
        assert_eq!(c.wire(name_of), &expected.to_bytes()[..]);
    }

    /// Built at once from any order, the children are those inserted one by one: the same
    /// order, chunks and fences.
    #[test]
    fn sorted_once_is_inserted_one_by_one() {
        for names in [
            scrambled(3000, |i| format!("n{i:05}")),
            scrambled(1500, |i| format!("lock-0000000000{i:06}")),
            scrambled(7, |i| format!("{i}")),
        ] {
            let name_of = |i: u32| names[i as usize].as_bytes();
            let indexes: Vec<u32> = (0..names.len() as u32).collect();
            let built = Children::from_unsorted(indexes, name_of);
            let one_by_one = filled(&names);
            assert_eq!(built.len(), one_by_one.len());
            assert!(built.iter().eq(one_by_one.iter()));
            assert_chunks(&built, &names);
        }
        let none = Children::from_unsorted(Vec::new(), |_| &b""[..]);
        assert!(none.is_empty());
    }

    /// Two children of one name are the caller's bug; a debug build says so.
    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "two children of one name")]
    fn sorted_once_refuses_a_twin_in_debug_builds() {
        let names = ["a", "b", "a"];
        Children::from_unsorted(vec![0, 1, 2], |i| names[i as usize].as_bytes());
    }

    #[test]
    fn names_that_tie_on_their_fence_keep_their_order() {
        // Every name shares its first eight bytes, as sequential nodes of a lock do: every
        // chunk's fence ties, and the search falls back to names throughout.
        let names = scrambled(2000, |i| format!("lock-0000{i:06}"));
        let name_of = |i: u32| names[i as usize].as_bytes();
        let mut c = filled(&names);
        let mut model: std::collections::BTreeSet<&[u8]> =
            names.iter().map(|n| n.as_bytes()).collect();
        for n in names.iter().skip(1).step_by(3) {
            assert!(c.remove(n.as_bytes(), name_of).is_some());
            model.remove(n.as_bytes());
        }
        let listed: Vec<&[u8]> = c.iter().map(name_of).collect();
        assert_eq!(listed, model.iter().copied().collect::<Vec<_>>());
        for n in &names {
            assert_eq!(
                c.find(n.as_bytes(), name_of).is_some(),
                model.contains(n.as_bytes())
            );
        }
        assert_chunks(&c, &names);
    }
}
