//! [`lock_queue`]: the queue of one lock folder as its children's names describe it, for tools
//! that show a lock to a person (`shepherd locks`): who holds it, who waits for whom, and which
//! recipe made each node.
//!
//! Invariants: the queue is read with the rule every sequential recipe of this crate acquires
//! by ([`crate::names`]: order by sequence suffix alone, a writer waits for the last lower
//! contender, a reader for the last lower writer), so what it shows as the holder is what our
//! locks would grant; names without a sequence suffix are not contenders and are left out; the
//! recipe is told from the name's fixed text only, never from a node's data.

use crate::names::{Kind, kind_of, sequence};

/// One contender of a lock folder, as [`lock_queue`] reads it from its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contender {
    /// The child's name.
    pub name: String,
    /// Its sequence suffix (the last ten digits).
    pub sequence: u32,
    /// Whether it asks for a shared (read) lock rather than an exclusive one.
    pub reader: bool,
    /// The recipe whose node layout the name follows: `Curator InterProcessMutex`, `kazoo
    /// ReadLock`, `ZooKeeper WriteLock`, …, or `unknown sequential` for any other name with a
    /// sequence suffix (taken as exclusive, as our locks take it).
    pub recipe: &'static str,
    /// The contender it waits for, or `None` if it holds the lock.
    pub blocked_by: Option<String>,
}

impl Contender {
    /// Whether it holds the lock (nothing lower blocks it).
    pub fn holds(&self) -> bool {
        self.blocked_by.is_none()
    }

    /// Whether its name follows a lock recipe's layout (ours, Curator's, kazoo's, ZooKeeper's
    /// `WriteLock`), rather than being any sequential node (a queue item, a job).
    pub fn is_known_layout(&self) -> bool {
        self.recipe != UNKNOWN
    }
}

/// The recipe a contender name belongs to, by its fixed text (see [`Contender::recipe`]).
fn recipe_of(name: &str) -> &'static str {
    let curator = name.starts_with("_c_");
    if name.contains("__READ__") {
        "Curator InterProcessReadWriteLock (read)"
    } else if name.contains("__WRIT__") {
        "Curator InterProcessReadWriteLock (write)"
    } else if name.contains("-lease-") {
        "Curator semaphore lease"
    } else if curator && name.contains("-lock-") {
        "Curator InterProcessMutex"
    } else if name.contains("__rlock__") {
        "kazoo ReadLock"
    } else if name.contains("__lock__") {
        "kazoo Lock"
    } else if name
        .strip_prefix("x-")
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
    {
        "ZooKeeper WriteLock"
    } else if name.contains("-read-") {
        "shared lock (read)"
    } else if name.contains("-write-") {
        "shared lock (write)"
    } else if name.contains("-lock-") {
        "sequential lock"
    } else {
        UNKNOWN
    }
}

/// The recipe of a name no known layout matches.
const UNKNOWN: &str = "unknown sequential";

/// The contenders among `children` (the names of one lock folder's children, in any order),
/// in queue order: by sequence suffix, ties broken by name. Each says whom it waits for under
/// the rule of the module docs; several readers may hold at once. Runs in `O(n log n)`.
///
/// A Curator semaphore's `leases` folder reads as a queue of exclusive leases: right for
/// `InterProcessSemaphoreMutex` (one lease), while a semaphore of more leases has more
/// holders than the first.
pub fn lock_queue(children: &[String]) -> Vec<Contender> {
    let mut queue: Vec<(u32, &String)> = children
        .iter()
        .filter_map(|c| sequence(c).map(|s| (s, c)))
        .collect();
    queue.sort();
    let mut last: Option<&String> = None;
    let mut last_writer: Option<&String> = None;
    let mut out = Vec::with_capacity(queue.len());
    for (seq, name) in queue {
        let kind = kind_of(name);
        let blocked_by = match kind {
            Kind::Write => last,
            Kind::Read => last_writer,
        };
        out.push(Contender {
            name: name.clone(),
            sequence: seq,
            reader: kind == Kind::Read,
            recipe: recipe_of(name),
            blocked_by: blocked_by.cloned(),
        });
        last = Some(name);
        if kind == Kind::Write {
            last_writer = Some(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::{Verdict, evaluate};

    fn v(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn agrees_with_the_rule_the_locks_acquire_by() {
        let children = v(&[
            "e-write-0000000005",
            "a-read-0000000001",
            "x-9-1-0000000010",
            "b-write-0000000002",
            "c-read-0000000003",
            "_c_u-__READ__0000000011",
            "d-read-0000000004",
            "leases",
            "k__rlock__0000000012",
            "k__lock__0000000013",
        ]);
        let queue = lock_queue(&children);
        assert_eq!(queue.len(), 9, "{queue:?}");
        let seqs: Vec<u32> = queue.iter().map(|c| c.sequence).collect();
        assert_eq!(seqs, [1, 2, 3, 4, 5, 10, 11, 12, 13]);
        for c in &queue {
            let kind = if c.reader { Kind::Read } else { Kind::Write };
            let expected = match evaluate(&children, &c.name, kind, None) {
                Verdict::Acquired => None,
                Verdict::Wait(w) => Some(w),
                Verdict::Missing => panic!("{} missing", c.name),
            };
            assert_eq!(c.blocked_by, expected, "{}", c.name);
        }
        assert!(queue[0].holds());
        assert!(!queue[1].holds());
    }

    #[test]
    fn readers_hold_together_and_recipes_are_named() {
        let queue = lock_queue(&v(&[
            "_c_1-__READ__0000000001",
            "_c_2-__READ__0000000002",
            "_c_3-__WRIT__0000000003",
        ]));
        assert!(queue[0].holds() && queue[1].holds() && !queue[2].holds());
        assert_eq!(queue[2].recipe, "Curator InterProcessReadWriteLock (write)");
        assert_eq!(
            recipe_of("_c_u-lock-0000000001"),
            "Curator InterProcessMutex"
        );
        assert_eq!(
            recipe_of("_c_u-lease-0000000001"),
            "Curator semaphore lease"
        );
        assert_eq!(recipe_of("u-lock-0000000001"), "sequential lock");
        assert_eq!(recipe_of("x-72-9-0000000001"), "ZooKeeper WriteLock");
        assert_eq!(recipe_of("ab__lock__0000000001"), "kazoo Lock");
        assert_eq!(recipe_of("node0000000001"), "unknown sequential");
        assert_eq!(recipe_of("x-job-0000000001"), "unknown sequential");
        assert_eq!(recipe_of("qn-0000000001"), "unknown sequential");
    }
}
