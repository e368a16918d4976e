//! Restoring a core from snapshot records (`restore.rs`): what a restored core looks like to
//! clients (sessions resumable with the same secret, new ids that do not collide, the unknown
//! session answered as expired), the refusals of records that do not make a tree, and the
//! clean-up of dead sessions' ephemerals.

use shepherd_protocol::txn::StatPersisted;

use super::*;
use crate::{Restore, RestoreError};

fn stat(czxid: i64, owner: i64) -> StatPersisted {
    StatPersisted {
        czxid,
        mzxid: czxid,
        ctime: 1,
        mtime: 1,
        version: 0,
        cversion: 0,
        aversion: 0,
        ephemeral_owner: owner,
        pzxid: czxid,
    }
}

fn with_root(config: CoreConfig) -> Restore {
    let mut r = Restore::new(config, T0);
    r.node("", Some(vec![]), -1, stat(0, 0)).unwrap();
    r
}

#[test]
fn refuses_records_that_do_not_make_a_tree() {
    let mut r = Restore::new(CoreConfig::default(), T0);
    let orphan = r.node("/a", None, -1, stat(1, 0));
    assert_eq!(orphan, Err(RestoreError::Orphan { path: "/a".into() }));
    r.node("", None, -1, stat(0, 0)).unwrap();
    assert!(matches!(
        r.node("", None, -1, stat(0, 0)),
        Err(RestoreError::Duplicate { .. })
    ));
    // Only the last name is checked below a parent found in the tree; `//a` splits to the
    // root, so it must be caught by that check too.
    for bad in ["/a/", "//a", "/.", "/a\u{1}", "x"] {
        assert!(
            matches!(
                r.node(bad, None, -1, stat(1, 0)),
                Err(RestoreError::InvalidPath { .. })
            ),
            "{bad:?}"
        );
    }
    assert!(matches!(
        r.node("/a", None, 3, stat(1, 0)),
        Err(RestoreError::UnknownAcl { id: 3, .. })
    ));
    let bad_owner = 0xff00_0100_0000_0000_u64 as i64;
    let config = CoreConfig {
        extended_types_enabled: true,
        ..CoreConfig::default()
    };
    let mut r = with_root(config);
    assert!(matches!(
        r.node("/t", None, -1, stat(1, bad_owner)),
        Err(RestoreError::BadOwner { .. })
    ));
    let empty = Restore::new(CoreConfig::default(), T0);
    assert_eq!(empty.finish(0).err(), Some(RestoreError::NoRoot));
}

/// Children listed in any order (ZooKeeper writes a folder's in hash order) come out sorted,
/// and a child listed twice is refused as it comes.
#[test]
fn children_in_any_order_are_sorted_and_twins_refused() {
    let names = [
        "m",
        "b",
        "zz",
        "a",
        "c",
        "lock-0000000002",
        "lock-0000000001",
    ];
    let mut r = with_root(CoreConfig::default());
    r.node("/f", None, -1, stat(1, 0)).unwrap();
    for (i, n) in names.iter().enumerate() {
        r.node(&format!("/f/{n}"), None, -1, stat(2 + i as i64, 0))
            .unwrap();
    }
    let core = r.finish(10).unwrap();
    let mut sorted = names.map(String::from).to_vec();
    sorted.sort();
    assert_eq!(core.get_children("/f", &[]), Ok(sorted));

    let mut r = with_root(CoreConfig::default());
    r.node("/f", None, -1, stat(1, 0)).unwrap();
    r.node("/f/x", None, -1, stat(2, 0)).unwrap();
    r.node("/f/y", None, -1, stat(3, 0)).unwrap();
    assert_eq!(
        r.node("/f/x", None, -1, stat(4, 0)),
        Err(RestoreError::Duplicate {
            path: "/f/x".into()
        })
    );
}

#[test]
fn a_restored_core_serves_its_sessions_and_nodes() {
    // A server with a session and an ephemeral, snapshotted whole.
    let mut h = H::new();
    let mut c = h.connect();
    h.send(&mut c, create_flags("/e", 1));
    let cursor_core = &h.core;
    let mut cursor = cursor_core.snapshot_begin();
    let mut bytes = Vec::new();
    assert!(cursor_core.snapshot_slice(&mut cursor, 100, &mut bytes));
    let before = h.core.dump_tree();
    let zxid = h.core.last_zxid();

    // Restored later, with the same secret.
    let later = Now {
        mono_ms: T0.mono_ms + 5,
        wall_ms: T0.wall_ms + 5,
    };
    let mut r = Restore::new(CoreConfig::default(), later);
    for &(id, t) in cursor.sessions() {
        r.session(id, t);
    }
    for (id, acl) in cursor.acls() {
        r.acl(id, acl.to_vec());
    }
    let mut buf = &bytes[..];
    while !buf.is_empty() {
        let path = String::decode(&mut buf).unwrap();
        let data = Option::<Vec<u8>>::decode(&mut buf).unwrap();
        let acl = i64::decode(&mut buf).unwrap();
        let st = StatPersisted::decode(&mut buf).unwrap();
        r.node(&path, data, acl, st).unwrap();
    }
    let core = r.finish(zxid).unwrap();
    assert_eq!(core.dump_tree(), before);
    assert_eq!(core.ephemerals_count(), 1);
    let mut h2 = H {
        core,
        now: later,
        next_conn: 100,
    };

    // The session resumes with its old password; a new one gets another id.
    let resume = ConnectRequest {
        last_zxid_seen: zxid,
        timeout: 30_000,
        session_id: c.session,
        passwd: Some(c.passwd.clone()),
        ..Default::default()
    };
    let (_, _, r) = h2.handshake(&resume);
    assert_eq!(r.unwrap().session_id, c.session);
    let fresh = h2.connect();
    assert_ne!(fresh.session, c.session);

    // An unknown session is answered as expired (timeout 0) and closed ...
    let unknown = ConnectRequest {
        session_id: c.session + 1_000,
        ..resume.clone()
    };
    let (conn, actions, r) = h2.handshake(&unknown);
    assert_eq!(r.unwrap().timeout, 0);
    assert!(actions.contains(&Action::Close(conn)));
    // ... unless the client has seen a later zxid: then closed with no reply, checked first
    // as ZooKeeper's processConnectRequest does.
    let ahead = ConnectRequest {
        last_zxid_seen: h2.core.last_zxid() + 1,
        ..unknown
    };
    let (conn, actions, r) = h2.handshake(&ahead);
    assert_eq!((actions, r), (vec![Action::Close(conn)], None));
}

#[test]
fn dead_sessions_lose_their_ephemerals() {
    let mut r = with_root(CoreConfig::default());
    r.node("/p", None, -1, stat(1, 0)).unwrap();
    r.node("/p/mine", None, -1, stat(2, 0x0100_0000_0000_0001))
        .unwrap();
    r.node("/p/dead", None, -1, stat(3, 0x0100_0000_0000_0002))
        .unwrap();
    r.session(0x0100_0000_0000_0001, 30_000);
    let mut core = r.finish(9).unwrap();
    assert_eq!(core.kill_dead_sessions(), 1);
    let paths: Vec<String> = core.dump_tree().into_iter().map(|n| n.path).collect();
    assert!(paths.contains(&"/p/mine".to_string()) && !paths.contains(&"/p/dead".to_string()));
    // The parent's pzxid moves to the last zxid, with no txn taken.
    let p = core
        .dump_tree()
        .into_iter()
        .find(|n| n.path == "/p")
        .unwrap();
    assert_eq!((p.stat.pzxid, core.last_zxid()), (9, 9));
}

#[test]
fn a_snapshot_in_slices_writes_what_one_slice_writes() {
    // A folder of three chunks of children, some with children of their own, then a node
    // after it: slices end mid-chunk, at chunk ends and inside the grandchildren.
    let mut h = H::new();
    let mut c = h.connect();
    h.send(&mut c, create_flags("/wide", 0));
    for i in 0..1300 {
        h.send(&mut c, create_flags(&format!("/wide/n{i:05}"), 0));
    }
    for i in (0..1300).step_by(250) {
        h.send(&mut c, create_flags(&format!("/wide/n{i:05}/kid"), 0));
    }
    h.send(&mut c, create_flags("/x", 0));
    let mut cursor = h.core.snapshot_begin();
    let mut whole = Vec::new();
    assert!(h.core.snapshot_slice(&mut cursor, usize::MAX, &mut whole));
    for slice in [1, 7, 511, 512, 513] {
        let mut cursor = h.core.snapshot_begin();
        let mut bytes = Vec::new();
        let mut calls = 0;
        while !h.core.snapshot_slice(&mut cursor, slice, &mut bytes) {
            calls += 1;
            assert!(calls <= 2000, "slices of {slice} never finish");
        }
        assert!(bytes == whole, "slices of {slice} wrote other records");
    }
}
