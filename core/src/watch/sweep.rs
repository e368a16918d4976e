//! The sweep of gone connections' registrations (see the parent module): a gone connection
//! swept at once or retired ([`WatchTable::remove_conn`]), what a slice of the sweep removes, what it hands back to be freed once the caller has let go of the core, and the
//! compaction of the tables once the last retired connection is done.
//!
//! Invariants: one [`WatchTable::sweep`] call removes at most `max` entries and frees nothing
//! itself: the paths, watcher maps, walked id sets and spare tables go to its [`Spare`]; the
//! tables are compacted only when no connection is left retiring, so no walked set still holds
//! an id the compaction could drop.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use super::super::ConnId;
use super::{FreeIds, PathId, Retiring, WatchTable, Watched};

/// What a sweep took out of the tables ([`WatchTable::sweep`]), freed when this is dropped: by
/// the caller, once it no longer holds the core. Freeing is not free: a slice's thousand paths
/// and watcher maps can set off the allocator's consolidation of every small block freed
/// before (tens of milliseconds with millions of them), and a finished sweep's spare tables
/// hold hundreds of megabytes.
#[derive(Debug, Default)]
pub(crate) struct Spare {
    /// Watched paths gone: the table's key, the name's copy and the entry.
    pub(super) gone: Vec<(Arc<str>, Option<Arc<str>>, Watched)>,
    pub(super) paths: Vec<HashMap<Arc<str>, Watched>>,
    /// Swept connections' id sets.
    pub(super) sets: Vec<BTreeSet<PathId>>,
    pub(super) names: Vec<Vec<Option<Arc<str>>>>,
    pub(super) free: Vec<FreeIds>,
}

impl WatchTable {
    /// Drops every watch of a connection (its socket is gone, docs/protocol.md §9.7): at once
    /// for at most [`INLINE_SWEEP`](super::INLINE_SWEEP) of them, else by retiring the connection for
    /// [`WatchTable::sweep`] (see the module docs). Either way the counters and every lookup
    /// stop seeing them now.
    pub fn remove_conn(&mut self, conn: ConnId) {
        let Some(ids) = self.by_conn.remove(&conn) else {
            return;
        };
        self.total -= ids.len();
        self.recursive -= self.recursive_of.remove(&conn).unwrap_or(0);
        if ids.len() <= self.inline_sweep {
            let mut spare = Spare::default();
            for id in ids {
                self.unwatch(conn, id, &mut spare);
            }
        } else {
            self.retired.insert(conn);
            self.retiring.push_back(Retiring {
                conn,
                ids,
                after: None,
            });
        }
    }

    /// Takes a gone connection's entry for path `id` out of `by_path`, if it is still there;
    /// the counters already left it out. The id may name another path by now (the entry went
    /// with a trigger and the id was reused): the connection is not among its watchers, as it
    /// registers nothing since it went.
    /// What it frees goes to `spare`, to be freed by the caller (see [`Spare`]).
    pub(super) fn unwatch(&mut self, conn: ConnId, id: PathId, spare: &mut Spare) {
        let Some(path) = self.names.get(id as usize).cloned().flatten() else {
            return;
        };
        if let Some(watched) = self.by_path.get_mut(&path) {
            watched.watchers.remove(&conn);
            if watched.watchers.is_empty()
                && let Some((key, watched)) = self.by_path.remove_entry(&*path)
            {
                let name = self.names[watched.id as usize].take();
                self.free.push(watched.id);
                spare.gone.push((key, name, watched));
            }
        }
    }

    /// Whether gone connections have entries left to sweep.
    pub fn sweep_pending(&self) -> bool {
        !self.retiring.is_empty()
    }

    /// Removes up to `max` entries of retired connections; returns how many it removed. Once
    /// the last is gone, the tables' spare capacity is taken out into `spare` (see
    /// [`WatchTable::shrink`]).
    pub fn sweep(&mut self, max: usize, spare: &mut Spare) -> usize {
        use std::ops::Bound::{Excluded, Unbounded};
        let mut done = 0;
        let mut finished_any = false;
        while done < max {
            let Some(retiring) = self.retiring.front_mut() else {
                break;
            };
            // Walked, not popped: taking ids out of the set would free its nodes here, under the
            // caller's lock; the whole set goes to `spare` once walked.
            let from = retiring.after.map_or(Unbounded, Excluded);
            let ids: Vec<PathId> = retiring
                .ids
                .range((from, Unbounded))
                .take(max - done)
                .copied()
                .collect();
            let conn = retiring.conn;
            retiring.after = ids.last().copied().or(retiring.after);
            if ids.len() < max - done
                && let Some(finished) = self.retiring.pop_front()
            {
                self.retired.remove(&conn);
                spare.sets.push(finished.ids);
                finished_any = true;
            }
            for id in ids {
                self.unwatch(conn, id, spare);
                done += 1;
            }
        }
        if self.retiring.is_empty() && finished_any {
            self.shrink(spare);
        }
        done
    }

    /// Moves what the tables hold beyond a quarter full into `spare`: a big connection gone
    /// leaves its capacity behind, which a long-running server should not keep at its peak.
    /// The live entries are copied into tables of their own size (few, once the big one is
    /// gone), the id space is cut back to the highest id in use and the free list to the ids
    /// below it. The old allocations go to `spare` rather than being freed here, because
    /// freeing hundreds of megabytes takes milliseconds, and the caller can do it once it
    /// has let go of the core.
    fn shrink(&mut self, spare: &mut Spare) {
        let live = self.by_path.len();
        if self.by_path.capacity() > 4 * live + 64 {
            let mut compact = HashMap::with_capacity(live);
            compact.extend(self.by_path.drain());
            spare
                .paths
                .push(std::mem::replace(&mut self.by_path, compact));
        }
        if self.by_conn.capacity() > 4 * self.by_conn.len() + 64 {
            self.by_conn.shrink_to_fit();
        }
        if self.names.len() > 2 * live + self.inline_sweep {
            let end = self
                .names
                .iter()
                .rposition(Option::is_some)
                .map_or(0, |i| i + 1);
            let names: Vec<_> = self.names.drain(..end).collect();
            spare.names.push(std::mem::replace(&mut self.names, names));
            let mut free = FreeIds::default();
            for id in self.free.iter().filter(|&id| (id as usize) < end) {
                free.push(id);
            }
            spare.free.push(std::mem::replace(&mut self.free, free));
        }
    }
}
