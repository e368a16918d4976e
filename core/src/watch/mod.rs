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

mod sweep;
#[cfg(test)]
mod tests;

pub(crate) use sweep::Spare;

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
