//! Lock families: the kinds of [`LockKind::ALL`] grouped by the lock they contend for, each
//! with its lock path and its shared resource.
//!
//! Invariant: two kinds are in one family exactly when their contenders queue for the same
//! lock (the same folder or node), so the checker may compare their fencing tokens: both wait
//! strategies of a lock, and both halves of a read/write lock. Every family has one resource
//! node that its holders write through [`Guard::write`](shepherd_recipes::Guard::write).

use shepherd_recipes::{LockKind, WaitStrategy};

/// Where every chaos node lives: the lock folders under `ROOT/locks`, the resources under
/// `ROOT/resource`.
pub const ROOT: &str = "/chaos";

/// One lock that several kinds contend for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    /// Short name, for paths and reports.
    pub name: &'static str,
    /// The kinds that take this lock (every one of them is in [`LockKind::ALL`]).
    pub kinds: &'static [LockKind],
    /// Whether the resource is fenced by a token compare-and-set as well as by the guarded
    /// write: needed where the lock node has a fixed name ([`LockKind::Ephemeral`]), since a
    /// node re-created by the next holder passes a stale holder's existence check.
    pub token_cas: bool,
}

use WaitStrategy::{Herd, Predecessor};

/// Every lock of `shepherd-recipes`, by family; together they cover [`LockKind::ALL`].
pub const FAMILIES: [Family; 8] = [
    Family {
        name: "ephemeral",
        kinds: &[LockKind::Ephemeral],
        token_cas: true,
    },
    Family {
        name: "sequential",
        kinds: &[
            LockKind::Sequential(Herd),
            LockKind::Sequential(Predecessor),
        ],
        token_cas: false,
    },
    Family {
        name: "write-lock",
        kinds: &[LockKind::WriteLock],
        token_cas: false,
    },
    Family {
        name: "shared",
        kinds: &[
            LockKind::SharedRead(Herd),
            LockKind::SharedRead(Predecessor),
            LockKind::SharedWrite(Herd),
            LockKind::SharedWrite(Predecessor),
        ],
        token_cas: false,
    },
    Family {
        name: "mutex",
        kinds: &[LockKind::Mutex],
        token_cas: false,
    },
    Family {
        name: "semaphore-mutex",
        kinds: &[LockKind::SemaphoreMutex],
        token_cas: false,
    },
    Family {
        name: "read-write",
        kinds: &[LockKind::RwRead, LockKind::RwWrite],
        token_cas: false,
    },
    Family {
        name: "multi-lock",
        kinds: &[LockKind::MultiLock],
        token_cas: false,
    },
];

impl Family {
    /// The path the family's kinds are built on (see [`LockKind::build`]).
    pub fn lock_path(&self) -> String {
        format!("{ROOT}/locks/{}", self.name)
    }

    /// The node its holders write.
    pub fn resource_path(&self) -> String {
        format!("{ROOT}/resource/{}", self.name)
    }
}

/// Whether holders of `kind` share the lock with each other (a read half).
pub fn is_reader(kind: LockKind) -> bool {
    kind.exclusive() != kind
}

/// The kind worker `index` contends with, and its family's index: the workers are dealt
/// round the kinds of [`LockKind::ALL`], so that every kind has a worker once there are 13.
pub fn assign(index: usize) -> (LockKind, usize) {
    let kind = LockKind::ALL[index % LockKind::ALL.len()];
    let family = FAMILIES
        .iter()
        .position(|f| f.kinds.contains(&kind))
        .unwrap_or(0);
    (kind, family)
}

/// A resource's content: the writer's fencing token and who wrote it, as text
/// (`<czxid>[,<czxid>]|<holder>`), so that `shepherd get` shows it.
pub fn encode_resource(token: &[i64], holder: u64) -> Vec<u8> {
    let tokens: Vec<String> = token.iter().map(i64::to_string).collect();
    format!("{}|{holder}", tokens.join(",")).into_bytes()
}

/// Reads [`encode_resource`]'s form back; `None` for anything else (the empty initial data).
pub fn decode_resource(data: &[u8]) -> Option<(Vec<i64>, u64)> {
    let text = std::str::from_utf8(data).ok()?;
    let (tokens, holder) = text.split_once('|')?;
    let tokens = tokens
        .split(',')
        .map(str::parse)
        .collect::<Result<Vec<i64>, _>>()
        .ok()?;
    Some((tokens, holder.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_cover_every_kind_once() {
        let mut seen: Vec<LockKind> = FAMILIES.iter().flat_map(|f| f.kinds.to_vec()).collect();
        assert_eq!(seen.len(), LockKind::ALL.len());
        seen.dedup();
        for kind in LockKind::ALL {
            assert!(seen.contains(&kind), "{kind:?}");
            // Both halves of a read/write lock are in one family.
            let (_, family) = assign(LockKind::ALL.iter().position(|k| *k == kind).unwrap());
            assert!(FAMILIES[family].kinds.contains(&kind.exclusive()));
        }
    }

    #[test]
    fn resource_round_trips() {
        let data = encode_resource(&[12, 34], 7);
        assert_eq!(decode_resource(&data), Some((vec![12, 34], 7)));
        assert_eq!(decode_resource(b""), None);
    }
}
