//! The slots znodes live in, addressed by a `u32` index, in fixed-size chunks.
//!
//! Chunks never move once allocated, so growing the arena allocates one more chunk and
//! copies nothing: a million-node tree never stalls requests to move every node, as one
//! contiguous table did each time it doubled. An index is four bytes where a path key was a
//! heap string.
//!
//! Invariants: every chunk has room for exactly [`CHUNK`] slots and only the last one may be
//! partly used; `free` lists exactly the empty slots below `next`, each once; an index handed
//! out stays valid (its value never moves) until it is removed.

/// Slots per chunk: large enough that the chunk table is small, small enough that the slack
/// of the last chunk is negligible next to a large tree (4096 nodes of ~150 B: 600 KB).
const CHUNK_BITS: u32 = 12;
const CHUNK: usize = 1 << CHUNK_BITS;

/// Values addressed by `u32` indexes.
#[derive(Debug, Clone)]
pub(crate) struct Arena<T> {
    chunks: Vec<Vec<Option<T>>>,
    /// Slots below `next` that are empty, the most recently freed last.
    free: Vec<u32>,
    /// Slots ever used: the next fresh index.
    next: u32,
    len: usize,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena {
            chunks: Vec::new(),
            free: Vec::new(),
            next: 0,
            len: 0,
        }
    }
}

fn split(index: u32) -> (usize, usize) {
    ((index >> CHUNK_BITS) as usize, index as usize & (CHUNK - 1))
}

impl<T> Arena<T> {
    /// Stores `value`, reusing the most recently freed slot. `None` when all 2³² indexes are
    /// in use (far beyond any memory this runs in).
    pub fn insert(&mut self, value: T) -> Option<u32> {
        if let Some(index) = self.free.pop() {
            let (c, s) = split(index);
            self.chunks[c][s] = Some(value);
            self.len += 1;
            return Some(index);
        }
        let index = self.next;
        self.next = index.checked_add(1)?;
        let (c, _) = split(index);
        if c == self.chunks.len() {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        self.chunks[c].push(Some(value));
        self.len += 1;
        Some(index)
    }

    /// Takes the value out of its slot, freeing the index.
    pub fn remove(&mut self, index: u32) -> Option<T> {
        let (c, s) = split(index);
        let value = self.chunks.get_mut(c)?.get_mut(s)?.take()?;
        self.free.push(index);
        self.len -= 1;
        Some(value)
    }

    pub fn get(&self, index: u32) -> Option<&T> {
        let (c, s) = split(index);
        self.chunks.get(c)?.get(s)?.as_ref()
    }

    pub fn get_mut(&mut self, index: u32) -> Option<&mut T> {
        let (c, s) = split(index);
        self.chunks.get_mut(c)?.get_mut(s)?.as_mut()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Every value with its index, in index order.
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        self.chunks
            .iter()
            .flatten()
            .enumerate()
            .filter_map(|(i, v)| Some((i as u32, v.as_ref()?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_stay_put_and_freed_slots_are_reused() {
        let mut arena = Arena::default();
        let ids: Vec<u32> = (0..CHUNK * 2 + 3)
            .map(|i| arena.insert(i).unwrap())
            .collect();
        assert_eq!(arena.len(), CHUNK * 2 + 3);
        assert_eq!(arena.get(ids[CHUNK + 1]), Some(&(CHUNK + 1)));
        assert_eq!(arena.remove(ids[5]), Some(5));
        assert_eq!(arena.remove(ids[5]), None);
        assert_eq!(arena.get(ids[5]), None);
        assert_eq!(arena.insert(99), Some(ids[5]));
        assert_eq!(arena.get(u32::MAX), None);
        assert_eq!(arena.iter().count(), CHUNK * 2 + 3);
    }
}
