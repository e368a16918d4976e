//! Watch registrations (docs/protocol.md §9) with ZooKeeper 3.8's semantics: two tables (data and child), and in
//! each table **one mode per (connection, path)**, the last registration overwriting the
//! previous one (docs/protocol.md §9.4).
//!
//! Invariants: `by_path` and `by_conn` describe the same set of (connection, path) pairs and
//! hold no empty entry; a watched path has one id, `names` maps it back to the path, and an
//! id is on the free list exactly when its slot in `names` is empty; `total` counts the pairs,
//! so the figures mntr and `wchs` print are read without walking the tables; `recursive`
//! counts the recursive entries, so ancestors are only walked when one exists.
//!
//! A connection that goes takes its registrations with it, but taking a million of them out of
//! `by_path` at once would hold the core for seconds while every other client waits (and
//! sessions time out). So a gone connection's set is taken out of `by_conn` at once, with its
//! counts, and the connection is *retired*: its entries in `by_path` are stale, skipped by every
//! lookup, and [`WatchTable::sweep`] removes them a bounded slice at a time, between other
//! requests (ZooKeeper's `WatchManagerOptimized` clears dead watchers in batches the same way).
//! A connection with at most [`INLINE_SWEEP`] registrations is swept at once, so the common
//! close leaves nothing behind. Connection ids are never reused, and a retired connection
//! registers nothing, so a stale entry can never be mistaken for a live one; `total`,
//! `recursive` and `conn_count` exclude retired connections from the moment they go, and
//! `path_count` counts a path only they watched until its entry is swept.
//! Triggering returns each matching connection once (docs/protocol.md §9.3) and consumes one-shot watches
//! whether or not the event is later filtered out by ACL (docs/protocol.md §9.9); delivery is the caller's job.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use shepherd_protocol::{ErrorCode, EventType};

use super::ConnId;
use super::path;

/// How a registration behaves when it fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// One-shot (getData, exists, getChildren, setWatches).
    Standard,
    /// addWatch mode 0: stays, exact path only.
    Persistent,
    /// addWatch mode 1: stays, the path and every descendant, never NodeChildrenChanged.
    Recursive,
}

/// A watched path's number within one table, reused once nobody watches the path.
pub(crate) type PathId = u32;

/// The most registrations a gone connection has for them all to be removed at once; beyond
/// this, they are retired and swept (see the module docs). One slice of the sweep removes as
/// many.
pub(crate) const INLINE_SWEEP: usize = 1024;

/// A watched path: its number and who watches it, in which mode.
#[derive(Debug)]
struct Watched {
    id: PathId,
    watchers: BTreeMap<ConnId, Mode>,
}

/// What a sweep took out of the tables ([`WatchTable::sweep`]), freed when this is dropped: by
/// the caller, once it no longer holds the core. Freeing is not free: a slice's thousand paths
/// and watcher maps can set off the allocator's consolidation of every small block freed
/// before (tens of milliseconds with millions of them), and a finished sweep's spare tables
/// hold hundreds of megabytes.
#[derive(Debug, Default)]
pub struct Spare {
    /// Watched paths gone: the table's key, the name's copy and the entry.
    gone: Vec<(Arc<str>, Option<Arc<str>>, Watched)>,
    paths: Vec<HashMap<Arc<str>, Watched>>,
    /// Swept connections' id sets.
    sets: Vec<BTreeSet<PathId>>,
    names: Vec<Vec<Option<Arc<str>>>>,
    free: Vec<FreeIds>,
}

/// Freed path ids, kept in chunks of fixed size: one sweep frees millions, and a single list
/// would be copied whole at each doubling, under the core lock.
#[derive(Debug, Default)]
struct FreeIds {
    chunks: Vec<Vec<PathId>>,
    len: usize,
}

impl FreeIds {
    const CHUNK: usize = 4096;

    fn push(&mut self, id: PathId) {
        match self.chunks.last_mut() {
            Some(chunk) if chunk.len() < Self::CHUNK => chunk.push(id),
            _ => {
                let mut chunk = Vec::with_capacity(Self::CHUNK);
                chunk.push(id);
                self.chunks.push(chunk);
            }
        }
        self.len += 1;
    }

    fn pop(&mut self) -> Option<PathId> {
        loop {
            let chunk = self.chunks.last_mut()?;
            if let Some(id) = chunk.pop() {
                self.len -= 1;
                return Some(id);
            }
            self.chunks.pop();
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.len
    }

    fn iter(&self) -> impl Iterator<Item = PathId> + '_ {
        self.chunks.iter().flatten().copied()
    }
}

/// A gone connection whose entries are being swept: its ids, and the last one swept.
#[derive(Debug)]
struct Retiring {
    conn: ConnId,
    ids: BTreeSet<PathId>,
    after: Option<PathId>,
}

/// One of the two watch managers.
///
/// A watched path's text is held once per table. Each connection's set holds the path's 4-byte
/// number rather than a reference to the text: a million watches over a hundred thousand paths
/// from a thousand connections are dominated by those sets, so their entries are kept as small
/// as the count of paths allows (docs/bench/watches.md).
#[derive(Debug)]
pub(crate) struct WatchTable {
    by_path: HashMap<Arc<str>, Watched>,
    /// Path by id; `None` for a freed id.
    names: Vec<Option<Arc<str>>>,
    free: FreeIds,
    by_conn: HashMap<ConnId, BTreeSet<PathId>>,
    /// (connection, path) registrations, kept up to date by every change.
    total: usize,
    recursive: usize,
    /// Recursive registrations by connection, so that a connection's go at once from `recursive`.
    recursive_of: HashMap<ConnId, usize>,
    /// Gone connections whose entries are still in `by_path`, with the ids still to sweep.
    retiring: VecDeque<Retiring>,
    /// The connections in `retiring`, skipped by every lookup of `by_path`.
    retired: HashSet<ConnId>,
    /// [`INLINE_SWEEP`], lowered by tests to retire small connections too.
    inline_sweep: usize,
}

impl Default for WatchTable {
    fn default() -> Self {
        WatchTable {
            by_path: HashMap::new(),
            names: Vec::new(),
            free: FreeIds::default(),
            by_conn: HashMap::new(),
            total: 0,
            recursive: 0,
            recursive_of: HashMap::new(),
            retiring: VecDeque::new(),
            retired: HashSet::new(),
            inline_sweep: INLINE_SWEEP,
        }
    }
}

impl WatchTable {
    /// Registers (or overwrites, docs/protocol.md §9.4) the connection's watch on `path`. A herd waiter re-arms
    /// the same watch after every release, so the path is copied only when it is new to the table.
    pub fn add(&mut self, path: &str, conn: ConnId, mode: Mode) {
        if self.is_retired(conn) {
            return;
        }
        if !self.by_path.contains_key(path) {
            let shared: Arc<str> = Arc::from(path);
            let id = self.new_id(Arc::clone(&shared));
            let watchers = BTreeMap::new();
            self.by_path.insert(shared, Watched { id, watchers });
        }
        let watched = self.by_path.get_mut(path).expect("inserted above");
        let old = watched.watchers.insert(conn, mode);
        let id = watched.id;
        if old.is_none() {
            self.total += 1;
        }
        if old == Some(Mode::Recursive) {
            self.count_recursive(conn, -1);
        }
        if mode == Mode::Recursive {
            self.count_recursive(conn, 1);
        }
        self.by_conn.entry(conn).or_default().insert(id);
    }

    /// Moves `recursive` and the connection's share of it by one.
    fn count_recursive(&mut self, conn: ConnId, step: isize) {
        let of = self.recursive_of.entry(conn).or_default();
        if step > 0 {
            *of += 1;
            self.recursive += 1;
        } else {
            *of -= 1;
            self.recursive -= 1;
            if *of == 0 {
                self.recursive_of.remove(&conn);
            }
        }
    }

    /// Whether `conn` is gone with entries still to sweep. Cheap when nothing is retiring,
    /// which is almost always.
    fn is_retired(&self, conn: ConnId) -> bool {
        !self.retired.is_empty() && self.retired.contains(&conn)
    }

    /// Numbers a path new to the table, reusing a freed number first.
    fn new_id(&mut self, path: Arc<str>) -> PathId {
        if let Some(id) = self.free.pop() {
            self.names[id as usize] = Some(path);
            return id;
        }
        // Every watched path holds its text and a map entry, well over 64 bytes, so four
        // billion of them would not fit in any memory this runs in.
        let id = PathId::try_from(self.names.len()).expect("fewer than 2^32 watched paths");
        self.names.push(Some(path));
        id
    }

    /// Forgets a path nobody watches any more, and frees its number.
    fn drop_path(&mut self, path: &str) {
        if let Some(watched) = self.by_path.remove(path) {
            self.names[watched.id as usize] = None;
            self.free.push(watched.id);
        }
    }

    /// Takes `id` out of the connection's set, and the set out of the table once empty.
    fn unlink(&mut self, conn: ConnId, id: PathId) {
        if let Some(ids) = self.by_conn.get_mut(&conn) {
            ids.remove(&id);
            if ids.is_empty() {
                self.by_conn.remove(&conn);
            }
        }
    }

    /// Removes the connection's watch on `path`, whatever its mode. False if there was none.
    pub fn remove(&mut self, path: &str, conn: ConnId) -> bool {
        if self.is_retired(conn) {
            return false;
        }
        let Some(watched) = self.by_path.get_mut(path) else {
            return false;
        };
        let Some(mode) = watched.watchers.remove(&conn) else {
            return false;
        };
        let (id, empty) = (watched.id, watched.watchers.is_empty());
        if empty {
            self.drop_path(path);
        }
        self.total -= 1;
        if mode == Mode::Recursive {
            self.count_recursive(conn, -1);
        }
        self.unlink(conn, id);
        true
    }

    /// ZooKeeper 3.8's `WatchManager.containsWatcher`, which checkWatches asks
    /// (docs/protocol.md §9.8): whether **any** connection watches exactly `path` in this table
    /// (3.8 ignores which connection asks; 3.9 made it per connection). `Err` is 3.8's
    /// MarshallingError: its `PathParentIterator` computes each parent with
    /// `substring(0, lastIndexOf('/'))`, which throws on a step without a `/`. The path itself
    /// is stepped past before it is looked up, so a non-empty path with no `/` always throws;
    /// the walk goes on to the root only while the table holds a recursive watch, so then any
    /// other path not starting with `/` throws unless it was found; an empty path is never
    /// walked at all.
    pub fn anyone_watches(&self, path: &str) -> Result<bool, ErrorCode> {
        if path.is_empty() {
            return Ok(false);
        }
        if path != "/" && !path.contains('/') {
            return Err(ErrorCode::MarshallingError);
        }
        if let Some(watched) = self.by_path.get(path)
            && watched.watchers.keys().any(|&c| !self.is_retired(c))
        {
            return Ok(true);
        }
        if self.recursive > 0 && !path.starts_with('/') {
            return Err(ErrorCode::MarshallingError);
        }
        Ok(false)
    }

    /// Drops every watch of a connection (its socket is gone, docs/protocol.md §9.7): at once
    /// for at most [`INLINE_SWEEP`] of them, else by retiring the connection for
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
    fn unwatch(&mut self, conn: ConnId, id: PathId, spare: &mut Spare) {
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

    /// Fires `event` at `path`: the connections to notify, once each (docs/protocol.md §9.3). One-shot watches
    /// at the path are consumed; recursive watches on the path or an ancestor match every event
    /// but NodeChildrenChanged; standard and persistent watches only match at the path itself.
    pub fn trigger(&mut self, path: &str, event: EventType) -> BTreeSet<ConnId> {
        let mut hit = BTreeSet::new();
        let mut consumed = Vec::new();
        let mut id = None;
        if let Some(watched) = self.by_path.get_mut(path) {
            id = Some(watched.id);
            // One pass that also drops the one-shot watches, rather than a lookup per watcher.
            let retired = &self.retired;
            watched.watchers.retain(|&conn, &mut mode| match mode {
                // A retired connection's entry is stale: it hears nothing, and a one-shot one
                // goes now (the counters left it out when the connection went).
                Mode::Standard if !retired.is_empty() && retired.contains(&conn) => false,
                _ if !retired.is_empty() && retired.contains(&conn) => true,
                Mode::Recursive => {
                    if event != EventType::NodeChildrenChanged {
                        hit.insert(conn);
                    }
                    true
                }
                Mode::Persistent => {
                    hit.insert(conn);
                    true
                }
                Mode::Standard => {
                    hit.insert(conn);
                    consumed.push(conn);
                    false
                }
            });
            if watched.watchers.is_empty() {
                self.drop_path(path);
            }
        }
        self.total -= consumed.len();
        if let Some(id) = id {
            for conn in consumed {
                self.unlink(conn, id);
            }
        }
        if self.recursive > 0 && event != EventType::NodeChildrenChanged {
            for ancestor in path::ancestors(path) {
                if let Some(watched) = self.by_path.get(ancestor) {
                    hit.extend(
                        watched
                            .watchers
                            .iter()
                            .filter(|(c, m)| **m == Mode::Recursive && !self.is_retired(**c))
                            .map(|(c, _)| *c),
                    );
                }
            }
        }
        hit
    }

    /// Number of (connection, path) registrations, from a counter.
    pub fn count(&self) -> usize {
        self.total
    }

    /// Number of paths with at least one registration; while a sweep is pending, also the
    /// paths only retired connections watched, until their entries are swept.
    pub fn path_count(&self) -> usize {
        self.by_path.len()
    }

    /// Number of connections with at least one registration.
    pub fn conn_count(&self) -> usize {
        self.by_conn.len()
    }

    /// The connections with at least one registration, in no particular order.
    pub fn conns(&self) -> impl Iterator<Item = ConnId> + '_ {
        self.by_conn.keys().copied()
    }

    /// Up to `max` of one connection's watched paths whose ids come after `after` (all of them
    /// from the first when `None`), in id order, each with its id: a bounded slice of a walk
    /// that resumes where the last slice ended, whatever changed in between. A path watched
    /// since the walk began may or may not be in it; a path whose watch went and came back
    /// between two slices has a new number, and may be listed twice.
    pub fn paths_of_after(
        &self,
        conn: ConnId,
        after: Option<PathId>,
        max: usize,
    ) -> Vec<(PathId, String)> {
        let Some(ids) = self.by_conn.get(&conn) else {
            return Vec::new();
        };
        use std::ops::Bound::{Excluded, Unbounded};
        let from = after.map_or(Unbounded, Excluded);
        ids.range((from, Unbounded))
            .take(max)
            .filter_map(|&id| Some((id, self.name(id)?.to_string())))
            .collect()
    }

    fn name(&self, id: PathId) -> Option<&str> {
        self.names.get(id as usize)?.as_deref()
    }

    /// Every (connection, path) registration, with its mode.
    pub fn entries(&self) -> impl Iterator<Item = (ConnId, &str, Mode)> {
        self.by_path.iter().flat_map(move |(p, w)| {
            w.watchers
                .iter()
                .filter(move |(c, _)| !self.is_retired(**c))
                .map(move |(c, m)| (*c, &**p, *m))
        })
    }

    /// One connection's registrations, in no particular order.
    pub fn of_conn(&self, conn: ConnId) -> impl Iterator<Item = (&str, Mode)> {
        self.by_conn
            .get(&conn)
            .into_iter()
            .flatten()
            .filter_map(move |&id| {
                let path = self.name(id)?;
                let mode = self.by_path.get(path)?.watchers.get(&conn)?;
                Some((path, *mode))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use EventType::*;

    #[test]
    fn one_shot_and_overwrite() {
        let mut t = WatchTable::default();
        t.add("/p", 1, Mode::Persistent);
        t.add("/p", 2, Mode::Standard);
        assert_eq!(t.trigger("/p", NodeDataChanged), BTreeSet::from([1, 2]));
        assert_eq!(t.trigger("/p", NodeDataChanged), BTreeSet::from([1]));
        // 3.8: a one-shot registration downgrades the persistent one (docs/protocol.md §9.4).
        t.add("/p", 1, Mode::Standard);
        assert_eq!(t.trigger("/p", NodeDataChanged), BTreeSet::from([1]));
        assert!(t.trigger("/p", NodeDataChanged).is_empty());
        assert_eq!(t.count(), 0);
    }

    #[test]
    fn recursive_matches_descendants_except_children_changed() {
        let mut t = WatchTable::default();
        t.add("/a", 1, Mode::Recursive);
        t.add("/a/b", 2, Mode::Persistent);
        assert_eq!(t.trigger("/a/b/c", NodeCreated), BTreeSet::from([1]));
        assert_eq!(t.trigger("/a/b", NodeChildrenChanged), BTreeSet::from([2]));
        assert_eq!(t.trigger("/a", NodeChildrenChanged), BTreeSet::new());
        t.remove_conn(1);
        assert!(t.trigger("/a/x", NodeCreated).is_empty());
        assert_eq!(t.recursive, 0);
        assert!(t.remove("/a/b", 2));
        assert!(!t.remove("/a/b", 2));
    }

    /// The counter agrees with a walk of the table after every kind of change.
    #[test]
    fn counters_follow_every_change() {
        fn walked(t: &WatchTable) -> usize {
            t.by_path.values().map(|w| w.watchers.len()).sum()
        }
        let mut t = WatchTable::default();
        t.add("/a", 1, Mode::Standard);
        t.add("/a", 1, Mode::Persistent);
        t.add("/a", 2, Mode::Standard);
        t.add("/b", 1, Mode::Recursive);
        t.add("/b/c", 3, Mode::Standard);
        assert_eq!((t.count(), t.path_count(), t.conn_count()), (4, 3, 3));
        assert_eq!(t.count(), walked(&t));
        t.trigger("/a", NodeDataChanged);
        assert_eq!((t.count(), walked(&t)), (3, 3));
        assert!(t.remove("/b/c", 3));
        assert_eq!((t.count(), walked(&t), t.conn_count()), (2, 2, 1));
        t.remove_conn(1);
        assert_eq!((t.count(), t.path_count(), t.conn_count()), (0, 0, 0));
        t.add("/x", 5, Mode::Standard);
        t.add("/y", 5, Mode::Standard);
        t.add("/z", 5, Mode::Standard);
        // Freed numbers are reused, so the walk is in no name order; it pages through each path
        // once.
        let first = t.paths_of_after(5, Option::None, 2);
        assert_eq!(first.len(), 2);
        let second = t.paths_of_after(5, Some(first[1].0), 2);
        assert_eq!(second.len(), 1);
        assert!(t.paths_of_after(5, Some(second[0].0), 2).is_empty());
        let mut walked: Vec<String> = first.into_iter().chain(second).map(|(_, p)| p).collect();
        walked.sort();
        assert_eq!(walked, ["/x", "/y", "/z"]);
        assert!(t.paths_of_after(6, Option::None, 2).is_empty());
    }

    /// The sweep gives the tables' spare capacity back when the last retired connection is done,
    /// also when its last ids exactly filled the slice before (the next call only finds it done).
    #[test]
    fn the_tables_shrink_when_the_sweep_ends_on_a_slice_boundary() {
        let mut t = WatchTable {
            inline_sweep: 1,
            ..WatchTable::default()
        };
        for path in ["/a", "/b", "/c", "/d"] {
            t.add(path, 7, Mode::Standard);
        }
        t.remove_conn(7);
        assert_eq!((t.count(), t.path_count()), (0, 4));
        let mut spare = Spare::default();
        assert_eq!(t.sweep(2, &mut spare), 2);
        assert_eq!(t.sweep(2, &mut spare), 2);
        assert!(t.sweep_pending(), "done, but not yet seen to be");
        assert_eq!(t.sweep(2, &mut spare), 0);
        assert!(!t.sweep_pending());
        assert_eq!(t.path_count(), 0);
        assert!(t.names.is_empty() && t.free.len() == 0, "{:?}", t.names);
        assert_eq!(spare.sets.iter().map(BTreeSet::len).sum::<usize>(), 4);
    }

    /// Any sequence of changes keeps the two maps, the names and the free list in agreement.
    mod invariants {
        use super::*;
        use proptest::prelude::*;

        fn check(t: &WatchTable) {
            let pairs: BTreeSet<(ConnId, String)> =
                t.entries().map(|(c, p, _)| (c, p.to_string())).collect();
            let mut by_conn = BTreeSet::new();
            for (&conn, ids) in &t.by_conn {
                assert!(!ids.is_empty());
                for &id in ids {
                    by_conn.insert((conn, t.name(id).expect("named").to_string()));
                }
            }
            assert_eq!(pairs, by_conn);
            assert_eq!(t.total, pairs.len());
            let recursive = t
                .entries()
                .filter(|(_, _, m)| *m == Mode::Recursive)
                .count();
            assert_eq!(t.recursive, recursive);
            assert_eq!(t.recursive_of.values().sum::<usize>(), recursive);
            assert_eq!(
                t.retired,
                t.retiring.iter().map(|r| r.conn).collect::<HashSet<_>>()
            );
            for (path, watched) in &t.by_path {
                assert!(!watched.watchers.is_empty());
                // Only retired connections leave stale entries.
                for conn in watched.watchers.keys() {
                    assert!(
                        t.retired.contains(conn)
                            || t.by_conn
                                .get(conn)
                                .is_some_and(|ids| ids.contains(&watched.id)),
                        "{conn} on {path}"
                    );
                }
                assert_eq!(t.name(watched.id), Some(&**path));
            }
            let named = t.names.iter().filter(|n| n.is_some()).count();
            assert_eq!(named, t.by_path.len());
            assert_eq!(named + t.free.len(), t.names.len());
        }

        proptest! {
            #[test]
            fn tables_agree(ops in proptest::collection::vec((0u8..5, 0u64..4, 0usize..6, 0u8..3), 0..80)) {
                let paths = ["/a", "/a/b", "/a/b/c", "/d", "/e", "/"];
                // Every gone connection with more than one watch is retired and swept later.
                let mut t = WatchTable { inline_sweep: 1, ..WatchTable::default() };
                // Connection ids are never reused: a gone one comes back under a new id.
                let mut generation = [0u64; 4];
                for (op, conn, p, m) in ops {
                    let mode = [Mode::Standard, Mode::Persistent, Mode::Recursive][m as usize];
                    let id = conn + 4 * generation[conn as usize];
                    match op {
                        0 => t.add(paths[p], id, mode),
                        1 => { t.remove(paths[p], id); }
                        2 => {
                            let hit = t.trigger(paths[p], EventType::NodeDataChanged);
                            prop_assert!(hit.iter().all(|c| !t.retired.contains(c)));
                        }
                        3 => {
                            t.remove_conn(id);
                            generation[conn as usize] += 1;
                        }
                        _ => { t.sweep(m as usize, &mut Spare::default()); }
                    }
                    check(&t);
                }
                while t.sweep(2, &mut Spare::default()) > 0 {
                    check(&t);
                }
                prop_assert!(!t.sweep_pending());
                let named = t.names.iter().filter(|n| n.is_some()).count();
                prop_assert_eq!(named, t.by_path.len());
            }
        }
    }
}
