//! The watch table's own tests: every kind of change, and the invariants under any sequence.

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
