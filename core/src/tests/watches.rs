//! Watches (docs/protocol.md §9): one-shot and persistent, trigger order, 3.8 overwrite, ACL filtering,
//! setWatches catch-up, check/removeWatches.

use shepherd_protocol::{
    AddWatchRequest, AuthPacket, ErrorResponse, EventType::*, RemoveWatchesRequest, Request,
    Response, SetWatches, SetWatches2,
};

use super::*;

fn add_watch(path: &str, mode: i32) -> Request {
    Request::AddWatch(AddWatchRequest {
        path: path.into(),
        mode,
    })
}

fn ev(t: EventType, p: &str) -> (EventType, String) {
    (t, p.to_string())
}

#[test]
fn event_precedes_the_reply_in_one_action_list() {
    let mut h = H::new();
    let mut c = h.connect();
    h.send(&mut c, create("/w", b""));
    h.send(&mut c, get_data("/w", true));
    let out = h.send(&mut c, set_data("/w", b"x", -1));
    let decoded = out.decoded(c.conn);
    assert_eq!(decoded.len(), 2);
    assert!(
        matches!(&decoded[0], Reply::Event(h, e) if h.zxid == -1 && e.event_type == NodeDataChanged && e.path == "/w")
    );
    assert!(matches!(&decoded[1], Reply::Ok(..)));
    // One-shot: gone after firing.
    assert!(
        h.send(&mut c, set_data("/w", b"y", -1))
            .events(c.conn)
            .is_empty()
    );
    assert_eq!(h.core.metrics().node_changed_watch_count, 1);
    assert_eq!(
        h.core.metrics().session_notifications.get(&c.session),
        Some(&1)
    );
}

#[test]
fn create_and_delete_trigger_order() {
    let mut h = H::new();
    let mut a = h.connect();
    let mut b = h.connect();
    h.send(&mut a, create("/p", b""));
    // An exist watch on a missing node is registered despite NoNode.
    assert_eq!(h.send(&mut b, exists("/p/c", true)).err(), -101);
    h.send(&mut b, get_children("/p", true));
    let out = h.send(&mut a, create("/p/c", b""));
    assert_eq!(
        out.events(b.conn),
        [ev(NodeCreated, "/p/c"), ev(NodeChildrenChanged, "/p")]
    );
    // Data and child watch on the same node: one NodeDeleted (docs/protocol.md §9.3), then the parent's event.
    h.send(&mut b, get_data("/p/c", true));
    h.send(&mut b, get_children("/p/c", true));
    h.send(&mut b, get_children("/p", true));
    let out = h.send(&mut a, delete("/p/c", -1));
    assert_eq!(
        out.events(b.conn),
        [ev(NodeDeleted, "/p/c"), ev(NodeChildrenChanged, "/p")]
    );
    assert_eq!(h.core.watch_count(), 0);
    // getData and getChildren leave no watch on failure.
    h.send(&mut b, get_data("/none", true));
    h.send(&mut b, get_children("/none", true));
    assert_eq!(h.core.watch_count(), 0);
    // A child watch alone sees its node's deletion.
    h.send(&mut a, create("/q", b""));
    h.send(&mut b, get_children("/q", true));
    assert_eq!(
        h.send(&mut a, delete("/q", -1)).events(b.conn),
        [ev(NodeDeleted, "/q")]
    );
}

#[test]
fn persistent_and_recursive_watches() {
    let mut h = H::new();
    let mut a = h.connect();
    let mut b = h.connect();
    h.send(&mut a, create("/p", b""));
    assert_eq!(
        h.send(&mut b, add_watch("/p", 0)).ok(),
        Response::AddWatch(ErrorResponse { err: 0 })
    );
    let out = h.send(&mut a, create("/p/c", b""));
    assert_eq!(out.events(b.conn), [ev(NodeChildrenChanged, "/p")]);
    assert_eq!(
        h.send(&mut a, set_data("/p", b"1", -1)).events(b.conn),
        [ev(NodeDataChanged, "/p")]
    );
    assert_eq!(
        h.send(&mut a, set_data("/p", b"2", -1)).events(b.conn),
        [ev(NodeDataChanged, "/p")]
    );

    // 3.8: recursive replaces persistent, so no NodeChildrenChanged any more (docs/protocol.md §9.4).
    h.send(&mut b, add_watch("/p", 1));
    let out = h.send(&mut a, create("/p/c/d", b""));
    assert_eq!(out.events(b.conn), [ev(NodeCreated, "/p/c/d")]);
    assert_eq!(
        h.send(&mut a, set_data("/p/c", b"", -1)).events(b.conn),
        [ev(NodeDataChanged, "/p/c")]
    );
    assert_eq!(
        h.send(&mut a, delete("/p/c/d", -1)).events(b.conn),
        [ev(NodeDeleted, "/p/c/d")]
    );
    assert_eq!(
        h.core.data_watches(),
        [(b.conn, b.session, "/p".to_string())]
    );
    assert_eq!(h.core.watch_count(), 2);
    assert_eq!(h.send(&mut b, add_watch("/p", 2)).err(), -5);
}

#[test]
fn one_shot_registration_downgrades_persistent() {
    let mut h = H::new();
    let mut a = h.connect();
    let mut b = h.connect();
    h.send(&mut a, create("/p", b""));
    h.send(&mut b, add_watch("/p", 0));
    h.send(&mut b, get_data("/p", true));
    let first = h
        .send(&mut a, set_data("/p", b"1", -1))
        .events(b.conn)
        .len();
    let second = h
        .send(&mut a, set_data("/p", b"2", -1))
        .events(b.conn)
        .len();
    assert_eq!(first + second, 1);
    // The child table still holds the persistent mode.
    assert_eq!(
        h.send(&mut a, create("/p/x", b"")).events(b.conn),
        [ev(NodeChildrenChanged, "/p")]
    );
}

#[test]
fn events_are_filtered_by_read_acl() {
    let mut h = H::new();
    let mut owner = h.connect();
    let mut watcher = h.connect();
    let alice = AuthPacket {
        auth_type: 0,
        scheme: "digest".into(),
        auth: Some(b"alice:secret".to_vec()),
    };
    h.send(&mut owner, Request::Auth(alice));
    h.send(&mut owner, create("/pw", b""));
    h.send(&mut watcher, add_watch("/pw", 1));
    let secret = create_acl("/pw/secret", vec![digest_acl(31, "alice:secret")]);
    assert!(h.send(&mut owner, secret).events(watcher.conn).is_empty());
    let out = h.send(&mut owner, create("/pw/open", b""));
    assert_eq!(out.events(watcher.conn), [ev(NodeCreated, "/pw/open")]);
    // A one-shot watch is consumed even when its event is filtered.
    h.send(&mut watcher, exists("/pw/secret", true));
    assert!(
        h.send(&mut owner, set_data("/pw/secret", b"", -1))
            .events(watcher.conn)
            .is_empty()
    );
    assert_eq!(h.core.data_watches().len(), 1);
    // super reads everything.
    let mut h = H::with(CoreConfig {
        super_digest: Some(crate::acl::digest_identity(b"super:test")),
        ..CoreConfig::default()
    });
    let mut owner = h.connect();
    let mut root = h.connect();
    let su = AuthPacket {
        auth_type: 0,
        scheme: "digest".into(),
        auth: Some(b"super:test".to_vec()),
    };
    h.send(&mut root, Request::Auth(su));
    let write_only = shepherd_protocol::Acl {
        perms: 2,
        id: shepherd_protocol::Id::new("world", "anyone"),
    };
    h.send(&mut owner, create_acl("/s", vec![write_only]));
    h.send(&mut root, exists("/s", true));
    h.send(&mut owner, exists("/s", true));
    let out = h.send(&mut owner, set_data("/s", b"", -1));
    assert_eq!(out.err(), 0);
    assert_eq!(out.events(root.conn).len(), 1);
    assert!(out.events(owner.conn).is_empty());
}

#[test]
fn set_watches_catch_up_then_register() {
    let mut h = H::new();
    let mut a = h.connect();
    h.send(&mut a, create("/sw", b""));
    h.send(&mut a, create("/same", b""));
    let rel = h.core.last_zxid();
    h.send(&mut a, set_data("/sw", b"x", -1));
    h.send(&mut a, create("/sw/x", b""));
    let mut b = h.connect();
    let sw = SetWatches {
        relative_zxid: rel,
        data_watches: vec!["/sw".into(), "/gone".into(), "/same".into()],
        exist_watches: vec!["/sw/x".into(), "/notyet".into()],
        child_watches: vec!["/sw".into(), "/same".into()],
    };
    let out = h.send(&mut b, Request::SetWatches(sw));
    assert_eq!(
        out.events(b.conn),
        [
            ev(NodeDataChanged, "/sw"),
            ev(NodeDeleted, "/gone"),
            ev(NodeCreated, "/sw/x"),
            ev(NodeChildrenChanged, "/sw")
        ]
    );
    assert!(
        matches!(out.decoded(b.conn).last(), Some(Reply::Ok(h, Response::SetWatches)) if h.zxid == out.zxid())
    );
    assert_eq!(
        h.send(&mut a, create("/notyet", b"")).events(b.conn),
        [ev(NodeCreated, "/notyet")]
    );
    assert_eq!(
        h.send(&mut a, set_data("/same", b"", -1)).events(b.conn),
        [ev(NodeDataChanged, "/same")]
    );
    assert_eq!(
        h.send(&mut a, create("/same/k", b"")).events(b.conn),
        [ev(NodeChildrenChanged, "/same")]
    );

    let sw2 = SetWatches2 {
        relative_zxid: h.core.last_zxid(),
        persistent_watches: vec!["/same".into()],
        persistent_recursive_watches: vec!["/sw".into()],
        ..SetWatches2::default()
    };
    assert!(
        h.send(&mut b, Request::SetWatches2(sw2))
            .events(b.conn)
            .is_empty()
    );
    assert_eq!(
        h.send(&mut a, set_data("/same", b"", -1)).events(b.conn),
        [ev(NodeDataChanged, "/same")]
    );
    assert_eq!(
        h.send(&mut a, set_data("/sw/x", b"", -1)).events(b.conn),
        [ev(NodeDataChanged, "/sw/x")]
    );
}

#[test]
fn check_and_remove_watches() {
    let mut h = H::new();
    let mut c = h.connect();
    h.send(&mut c, create("/w", b""));
    let rw = |op: bool, t: i32| {
        let r = RemoveWatchesRequest {
            path: "/w".into(),
            watcher_type: t,
        };
        if op {
            Request::RemoveWatches(r)
        } else {
            Request::CheckWatches(r)
        }
    };
    assert_eq!(h.send(&mut c, rw(false, 2)).err(), -121);
    h.send(&mut c, get_data("/w", true));
    assert_eq!(h.send(&mut c, rw(false, 1)).err(), -121);
    assert_eq!(h.send(&mut c, rw(false, 2)).err(), 0);
    assert_eq!(h.send(&mut c, rw(false, 3)).err(), 0);
    for t in [4, 5, 0] {
        assert_eq!(h.send(&mut c, rw(false, t)).err(), -5);
        assert_eq!(h.send(&mut c, rw(true, t)).err(), -5);
    }
    let out = h.send(&mut c, rw(true, 3));
    assert_eq!((out.err(), out.events(c.conn).len()), (0, 0));
    assert_eq!(h.send(&mut c, rw(true, 3)).err(), -121);
    h.send(&mut c, add_watch("/w", 0));
    assert_eq!(h.send(&mut c, rw(true, 1)).err(), 0);
    assert_eq!(h.core.watch_count(), 1);
}

#[test]
fn closing_a_connection_drops_its_watches() {
    let mut h = H::new();
    let mut a = h.connect();
    let mut b = h.connect();
    h.send(&mut a, create("/w", b""));
    h.send(&mut b, get_data("/w", true));
    h.send(&mut b, add_watch("/", 1));
    assert_eq!(h.core.watch_count(), 3);
    h.core.close_connection(b.conn);
    assert_eq!(h.core.watch_count(), 0);
    assert!(all_events(&h.send(&mut a, set_data("/w", b"", -1)).actions).is_empty());
}

/// A connection holding many watches goes without the core doing work in proportion to them in
/// one call: the close takes its registrations out of every count and lookup at once, and
/// `sweep` removes their entries at most `max` at a time. Before, the close removed them all
/// in one call (and so in one hold of the shell's core lock: 1–14 s for 1–3 million watches,
/// long enough for every other session to expire).
#[test]
fn a_closed_connections_watches_go_in_bounded_slices() {
    const SLICE: usize = 1024;
    let held = 5 * SLICE + 7;
    let mut h = H::new();
    let mut a = h.connect();
    let mut b = h.connect();
    for i in 0..held {
        assert_eq!(h.send(&mut a, exists(&format!("/s{i}"), true)).err(), -101);
    }
    h.send(&mut a, add_watch("/r", 1));
    h.send(&mut a, get_children("/", true));
    // `b` shares one of the paths, and watches one of its own.
    h.send(&mut b, exists("/s0", true));
    h.send(&mut b, exists("/mine", true));
    assert!(h.core.watch_count() > held + 3);
    h.core.close_connection(a.conn);
    // Gone from every count and lookup at once...
    assert_eq!(h.core.watch_count(), 2);
    let summary = h.core.data_watch_summary();
    assert_eq!((summary.connections, summary.total), (1, 2));
    // ...but the close itself removed no more than one slice's worth of entries.
    assert!(h.core.sweep_pending());
    assert!(summary.paths > held - SLICE, "{summary:?}");
    // Nothing fires at the gone connection meanwhile: not its one-shot, persistent-recursive
    // or child watches.
    let out = h.send(&mut b, create("/s1", b""));
    assert!(
        all_events(&out.actions).is_empty(),
        "{:?}",
        all_events(&out.actions)
    );
    let out = h.send(&mut b, create("/r", b""));
    assert!(all_events(&out.actions).is_empty());
    let out = h.send(&mut b, create("/r/c", b""));
    assert!(all_events(&out.actions).is_empty());
    let out = h.send(&mut b, create("/s0", b""));
    assert_eq!(out.events(b.conn), [ev(NodeCreated, "/s0")]);
    // Each sweep call removes at most `max` entries, and the sweep ends.
    let mut paths = h.core.data_watch_summary().paths;
    let mut calls = 0;
    while h.core.sweep(SLICE).more {
        let now = h.core.data_watch_summary().paths;
        assert!(paths - now <= SLICE, "{paths} → {now}");
        paths = now;
        calls += 1;
        assert!(calls <= held / SLICE + 1, "the sweep ends");
    }
    assert!(!h.core.sweep_pending());
    let summary = h.core.data_watch_summary();
    assert_eq!(
        (summary.connections, summary.paths, summary.total),
        (1, 1, 1)
    );
    assert_eq!(h.core.data_watches().len(), 1);
    // The connection that stayed is served as before.
    let out = h.send(&mut b, create("/mine", b""));
    assert_eq!(out.events(b.conn), [ev(NodeCreated, "/mine")]);
    assert_eq!(h.core.watch_count(), 0);
}

/// checkWatches (op 17) on 3.8 asks whether anyone watches the path, not whether the asking
/// connection does (docs/protocol.md §9.8), and a path its parent walk cannot step through is
/// MarshallingError. Every expectation was observed on Debian's 3.8.0 over the raw wire, with
/// connection `a` setting the watches and `b` asking.
#[test]
fn check_watches_asks_whether_anyone_watches() {
    let mut h = H::new();
    let mut a = h.connect();
    let mut b = h.connect();
    let check = |path: &str, t: i32| {
        Request::CheckWatches(RemoveWatchesRequest {
            path: path.into(),
            watcher_type: t,
        })
    };
    h.send(&mut a, create("/cw", b""));
    h.send(&mut a, create("/cw2", b""));
    h.send(&mut a, get_data("/cw", true));
    h.send(&mut a, get_children("/cw2", true));
    let cases = [
        ("/cw", 1, -121),
        ("/cw", 2, 0),
        ("/cw", 3, 0),
        ("/cw2", 1, 0),
        ("/cw2", 2, -121),
        ("/cw2", 3, 0),
        ("/none", 3, -121),
        ("/cw/", 2, -121),
        ("", 3, -121),
        // The first parent step of a path without `/` throws.
        ("cw", 2, -5),
        ("cw", 3, -5),
        // With no recursive watch the walk stops after the path itself.
        ("a/b", 2, -121),
        ("x/", 2, -121),
        ("cw", 9, -5),
    ];
    for (path, t, err) in cases {
        assert_eq!(
            h.send(&mut b, check(path, t)).err(),
            err,
            "{path:?} type {t}"
        );
        assert_eq!(
            h.send(&mut a, check(path, t)).err(),
            err,
            "{path:?} type {t}"
        );
    }
    // Persistent and recursive watches sit in both tables; a recursive one counts only at
    // its own path, and makes every table that holds it walk to the root.
    h.send(&mut a, add_watch("/pw", 0));
    h.send(&mut a, add_watch("/rw", 1));
    let cases = [
        ("/pw", 1, 0),
        ("/pw", 2, 0),
        ("/rw", 3, 0),
        ("/rw/kid", 3, -121),
        ("/rw/", 3, -121),
        ("/", 3, -121),
        ("", 3, -121),
        ("a/b", 1, -5),
        ("a/b", 2, -5),
        ("x/", 2, -5),
    ];
    for (path, t, err) in cases {
        assert_eq!(
            h.send(&mut b, check(path, t)).err(),
            err,
            "{path:?} type {t}"
        );
    }
    // Removing the recursive watch from the data table only leaves the child table walking.
    let remove = Request::RemoveWatches(RemoveWatchesRequest {
        path: "/rw".into(),
        watcher_type: 2,
    });
    assert_eq!(h.send(&mut a, remove).err(), 0);
    for (path, t, err) in [
        ("a/b", 1, -5),
        ("a/b", 2, -121),
        ("a/b", 3, -5),
        ("/rw", 2, -121),
    ] {
        assert_eq!(
            h.send(&mut b, check(path, t)).err(),
            err,
            "{path:?} type {t}"
        );
    }
    // removeWatches stays per connection: b cannot remove a's watch.
    let remove = Request::RemoveWatches(RemoveWatchesRequest {
        path: "/cw".into(),
        watcher_type: 2,
    });
    assert_eq!(h.send(&mut b, remove).err(), -121);
}
