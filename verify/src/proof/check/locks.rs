//! The lock checker of the chaos run ([`chaos`](crate::proof::chaos)): what the holders report
//! (entering, writing, reading, leaving) and what the server's tree says, held against the
//! safety properties of a lock with fencing. It judges beside the history's mutex checks, on
//! the same run: those judge what clients saw, this one the tree snapshots and fencing tokens,
//! readers and holders whose sessions ended included.
//!
//! Definitions (docs/chaos.md gives the reasoning):
//! * a holder is *inside* from the moment its acquire returned to the moment it decides to
//!   leave (before its release deletes anything), or learns the lock is lost;
//! * a holder is *valid* at a server instant when it is inside and its lock node (path and
//!   creation zxid) exists in the tree at that instant; an ephemeral node exists only while its
//!   session lives, so a valid holder's session is alive. A multi-lock holder is valid per
//!   mutex;
//! * **exclusion**: in no snapshot of the tree are two conflicting holders of one lock valid
//!   together (on the same mutex): two writers, or a writer and a reader;
//! * **fencing**: the resource accepts a writer's write (in zxid order) only with a token no
//!   smaller than every token it accepted before, an equal one only from the same holder; a
//!   reader's validated read sees only writers with smaller tokens; a valid holder is never
//!   refused as stale. A paused holder that wakes late is refused: by the guarded write's
//!   existence check (its node is gone), or by the token compare-and-set where a fixed-name node
//!   may have been re-created.
//!
//! Invariant: memory is bounded: at most [`WRITE_WINDOW`] accepted writes per family are kept
//! for ordering checks, and at most [`KEPT_DETAILS`] violation messages.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Accepted writes kept per family to place a late-reported write among its neighbours.
pub const WRITE_WINDOW: usize = 4096;
/// Violation messages kept; every violation is counted.
pub const KEPT_DETAILS: usize = 50;
/// Pairs of holders remembered as already reported together, so that one overlap seen in
/// many snapshots counts once.
const KEPT_PAIRS: usize = 10_000;

/// A holder, as it enters.
#[derive(Debug, Clone)]
pub struct Holder {
    /// Unique over the run.
    pub id: u64,
    /// Which worker.
    pub worker: usize,
    /// The family's index in [`FAMILIES`](crate::proof::workload::mutex::family::FAMILIES).
    pub family: usize,
    /// Whether it holds a read half.
    pub reader: bool,
    /// Its lock nodes: path and creation zxid, one per mutex.
    pub nodes: Vec<(String, i64)>,
    /// Its fencing token.
    pub token: Vec<i64>,
    /// Its session.
    pub session: i64,
}

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Two conflicting holders valid in one snapshot.
    TwoHolders,
    /// The resource accepted a smaller token after a larger one (or an equal one from
    /// another holder).
    TokenRegressed,
    /// A reader's validated read saw a writer with a larger token.
    ReaderSawLaterWriter,
    /// A valid holder's write was refused as stale.
    ValidHolderRefused,
    /// A lock node outlived every holder and waiter.
    Orphan,
    /// An operation ran past its bound.
    Hang,
    /// A holder whose session ended never saw `lost()` resolve.
    LostNotFired,
    /// A recipe failed in a way no fault explains.
    Unexpected,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 8] = [
        Kind::TwoHolders,
        Kind::TokenRegressed,
        Kind::ReaderSawLaterWriter,
        Kind::ValidHolderRefused,
        Kind::Orphan,
        Kind::Hang,
        Kind::LostNotFired,
        Kind::Unexpected,
    ];

    /// Its name in the report.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::TwoHolders => "two-holders",
            Kind::TokenRegressed => "token-regressed",
            Kind::ReaderSawLaterWriter => "reader-saw-later-writer",
            Kind::ValidHolderRefused => "valid-holder-refused",
            Kind::Orphan => "orphan",
            Kind::Hang => "hang",
            Kind::LostNotFired => "lost-not-fired",
            Kind::Unexpected => "unexpected-error",
        }
    }
}

/// The lock nodes of one tree snapshot: path to creation zxid.
pub type Nodes = HashMap<String, i64>;

#[derive(Default)]
struct FamilyState {
    inside: HashMap<u64, Holder>,
    /// Accepted writes by the zxid they were applied at: token and holder.
    writes: BTreeMap<i64, (Vec<i64>, u64)>,
}

#[derive(Default)]
struct Violations {
    counts: BTreeMap<Kind, u64>,
    details: Vec<String>,
    /// Holder pairs already reported as two holders.
    pairs: HashSet<(u64, u64)>,
}

/// The shared checker of one run.
pub struct Checker {
    families: Mutex<Vec<FamilyState>>,
    violations: Mutex<Violations>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking worker must not hide every later violation behind a poisoned lock.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Checker {
    /// A checker for `families` locks.
    pub fn new(families: usize) -> Checker {
        Checker {
            families: Mutex::new((0..families).map(|_| FamilyState::default()).collect()),
            violations: Mutex::new(Violations::default()),
        }
    }

    /// Records a violation.
    pub fn violation(&self, kind: Kind, detail: String) {
        let mut v = lock(&self.violations);
        *v.counts.entry(kind).or_default() += 1;
        if v.details.len() < KEPT_DETAILS {
            v.details.push(format!("{}: {detail}", kind.as_str()));
        }
    }

    /// Violations so far, by kind, and the first messages.
    pub fn violations(&self) -> (BTreeMap<Kind, u64>, Vec<String>) {
        let v = lock(&self.violations);
        (v.counts.clone(), v.details.clone())
    }

    /// A holder enters; check exclusion right after with [`Checker::check_exclusion`].
    pub fn enter(&self, holder: Holder) {
        let mut families = lock(&self.families);
        if let Some(f) = families.get_mut(holder.family) {
            f.inside.insert(holder.id, holder);
        }
    }

    /// A holder leaves (before its release).
    pub fn leave(&self, family: usize, id: u64) {
        let mut families = lock(&self.families);
        if let Some(f) = families.get_mut(family) {
            f.inside.remove(&id);
        }
    }

    /// The holders inside `family` now (every family when `None`).
    pub fn inside(&self, family: Option<usize>) -> Vec<Holder> {
        let families = lock(&self.families);
        families
            .iter()
            .enumerate()
            .filter(|(i, _)| family.is_none_or(|f| f == *i))
            .flat_map(|(_, f)| f.inside.values().cloned())
            .collect()
    }

    /// Whether this pair of holders is reported for the first time (bounded memory: past
    /// [`KEPT_PAIRS`] pairs every report counts).
    fn first_report(&self, a: u64, b: u64) -> bool {
        let mut v = lock(&self.violations);
        let pair = (a.min(b), a.max(b));
        if v.pairs.contains(&pair) {
            return false;
        }
        if v.pairs.len() < KEPT_PAIRS {
            v.pairs.insert(pair);
        }
        true
    }

    /// Exclusion over `holders` (taken from [`Checker::inside`] *before* `nodes` was read):
    /// two conflicting holders both valid on one mutex in `nodes` is a violation. Returns the
    /// number of violations found.
    pub fn check_exclusion(&self, holders: &[Holder], nodes: &Nodes) -> usize {
        let valid = |h: &Holder, i: usize| {
            h.nodes
                .get(i)
                .is_some_and(|(path, czxid)| nodes.get(path) == Some(czxid))
        };
        let mut found = 0;
        for (n, a) in holders.iter().enumerate() {
            for b in &holders[n + 1..] {
                if a.family != b.family || (a.reader && b.reader) {
                    continue;
                }
                let mutexes = a.nodes.len().min(b.nodes.len());
                if let Some(i) = (0..mutexes).find(|&i| valid(a, i) && valid(b, i)) {
                    if !self.first_report(a.id, b.id) {
                        continue;
                    }
                    found += 1;
                    self.violation(
                        Kind::TwoHolders,
                        format!(
                            "holders {} (worker {}, session 0x{:x}, {:?}) and {} (worker {}, session 0x{:x}, {:?}) both hold {}",
                            a.id, a.worker, a.session, a.nodes[i], b.id, b.worker, b.session,
                            b.nodes[i], a.nodes[i].0
                        ),
                    );
                }
            }
        }
        found
    }

    /// A writer's write was applied at `mzxid`: it must sit in token order among the writes
    /// accepted before and after it. Returns false on a violation.
    pub fn accepted_write(&self, family: usize, mzxid: i64, token: &[i64], holder: u64) -> bool {
        let clash = {
            let mut families = lock(&self.families);
            let Some(f) = families.get_mut(family) else {
                return true;
            };
            let out_of_order = |other: &(Vec<i64>, u64), later: bool| {
                let (t, h) = other;
                let smaller = if later {
                    t.as_slice() < token
                } else {
                    t.as_slice() > token
                };
                smaller || (t.as_slice() == token && *h != holder)
            };
            let before = f.writes.range(..mzxid).next_back();
            let after = f.writes.range(mzxid + 1..).next();
            let clash = before
                .filter(|(_, w)| out_of_order(w, false))
                .or(after.filter(|(_, w)| out_of_order(w, true)))
                .map(|(z, (t, h))| (*z, t.clone(), *h));
            f.writes.insert(mzxid, (token.to_vec(), holder));
            while f.writes.len() > WRITE_WINDOW {
                f.writes.pop_first();
            }
            clash
        };
        match clash {
            None => true,
            Some((z, t, h)) => {
                self.violation(
                    Kind::TokenRegressed,
                    format!(
                        "family {family}: holder {holder} wrote token {token:?} at zxid 0x{mzxid:x}, holder {h} token {t:?} at 0x{z:x}"
                    ),
                );
                false
            }
        }
    }

    /// A reader's validated read (the resource unchanged while its lock node existed) saw
    /// `writer`'s token: it must be smaller than the reader's own. Returns false on a
    /// violation.
    pub fn validated_read(&self, family: usize, reader: &[i64], writer: &[i64], id: u64) -> bool {
        if writer < reader {
            return true;
        }
        self.violation(
            Kind::ReaderSawLaterWriter,
            format!("family {family}: reader {id} (token {reader:?}) read writer token {writer:?}"),
        );
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(id: u64, reader: bool, nodes: &[(&str, i64)]) -> Holder {
        Holder {
            id,
            worker: id as usize,
            family: 0,
            reader,
            nodes: nodes.iter().map(|(p, z)| (p.to_string(), *z)).collect(),
            token: nodes.iter().map(|(_, z)| *z).collect(),
            session: 0x100 + id as i64,
        }
    }

    fn nodes(list: &[(&str, i64)]) -> Nodes {
        list.iter().map(|(p, z)| (p.to_string(), *z)).collect()
    }

    #[test]
    fn two_valid_writers_are_caught_and_a_gone_node_is_not_valid() {
        let checker = Checker::new(1);
        let a = holder(1, false, &[("/l/a-1", 10)]);
        let b = holder(2, false, &[("/l/b-2", 12)]);
        // a's node is gone: a is a late holder, not a valid one.
        assert_eq!(
            checker.check_exclusion(&[a.clone(), b.clone()], &nodes(&[("/l/b-2", 12)])),
            0
        );
        // A node of the same path re-created later (a fixed-name lock) is not a's.
        let fixed_a = holder(3, false, &[("/l/lock", 10)]);
        let fixed_b = holder(4, false, &[("/l/lock", 12)]);
        assert_eq!(
            checker.check_exclusion(&[fixed_a, fixed_b], &nodes(&[("/l/lock", 12)])),
            0
        );
        let both = nodes(&[("/l/a-1", 10), ("/l/b-2", 12)]);
        assert_eq!(checker.check_exclusion(&[a.clone(), b.clone()], &both), 1);
        // The same pair seen again in a later snapshot is the same violation.
        assert_eq!(checker.check_exclusion(&[a, b], &both), 0);
        // Readers share; a reader and a writer do not.
        let r1 = holder(5, true, &[("/l/a-1", 10)]);
        let r2 = holder(6, true, &[("/l/b-2", 12)]);
        let w = holder(7, false, &[("/l/b-2", 12)]);
        assert_eq!(checker.check_exclusion(&[r1.clone(), r2], &both), 0);
        assert_eq!(checker.check_exclusion(&[r1, w], &both), 1);
        assert_eq!(checker.violations().0[&Kind::TwoHolders], 2);
    }

    #[test]
    fn multi_lock_holders_conflict_per_mutex() {
        let checker = Checker::new(1);
        let a = holder(1, false, &[("/m/a/x-1", 10), ("/m/b/x-2", 11)]);
        let b = holder(2, false, &[("/m/a/x-3", 13), ("/m/b/x-4", 14)]);
        // a lost mutex a, b holds it; a still holds b's mutex b, b's node there is only queued.
        let snapshot = nodes(&[("/m/b/x-2", 11), ("/m/a/x-3", 13), ("/m/b/x-4", 14)]);
        assert_eq!(checker.check_exclusion(&[a, b], &snapshot), 1);
    }

    #[test]
    fn accepted_tokens_must_grow_in_zxid_order_whatever_order_they_are_reported_in() {
        let checker = Checker::new(1);
        assert!(checker.accepted_write(0, 100, &[10], 1));
        assert!(checker.accepted_write(0, 300, &[30], 3));
        // Reported late, but in order.
        assert!(checker.accepted_write(0, 200, &[20], 2));
        assert!(checker.accepted_write(0, 201, &[20], 2));
        // The same token from another holder, and a smaller token later.
        assert!(!checker.accepted_write(0, 202, &[20], 9));
        assert!(!checker.accepted_write(0, 400, &[25], 4));
        // A larger token reported before a write it follows.
        assert!(!checker.accepted_write(0, 150, &[40], 5));
        assert_eq!(checker.violations().0[&Kind::TokenRegressed], 3);
    }

    #[test]
    fn readers_see_only_smaller_writer_tokens() {
        let checker = Checker::new(1);
        assert!(checker.validated_read(0, &[50], &[40], 1));
        assert!(!checker.validated_read(0, &[50], &[60], 1));
        assert_eq!(checker.violations().1.len(), 1);
    }
}
