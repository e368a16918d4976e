//! Short byte strings kept inside the node instead of behind a pointer: a znode's data
//! ([`Value`]) and its name ([`Name`]).
//!
//! Most znodes hold a few bytes (lock and election nodes hold none, counters and ids a
//! dozen) under a short name, so a heap allocation for each costs more than the bytes: a
//! pointer and length (16 B) plus the allocator's chunk (32 B at least). Up to [`INLINE`]
//! bytes live in the node itself; longer ones in one exact-size boxed slice.
//!
//! Invariants: an inline string's `len` is at most [`INLINE`] and only `buf[..len]` is
//! meaningful; a [`Name`] holds the bytes of a `&str` it was made from, whole, so they are
//! always valid UTF-8; `Value::Absent` is Java's `null` data, distinct from an empty array.

/// The longest string kept inline: what fits, with its length and the enum's tag, in the
/// 24 bytes a boxed slice and the tag take anyway.
pub(crate) const INLINE: usize = 22;

/// A znode's data: absent (`null`), inline, or boxed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    /// Java's `null` data.
    Absent,
    /// At most [`INLINE`] bytes.
    Inline { len: u8, buf: [u8; INLINE] },
    /// More than [`INLINE`] bytes.
    Heap(Box<[u8]>),
}

impl Value {
    /// The data as clients send and see it.
    pub fn new(data: Option<Vec<u8>>) -> Value {
        match data {
            None => Value::Absent,
            Some(bytes) if bytes.len() <= INLINE => Value::inline(&bytes),
            Some(bytes) => Value::Heap(bytes.into_boxed_slice()),
        }
    }

    fn inline(bytes: &[u8]) -> Value {
        let mut buf = [0; INLINE];
        buf[..bytes.len()].copy_from_slice(bytes);
        Value::Inline {
            len: bytes.len() as u8,
            buf,
        }
    }

    /// The bytes, `None` for `null` data.
    pub fn get(&self) -> Option<&[u8]> {
        match self {
            Value::Absent => None,
            Value::Inline { len, buf } => Some(&buf[..usize::from(*len)]),
            Value::Heap(bytes) => Some(bytes),
        }
    }

    /// The length in bytes (0 for `null`).
    pub fn len(&self) -> usize {
        self.get().map_or(0, <[u8]>::len)
    }

    /// A copy, as the protocol's `Option<Vec<u8>>`.
    pub fn to_option(&self) -> Option<Vec<u8>> {
        self.get().map(<[u8]>::to_vec)
    }
}

/// A znode's name (the last path segment; empty for the root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Name {
    /// At most [`INLINE`] bytes of UTF-8.
    Inline { len: u8, buf: [u8; INLINE] },
    /// More than [`INLINE`] bytes.
    Heap(Box<str>),
}

impl Name {
    pub fn new(name: &str) -> Name {
        if name.len() <= INLINE {
            let mut buf = [0; INLINE];
            buf[..name.len()].copy_from_slice(name.as_bytes());
            Name::Inline {
                len: name.len() as u8,
                buf,
            }
        } else {
            Name::Heap(name.into())
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Name::Inline { len, buf } => &buf[..usize::from(*len)],
            Name::Heap(name) => name.as_bytes(),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            // Made whole from a `&str` (see the invariants), so this never fails.
            Name::Inline { len, buf } => {
                std::str::from_utf8(&buf[..usize::from(*len)]).unwrap_or("")
            }
            Name::Heap(name) => name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_names_round_trip_at_every_size_around_the_inline_limit() {
        assert_eq!(std::mem::size_of::<Value>(), 24);
        assert_eq!(std::mem::size_of::<Name>(), 24);
        assert_eq!(Value::new(None).get(), None);
        assert_eq!(Value::new(Some(vec![])).get(), Some(&[][..]));
        for n in [0, 1, INLINE - 1, INLINE, INLINE + 1, 1000] {
            let bytes: Vec<u8> = (0..n).map(|i| i as u8).collect();
            let v = Value::new(Some(bytes.clone()));
            assert_eq!(v.get(), Some(&bytes[..]));
            assert_eq!(v.len(), n);
            assert_eq!(v.to_option(), Some(bytes));
            let s: String = "é".repeat(n / 2) + &"x".repeat(n % 2);
            assert_eq!(Name::new(&s).as_str(), s);
        }
    }
}
