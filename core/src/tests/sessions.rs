//! Handshakes, reattach, expiry and closeSession (docs/protocol.md §2.4, §13).

use shepherd_protocol::Request;

use super::*;

fn reattach(c: &Client, passwd: Vec<u8>, last_zxid_seen: i64) -> ConnectRequest {
    ConnectRequest {
        last_zxid_seen,
        timeout: 10_000,
        session_id: c.session,
        passwd: Some(passwd),
        read_only: Some(false),
        ..Default::default()
    }
}

#[test]
fn new_sessions_and_timeout_negotiation() {
    let mut h = H::new();
    for (asked, got) in [
        (1, 4000),
        (0, 4000),
        (-5, 4000),
        (1_000_000_000, 40_000),
        (30_000, 30_000),
    ] {
        assert_eq!(h.connect_with(asked).timeout, got);
    }
    let sessions = h.core.sessions();
    assert_eq!(sessions.len(), 5);
    assert_eq!(sessions[1].id, sessions[0].id + 1);
    assert_eq!(sessions[0].id >> 56, 1);
    // 44-byte request, 36-byte response; password always 16 bytes.
    let req = ConnectRequest {
        timeout: 30_000,
        passwd: None,
        read_only: None,
        ..Default::default()
    };
    let (conn, actions, response) = h.handshake(&req);
    let Action::Send(_, payload) = &actions[0] else {
        panic!()
    };
    assert_eq!(payload.len(), 36);
    let response = response.unwrap();
    assert_eq!(response.passwd.unwrap().len(), 16);
    assert_eq!(response.read_only, None);
    assert_eq!(h.core.connection_session(conn), Some(response.session_id));
    assert_eq!(h.core.session_timeout(response.session_id), Some(30_000));
}

#[test]
fn refused_handshakes_close_without_reply() {
    let mut h = H::new();
    let conn = h.open();
    assert_eq!(
        h.core.connect(conn, &[0; 10], h.now),
        vec![Action::Close(conn)]
    );
    let req = ConnectRequest {
        last_zxid_seen: 99,
        timeout: 30_000,
        passwd: Some(vec![0; 16]),
        ..Default::default()
    };
    let (conn, actions, _) = h.handshake(&req);
    assert_eq!(actions, vec![Action::Close(conn)]);
    assert_eq!(h.core.last_zxid(), 0);
    h.core.set_last_zxid(99);
    let (_, _, response) = h.handshake(&req);
    assert!(response.is_some_and(|r| r.session_id != 0));
}

#[test]
fn reattach_keeps_the_session() {
    let mut h = H::new();
    let mut c = h.connect();
    h.send(&mut c, create_flags("/e", 1));
    let zxid = h.core.last_zxid();
    let (conn, actions, response) = h.handshake(&reattach(&c, c.passwd.clone(), zxid));
    // The old connection is closed first (docs/protocol.md §2.4 6a).
    assert_eq!(actions[0], Action::Close(c.conn));
    let r = response.unwrap();
    assert_eq!(
        (r.session_id, r.passwd.as_deref(), r.timeout),
        (c.session, Some(&c.passwd[..]), 10_000)
    );
    assert_eq!(h.core.last_zxid(), zxid, "no zxid for a reattach");
    assert_eq!(h.core.sessions()[0].conn, Some(conn));
    assert_eq!(h.core.sessions()[0].ephemerals, ["/e"]);
    // The old connection is dead.
    assert!(h.send(&mut c, Request::Ping).actions.is_empty());
}

#[test]
fn wrong_password_closes_only_the_new_connection_and_keeps_the_session() {
    let mut h = H::new();
    let c = h.connect();
    let (conn, actions, response) = h.handshake(&reattach(&c, vec![1; 16], 0));
    assert!(
        !actions.contains(&Action::Close(c.conn)),
        "the live connection stays: {actions:?}"
    );
    assert_eq!(actions.last(), Some(&Action::Close(conn)));
    let r = response.unwrap();
    assert_eq!(
        (r.timeout, r.session_id, r.passwd),
        (0, 0, Some(vec![0; 16]))
    );
    assert_eq!(r.read_only, Some(false));
    let (_, _, response) = h.handshake(&reattach(&c, c.passwd.clone(), 0));
    assert_eq!(response.unwrap().session_id, c.session);
    // An unknown session is invalid too.
    let mut unknown = reattach(&c, c.passwd.clone(), 0);
    unknown.session_id += 1000;
    let (_, actions, response) = h.handshake(&unknown);
    assert_eq!(response.unwrap().session_id, 0);
    assert_eq!(actions.len(), 2);
}

#[test]
fn expiry_between_timeout_and_timeout_plus_tick() {
    let mut h = H::new();
    let mut a = h.connect_with(4000);
    let mut b = h.connect();
    h.send(&mut a, create("/p", b""));
    h.send(&mut a, create_flags("/p/e", 1));
    h.send(&mut b, exists("/p/e", true));
    h.send(&mut b, get_children("/p", true));
    // Touch at T0 + 500: the bucket is ((T0 + 500 + 4000) / 2000 + 1) * 2000 = T0 + 6000.
    h.advance(500);
    h.send(&mut a, Request::Ping);
    let expiry = h
        .core
        .sessions()
        .iter()
        .find(|s| s.id == a.session)
        .unwrap()
        .expires_at_ms;
    assert_eq!(expiry, T0.mono_ms + 6000);
    assert_eq!(h.core.next_deadline(), Some(expiry));
    h.advance(5999 - 500);
    assert!(h.tick().is_empty());
    h.advance(1);
    let zxid = h.core.last_zxid();
    let actions = h.tick();
    assert_eq!(h.core.last_zxid(), zxid + 1, "closeSession takes one zxid");
    assert_eq!(
        all_events(&actions),
        [
            (b.conn, EventType::NodeDeleted, "/p/e".into()),
            (b.conn, EventType::NodeChildrenChanged, "/p".into())
        ]
    );
    // The expired session's socket is closed, without a reply, after the events.
    assert_eq!(actions.last(), Some(&Action::Close(a.conn)));
    assert_eq!(h.core.ephemerals_count(), 0);
    let p = h.send(&mut b, exists("/p", false)).stat();
    assert_eq!((p.pzxid, p.cversion), (zxid + 1, 2));
    assert!(h.send(&mut a, Request::Ping).actions.is_empty());
    let (_, _, response) = h.handshake(&reattach(&a, a.passwd.clone(), 0));
    assert_eq!(response.unwrap().timeout, 0);
}

#[test]
fn a_silent_session_dies_within_one_tick_after_its_timeout() {
    for offset in [0u64, 700, 1999] {
        let mut h = H::new();
        h.advance(offset);
        let c = h.connect_with(4000);
        let deadline = h.core.next_deadline().unwrap();
        let since = deadline - h.now.mono_ms;
        assert!((4000..=6000).contains(&since), "{since}");
        h.advance(since - 1);
        assert!(h.tick().is_empty());
        h.advance(1);
        // Still connected: the socket is closed, with no reply and no event.
        assert_eq!(h.tick(), [Action::Close(c.conn)]);
        assert!(h.core.sessions().is_empty());
    }
}

#[test]
fn disconnect_keeps_session_and_expire_session_works() {
    let mut h = H::new();
    let mut c = h.connect();
    h.send(&mut c, create_flags("/e", 1));
    h.core.close_connection(c.conn);
    assert_eq!(h.core.sessions()[0].conn, None);
    assert_eq!(h.core.ephemerals_count(), 1);
    let actions = h.core.expire_session(c.session, h.now);
    assert!(actions.is_empty());
    assert_eq!(h.core.ephemerals_count(), 0);
    assert!(h.core.expire_session(c.session, h.now).is_empty());
}

#[test]
fn close_session_replies_then_closes() {
    let mut h = H::new();
    let mut a = h.connect();
    let mut b = h.connect();
    h.send(&mut a, create_flags("/e", 1));
    h.send(&mut b, exists("/e", true));
    h.send(&mut a, exists("/e", true));
    let out = h.send(&mut a, Request::CloseSession);
    assert_eq!(
        out.events(b.conn),
        [(EventType::NodeDeleted, "/e".to_string())]
    );
    assert_eq!(
        out.events(a.conn),
        [(EventType::NodeDeleted, "/e".to_string())]
    );
    assert_eq!((out.err(), out.zxid()), (0, h.core.last_zxid()));
    assert_eq!(out.actions.last(), Some(&Action::Close(a.conn)));
    assert_eq!(h.core.sessions().len(), 1);
    assert!(h.send(&mut a, Request::Ping).actions.is_empty());
}

#[test]
fn requests_touch_the_session() {
    let mut h = H::new();
    let mut c = h.connect_with(4000);
    for _ in 0..10 {
        h.advance(3000);
        assert!(h.tick().is_empty());
        h.send(&mut c, get_data("/", false));
    }
    assert_eq!(h.core.sessions().len(), 1);
}
