//! Watch registrations (docs/protocol.md §9) with ZooKeeper 3.8's semantics: two tables (data and child), and in
//! each table **one mode per (connection, path)**, the last registration overwriting the
//! previous one (docs/protocol.md §9.4).
//!
//! Invariants: `by_path` and `by_conn` describe the same set of (connection, path) pairs and
//! hold no empty entry; `total` counts those pairs, so the figures mntr and `wchs` print are
//! read without walking the tables; `recursive` counts the recursive entries, so ancestors are
//! only walked when one exists.
//! Triggering returns each matching connection once (docs/protocol.md §9.3) and consumes one-shot watches
//! whether or not the event is later filtered out by ACL (docs/protocol.md §9.9); delivery is the caller's job.

use std::collections::{BTreeMap, BTreeSet, HashMap};
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

/// One of the two watch managers.
///
/// A watched path's text is held once, shared by `by_path` and every connection's set in
/// `by_conn`: a million watches over a hundred thousand paths are then a million 16-byte
/// references, not a million copies of the path (docs/bench/watches.md).
#[derive(Debug, Default)]
pub(crate) struct WatchTable {
    by_path: HashMap<Arc<str>, BTreeMap<ConnId, Mode>>,
    by_conn: HashMap<ConnId, BTreeSet<Arc<str>>>,
    /// (connection, path) registrations, kept up to date by every change.
    total: usize,
    recursive: usize,
}

impl WatchTable {
    /// Registers (or overwrites, docs/protocol.md §9.4) the connection's watch on `path`. A herd waiter re-arms
    /// the same watch after every release, so the path is copied only when it is new to the table.
    pub fn add(&mut self, path: &str, conn: ConnId, mode: Mode) {
        let shared = match self.by_path.get_key_value(path) {
            Some((shared, _)) => Arc::clone(shared),
            None => {
                let shared: Arc<str> = Arc::from(path);
                self.by_path.insert(Arc::clone(&shared), BTreeMap::new());
                shared
            }
        };
        let old = self
            .by_path
            .get_mut(path)
            .expect("inserted above")
            .insert(conn, mode);
        if old.is_none() {
            self.total += 1;
        }
        if old == Some(Mode::Recursive) {
            self.recursive -= 1;
        }
        if mode == Mode::Recursive {
            self.recursive += 1;
        }
        self.by_conn.entry(conn).or_default().insert(shared);
    }

    /// Removes the connection's watch on `path`, whatever its mode. False if there was none.
    pub fn remove(&mut self, path: &str, conn: ConnId) -> bool {
        let Some(watchers) = self.by_path.get_mut(path) else {
            return false;
        };
        let Some(mode) = watchers.remove(&conn) else {
            return false;
        };
        if watchers.is_empty() {
            self.by_path.remove(path);
        }
        self.total -= 1;
        if mode == Mode::Recursive {
            self.recursive -= 1;
        }
        if let Some(paths) = self.by_conn.get_mut(&conn) {
            paths.remove(path);
            if paths.is_empty() {
                self.by_conn.remove(&conn);
            }
        }
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
        if self.by_path.contains_key(path) {
            return Ok(true);
        }
        if self.recursive > 0 && !path.starts_with('/') {
            return Err(ErrorCode::MarshallingError);
        }
        Ok(false)
    }

    /// Drops every watch of a connection (its socket is gone, docs/protocol.md §9.7).
    pub fn remove_conn(&mut self, conn: ConnId) {
        for path in self.by_conn.remove(&conn).unwrap_or_default() {
            if let Some(watchers) = self.by_path.get_mut(&path) {
                let removed = watchers.remove(&conn);
                if removed.is_some() {
                    self.total -= 1;
                }
                if removed == Some(Mode::Recursive) {
                    self.recursive -= 1;
                }
                if watchers.is_empty() {
                    self.by_path.remove(&path);
                }
            }
        }
    }

    /// Fires `event` at `path`: the connections to notify, once each (docs/protocol.md §9.3). One-shot watches
    /// at the path are consumed; recursive watches on the path or an ancestor match every event
    /// but NodeChildrenChanged; standard and persistent watches only match at the path itself.
    pub fn trigger(&mut self, path: &str, event: EventType) -> BTreeSet<ConnId> {
        let mut hit = BTreeSet::new();
        let mut consumed = Vec::new();
        if let Some(watchers) = self.by_path.get_mut(path) {
            // One pass that also drops the one-shot watches, rather than a lookup per watcher.
            watchers.retain(|&conn, &mut mode| match mode {
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
            if watchers.is_empty() {
                self.by_path.remove(path);
            }
        }
        self.total -= consumed.len();
        for conn in consumed {
            if let Some(paths) = self.by_conn.get_mut(&conn) {
                paths.remove(path);
                if paths.is_empty() {
                    self.by_conn.remove(&conn);
                }
            }
        }
        if self.recursive > 0 && event != EventType::NodeChildrenChanged {
            for ancestor in path::ancestors(path) {
                if let Some(watchers) = self.by_path.get(ancestor) {
                    hit.extend(
                        watchers
                            .iter()
                            .filter(|(_, m)| **m == Mode::Recursive)
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

    /// Number of paths with at least one registration.
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

    /// Up to `max` of one connection's watched paths that sort after `after` (all of them from
    /// the first when `None`), in order: a bounded slice of a walk that resumes where the last
    /// slice ended, whatever changed in between.
    pub fn paths_of_after(&self, conn: ConnId, after: Option<&str>, max: usize) -> Vec<String> {
        use std::ops::Bound::{Excluded, Unbounded};
        let Some(paths) = self.by_conn.get(&conn) else {
            return Vec::new();
        };
        let from = after.map_or(Unbounded, Excluded);
        paths
            .range::<str, _>((from, Unbounded))
            .take(max)
            .map(|path| path.to_string())
            .collect()
    }

    /// Every (connection, path) registration, with its mode.
    pub fn entries(&self) -> impl Iterator<Item = (ConnId, &str, Mode)> {
        self.by_path
            .iter()
            .flat_map(|(p, w)| w.iter().map(move |(c, m)| (*c, &**p, *m)))
    }

    /// One connection's registrations, by path.
    pub fn of_conn(&self, conn: ConnId) -> impl Iterator<Item = (&str, Mode)> {
        self.by_conn
            .get(&conn)
            .into_iter()
            .flatten()
            .filter_map(move |p| {
                let mode = self.by_path.get(&**p)?.get(&conn)?;
                Some((&**p, *mode))
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
            t.by_path.values().map(BTreeMap::len).sum()
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
        assert_eq!(t.paths_of_after(5, Option::None, 2), ["/x", "/y"]);
        assert_eq!(t.paths_of_after(5, Some("/y"), 2), ["/z"]);
        assert!(t.paths_of_after(5, Some("/z"), 2).is_empty());
        assert!(t.paths_of_after(6, Option::None, 2).is_empty());
    }
}
