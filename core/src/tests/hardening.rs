//! Limits against hostile or careless clients, and the bookkeeping that keeps the core's
//! memory and work bounded: the identity limit per connection (docs/protocol.md §12.5), linear
//! ACL de-duplication (§12.3), per-session counters that go with their session, the bounded
//! slices of the diagnostic words, TTL nodes off by default, and the reaper's schedule after a
//! container made inside a multi.

use shepherd_protocol::{
    Acl, AuthPacket, CreateTTLRequest, GetACLResponse, Id, MultiOp, MultiRequest, Request,
    Response, perms,
};

use super::*;
use crate::acl::MAX_IDENTITIES;
use crate::{SessionCursor, WatchSummary};

fn auth(credential: &str) -> Request {
    Request::Auth(AuthPacket {
        auth_type: 0,
        scheme: "digest".into(),
        auth: Some(credential.as_bytes().to_vec()),
    })
}

fn who_am_i(h: &mut H, c: &mut Client) -> usize {
    match h.send(c, Request::WhoAmI).ok() {
        Response::WhoAmI(w) => w.client_info.len(),
        other => panic!("{other:?}"),
    }
}

fn acl(perms: i32, scheme: &str, id: &str) -> Acl {
    Acl {
        perms,
        id: Id::new(scheme, id),
    }
}

#[test]
fn repeated_auth_adds_nothing_and_fresh_identities_stop_at_the_limit() {
    let mut h = H::new();
    let mut flood = h.connect();
    let mut other = h.connect();
    for _ in 0..1000 {
        assert_eq!(h.send(&mut flood, auth("alice:secret")).err(), 0);
    }
    assert_eq!(who_am_i(&mut h, &mut flood), 2, "ip plus one digest");
    // The ip identity and alice take two places; the rest take one each.
    for i in 0..MAX_IDENTITIES - 2 {
        let out = h.send(&mut flood, auth(&format!("user{i}:pw")));
        assert_eq!(out.err(), 0, "identity {i}");
    }
    assert_eq!(who_am_i(&mut h, &mut flood), MAX_IDENTITIES);
    // One already held is still fine; one more is refused as ZooKeeper refuses any failed
    // auth: AuthFailed with zxid 0, then close.
    assert_eq!(h.send(&mut flood, auth("user0:pw")).err(), 0);
    let out = h.send(&mut flood, auth("one:more"));
    assert_eq!((out.err(), out.zxid()), (-115, 0));
    assert!(out.closed(flood.conn), "closed after AuthFailed");
    assert!(h.send(&mut flood, exists("/", false)).actions.is_empty());
    // Everyone else goes on.
    assert_eq!(h.send(&mut other, create("/still", b"")).err(), 0);
}

#[test]
fn super_needs_room_for_both_of_its_identities() {
    let super_digest = crate::acl::digest_identity(b"super:test");
    let mut h = H::with(CoreConfig {
        super_digest: Some(super_digest),
        ..CoreConfig::default()
    });
    let mut c = h.connect();
    for i in 0..MAX_IDENTITIES - 2 {
        assert_eq!(h.send(&mut c, auth(&format!("u{i}:p"))).err(), 0);
    }
    // One place left; super:test would add its digest and `super`: refused, nothing added.
    let out = h.send(&mut c, auth("super:test"));
    assert_eq!(out.err(), -115);
    assert!(out.closed(c.conn));
}

#[test]
fn acl_duplicates_go_in_one_pass_keeping_the_first_of_each() {
    let mut h = H::new();
    let mut c = h.connect();
    let a = acl(perms::ALL, "world", "anyone");
    let b = acl(perms::READ, "ip", "127.0.0.1");
    let d = acl(perms::READ, "world", "anyone");
    let given = vec![
        b.clone(),
        a.clone(),
        b.clone(),
        d.clone(),
        a.clone(),
        d.clone(),
    ];
    assert_eq!(h.send(&mut c, create_acl("/dup", given)).err(), 0);
    let stored = match h.send(&mut c, get_acl("/dup")).ok() {
        Response::GetACL(GetACLResponse { acl, .. }) => acl,
        other => panic!("{other:?}"),
    };
    assert_eq!(stored, [b, a, d], "ZooKeeper's removeDuplicates order");
}

/// A 1 MB create of 80 000 entries, 40 000 distinct: with the old list scan this took
/// minutes in a debug build (3.2 × 10⁹ comparisons); one pass takes milliseconds.
#[test]
fn a_huge_acl_is_deduplicated_linearly() {
    let mut h = H::new();
    let mut c = h.connect();
    let entries: Vec<Acl> = (0..80_000)
        .map(|i| i % 40_000)
        .map(|j| acl(perms::READ, "ip", &format!("10.{}.{}.1", j / 256, j % 256)))
        .chain([acl(perms::ALL, "world", "anyone")])
        .collect();
    assert_eq!(h.send(&mut c, create_acl("/big", entries)).err(), 0);
    let stored = match h.send(&mut c, get_acl("/big")).ok() {
        Response::GetACL(GetACLResponse { acl, .. }) => acl.len(),
        other => panic!("{other:?}"),
    };
    assert_eq!(stored, 40_001);
}

#[test]
fn a_sessions_notification_count_goes_with_the_session() {
    let mut h = H::new();
    let mut writer = h.connect();
    let mut closer = h.connect();
    let mut expirer = h.connect_with(4000);
    h.send(&mut writer, create("/n", b""));
    for c in [&mut closer, &mut expirer] {
        h.send(c, get_data("/n", true));
    }
    h.send(&mut writer, set_data("/n", b"x", -1));
    let count = |h: &H, s: SessionId| h.core.notification_counts().session(s);
    assert_eq!(count(&h, closer.session), 1);
    assert_eq!(count(&h, expirer.session), 1);
    h.send(&mut closer, Request::CloseSession);
    assert!(
        !h.core
            .metrics()
            .session_notifications
            .contains_key(&closer.session)
    );
    h.advance(10_000);
    h.tick();
    assert!(h.core.session_timeout(expirer.session).is_none(), "expired");
    assert!(h.core.metrics().session_notifications.is_empty());
    assert_eq!(h.core.notification_counts().total(), 2, "the totals stay");
}

#[test]
fn watch_slices_resume_and_cover_every_watch() {
    let mut h = H::new();
    let mut clients: Vec<Client> = (0..4).map(|_| h.connect()).collect();
    let mut owner = h.connect();
    for i in 0..10 {
        h.send(&mut owner, create(&format!("/w{i}"), b""));
    }
    for (n, c) in clients.iter_mut().enumerate() {
        // Client n watches n × 3 paths: 0, 3, 6 and 9, so slices cross connections.
        for i in 0..n * 3 {
            h.send(c, get_data(&format!("/w{i}"), true));
        }
    }
    let summary = h.core.data_watch_summary();
    assert_eq!(
        summary,
        WatchSummary {
            connections: 3,
            paths: 9,
            total: 18
        }
    );
    let mut cursor = h.core.data_watch_cursor();
    let mut walked = Vec::new();
    let mut slices = 0;
    while !h.core.data_watch_slice(&mut cursor, 4, &mut walked) {
        slices += 1;
        assert!(slices < 100, "the walk ends");
    }
    // The walk goes by connection, then by each path's number in the table, which need not
    // follow the names: compare as sets.
    let mut all = h.core.data_watches();
    walked.sort();
    all.sort();
    assert_eq!(walked, all, "the same as one full read");
    assert!(slices >= 18 / 4, "bounded slices: {slices}");
}

#[test]
fn session_slices_resume_within_a_sessions_ephemerals() {
    let mut h = H::new();
    let mut a = h.connect();
    let mut b = h.connect();
    let _idle = h.connect();
    for i in 0..7 {
        h.send(&mut a, create_flags(&format!("/a{i}"), 1));
    }
    for i in 0..3 {
        h.send(&mut b, create_flags(&format!("/b{i}"), 1));
    }
    let mut cursor = SessionCursor::default();
    let (mut sessions, mut ephemerals) = (Vec::new(), Vec::new());
    let mut slices = 0;
    while !h
        .core
        .session_slice(&mut cursor, 3, &mut sessions, &mut ephemerals)
    {
        slices += 1;
        assert!(slices < 100, "the walk ends");
    }
    let full = h.core.sessions();
    let want: Vec<_> = full.iter().map(|s| (s.id, s.expires_at_ms)).collect();
    assert_eq!(sessions, want);
    let want: Vec<_> = full
        .iter()
        .flat_map(|s| s.ephemerals.iter().map(move |p| (s.id, p.clone())))
        .collect();
    assert_eq!(ephemerals, want);
    assert!(slices >= 4, "13 steps in slices of 3: {slices}");
    // mntr's ephemerals_count is a counter: it follows deletes and session ends.
    assert_eq!(h.core.ephemerals_count(), 10);
    h.send(&mut b, delete("/b0", -1));
    h.send(&mut a, Request::CloseSession);
    assert_eq!(h.core.ephemerals_count(), 2);
}

#[test]
fn ttl_nodes_are_off_by_default_as_on_zookeeper() {
    assert!(!CoreConfig::default().extended_types_enabled);
    let mut h = H::with(CoreConfig::default());
    let mut c = h.connect();
    let ttl = Request::CreateTTL(CreateTTLRequest {
        path: "/t".into(),
        data: None,
        acl: open_acl(),
        flags: 5,
        ttl: 100,
    });
    let out = h.send(&mut c, ttl);
    assert_eq!(out.err(), -6, "Unimplemented");
    assert!(!out.closed(c.conn), "the connection stays open");
    assert_eq!(h.send(&mut c, exists("/t", false)).err(), -101);
}

#[test]
fn a_container_made_in_a_multi_schedules_the_reaper() {
    let mut h = H::with(CoreConfig {
        container_check_interval_ms: 1000,
        ..CoreConfig::default()
    });
    let mut c = h.connect_with(40_000);
    let session_deadline = h.core.next_deadline();
    h.advance(2500);
    let ops = vec![
        MultiOp::CreateContainer(create_req("/box", None, 4)),
        MultiOp::Create(create_req("/box/x", None, 0)),
        MultiOp::Delete(shepherd_protocol::DeleteRequest {
            path: "/box/x".into(),
            version: -1,
        }),
    ];
    assert_eq!(
        h.send(&mut c, Request::Multi(MultiRequest { ops })).err(),
        0
    );
    // The first grid point of the reaper's timer after now (1 s, 2 s, 3 s from the start).
    assert_eq!(h.core.next_deadline(), Some(T0.mono_ms + 3000));
    assert!(h.core.next_deadline() < session_deadline);
    h.advance(500);
    let events = all_events(&h.tick());
    assert!(events.is_empty(), "nobody watches: {events:?}");
    assert_eq!(h.send(&mut c, exists("/box", false)).err(), -101, "reaped");
}
