//! The core's test controls and the views they read: watch-trigger summaries with ZooKeeper's
//! mntr meaning, delivered-notification counts, sessions with their watches, the tree and watch
//! dumps, request peeks, and rejected requests.

use shepherd_protocol::{
    AddWatchRequest, AuthPacket, CheckVersionRequest, ErrorCode, EventType::*, MultiOp,
    MultiRequest, Request, encode_request,
};

use super::*;
use crate::{TriggerSummary, WatchKind, WatchMode, peek};

fn summary(count: u64, sum: u64, min: u64, max: u64) -> TriggerSummary {
    TriggerSummary {
        count,
        sum,
        min,
        max,
    }
}

/// The cases verified against ZooKeeper 3.8's mntr: one sample per trigger that matched, valued
/// at the number matched; a delete samples both tables even for one connection; filtered
/// events are matched (sampled) but not delivered (not counted as notifications).
#[test]
fn trigger_summaries_match_zookeeper_and_delivery_counts_differ() {
    let mut h = H::new();
    let mut a = h.connect();
    let mut b = h.connect();
    h.send(&mut a, create("/a", b"x"));
    h.send(&mut a, create("/b", b"x"));
    // Two connections watch /a; a's getData and exists are one registration (docs/protocol.md §9.4).
    h.send(&mut a, get_data("/a", true));
    h.send(&mut a, exists("/a", true));
    h.send(&mut b, get_data("/a", true));
    h.send(&mut a, set_data("/a", b"y", -1));
    assert_eq!(h.core.metrics().node_changed_triggers, summary(1, 2, 2, 2));
    assert_eq!(h.core.metrics().node_changed_triggers.avg(), 2.0);
    // No watcher: no sample.
    h.send(&mut a, set_data("/a", b"z", -1));
    assert_eq!(h.core.metrics().node_changed_triggers.count, 1);
    // Delete: a in both tables of /b, b on the children of /.
    h.send(&mut a, exists("/b", true));
    h.send(&mut a, get_children("/b", true));
    h.send(&mut b, get_children("/", true));
    let out = h.send(&mut a, delete("/b", -1));
    assert_eq!(out.events(a.conn), [(NodeDeleted, "/b".to_string())]);
    assert_eq!(h.core.metrics().node_deleted_triggers, summary(2, 2, 1, 1));
    assert_eq!(h.core.metrics().node_children_triggers, summary(1, 1, 1, 1));
    // ACL: b may not read /s, so its NodeCreated is sampled but not delivered.
    let alice = AuthPacket {
        auth_type: 0,
        scheme: "digest".into(),
        auth: Some(b"u:p".to_vec()),
    };
    h.send(&mut a, Request::Auth(alice));
    h.send(&mut a, exists("/s", true));
    h.send(&mut b, exists("/s", true));
    let out = h.send(&mut a, create_acl("/s", vec![digest_acl(31, "u:p")]));
    assert_eq!(out.events(b.conn), []);
    assert_eq!(out.events(a.conn).len(), 1);
    let m = h.core.metrics();
    assert_eq!(m.node_created_triggers, summary(1, 2, 2, 2));
    let counts = h.core.notification_counts();
    assert_eq!(counts.node_data_changed, 2);
    assert_eq!(counts.node_deleted, 1);
    assert_eq!(counts.node_children_changed, 1);
    assert_eq!(counts.node_created, 1);
    assert_eq!(counts.total(), 5);
    assert_eq!(counts.session(a.session), 3);
    assert_eq!(counts.session(b.session), 2);
    assert_eq!(counts.of(NodeCreated), 1);
    // Each delivered event is 16 header + 8 + the path string.
    assert!(m.watch_bytes > 5 * 24);
}

#[test]
fn sessions_list_their_connections_watches_and_dump_watches_lists_all() {
    let mut h = H::new();
    let mut a = h.connect();
    let mut b = h.connect();
    h.send(&mut a, create("/w", b""));
    h.send(&mut a, get_data("/w", true));
    h.send(&mut a, get_children("/", true));
    h.send(
        &mut b,
        Request::AddWatch(AddWatchRequest {
            path: "/w".into(),
            mode: 1,
        }),
    );
    let sessions = h.core.sessions();
    let sa = sessions.iter().find(|s| s.id == a.session).unwrap();
    let watches: Vec<_> = sa
        .watches
        .iter()
        .map(|w| (w.path.as_str(), w.kind, w.mode))
        .collect();
    assert_eq!(
        watches,
        [
            ("/", WatchKind::Child, WatchMode::Standard),
            ("/w", WatchKind::Data, WatchMode::Standard),
        ]
    );
    let sb = sessions.iter().find(|s| s.id == b.session).unwrap();
    assert_eq!(sb.watches.len(), 2, "a persistent watch is in both tables");
    assert!(
        sb.watches
            .iter()
            .all(|w| w.mode == WatchMode::PersistentRecursive && w.session == Some(b.session))
    );
    assert_eq!(h.core.dump_watches().len(), 4);
    // Watches belong to the connection: gone with it, the session stays.
    h.core.close_connection(a.conn);
    let sa = h
        .core
        .sessions()
        .into_iter()
        .find(|s| s.id == a.session)
        .unwrap();
    assert!(sa.watches.is_empty() && sa.conn.is_none());
    assert_eq!(h.core.session_connection(b.session), Some(b.conn));
}

#[test]
fn dump_tree_lists_every_node_with_its_stat() {
    let mut h = H::new();
    let mut a = h.connect();
    h.send(&mut a, create("/d", b"four"));
    let tree = h.core.dump_tree();
    let paths: Vec<_> = tree.iter().map(|n| n.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/",
            "/d",
            "/zookeeper",
            "/zookeeper/config",
            "/zookeeper/quota"
        ]
    );
    let d = &tree[1];
    assert_eq!(d.data_len, 4);
    assert_eq!(d.stat.data_length, 4);
    assert_eq!(d.stat.czxid, h.core.last_zxid());
}

#[test]
fn peek_names_the_opcode_and_every_path() {
    let mut payload = Vec::new();
    encode_request(7, &create("/locks/x", b""), &mut payload);
    let p = peek(&payload).unwrap();
    assert_eq!(
        (p.xid, p.op, p.paths),
        (7, Some(OpCode::Create), vec!["/locks/x".to_string()])
    );
    let multi = Request::Multi(MultiRequest {
        ops: vec![
            MultiOp::Check(CheckVersionRequest {
                path: "/a".into(),
                version: 0,
            }),
            MultiOp::Delete(DeleteRequest {
                path: "/b/c".into(),
                version: -1,
            }),
        ],
    });
    payload.clear();
    encode_request(8, &multi, &mut payload);
    assert_eq!(peek(&payload).unwrap().paths, ["/a", "/b/c"]);
    payload.clear();
    encode_request(-2, &Request::Ping, &mut payload);
    let p = peek(&payload).unwrap();
    assert_eq!((p.op, p.paths.len()), (Some(OpCode::Ping), 0));
    assert!(peek(&[0, 0, 0]).is_none());
}

#[test]
fn a_rejected_request_is_not_applied_and_takes_no_zxid() {
    let mut h = H::new();
    let c = h.connect();
    let zxid = h.core.last_zxid();
    let mut payload = Vec::new();
    encode_request(5, &create("/r", b""), &mut payload);
    h.advance(20_000);
    let actions = h
        .core
        .reply_error(c.conn, &payload, ErrorCode::ConnectionLoss, h.now);
    let [Action::Send(conn, reply)] = &actions[..] else {
        panic!("one reply: {actions:?}");
    };
    assert_eq!(*conn, c.conn);
    let header = decode_from::<ReplyHeader>(reply).unwrap();
    assert_eq!((header.xid, header.zxid, header.err), (5, zxid, -4));
    assert_eq!(h.core.last_zxid(), zxid);
    assert!(h.core.dump_tree().iter().all(|n| n.path != "/r"));
    // The session was touched: still alive past its original expiry.
    h.advance(15_000);
    assert!(h.tick().is_empty());
}
