//! The transaction log the core emits (`log.rs`): one entry per zxid, with the header, body
//! and digest ZooKeeper 3.8's `PrepRequestProcessor` gives each kind of txn.

use shepherd_protocol::txn::{
    CheckVersionTxn, CloseSessionTxn, CreateContainerTxn, CreateSessionTxn, CreateTxn, DeleteTxn,
    ErrorTxn, SetACLTxn, SetDataTxn, TxnBody, TxnEntry,
};
use shepherd_protocol::{
    Acl, CheckVersionRequest, Codec, CreateTTLRequest, DeleteRequest, MultiOp, MultiRequest,
    OpCode, Request, RequestHeader, SetACLRequest, SetDataRequest,
};

use super::*;

fn logging() -> CoreConfig {
    CoreConfig {
        log_txns: true,
        extended_types_enabled: true,
        ..CoreConfig::default()
    }
}

fn take(h: &mut H) -> Vec<TxnEntry> {
    let mut log = Vec::new();
    h.core.take_log(&mut log);
    log
}

/// The single entry a call logged, checked to carry the core's zxid and, where it has one, a
/// version-2 digest equal to the tree's (recomputed from scratch).
fn one(h: &mut H) -> TxnEntry {
    let log = take(h);
    assert_eq!(log.len(), 1, "{log:#?}");
    let entry = log.into_iter().next().unwrap();
    assert_eq!(entry.header.zxid, h.core.last_zxid());
    assert_eq!(entry.header.time, h.now.wall_ms);
    if let Some(d) = &entry.digest {
        assert_eq!(d.version, 2);
    }
    assert_eq!(h.core.tree_digest(), Some(h.core.tree.recompute_digest()));
    entry
}

fn tree_digest(h: &H) -> Option<i64> {
    h.core.tree_digest()
}

#[test]
fn nothing_is_logged_unless_asked() {
    let mut h = H::new();
    let mut c = h.connect();
    h.send(&mut c, create("/a", b"x"));
    assert!(take(&mut h).is_empty());
    assert_eq!(h.core.tree_digest(), None);
}

#[test]
fn sessions_and_plain_writes() {
    let mut h = H::with(logging());
    let mut c = h.connect();
    let e = one(&mut h);
    assert_eq!(
        (e.header.client_id, e.header.cxid, e.header.op_type),
        (c.session, 0, i32::from(OpCode::CreateSession))
    );
    assert_eq!(
        e.body,
        TxnBody::CreateSession(CreateSessionTxn {
            time_out: c.timeout
        })
    );
    assert_eq!(e.digest.map(|d| d.tree_digest), tree_digest(&h));

    h.send(&mut c, create("/a", b"x"));
    let e = one(&mut h);
    assert_eq!((e.header.client_id, e.header.cxid), (c.session, 1));
    assert_eq!(e.header.op_type, 1);
    assert_eq!(
        e.body,
        TxnBody::Create(CreateTxn {
            path: "/a".into(),
            data: Some(b"x".to_vec()),
            acl: Acl::open_unsafe(),
            ephemeral: false,
            parent_c_version: 1,
        })
    );
    assert_eq!(e.digest.map(|d| d.tree_digest), tree_digest(&h));

    // create2, ephemeral and sequential: the parent's stored cversion after the create.
    let req = create_req("/a/s-", Some(b""), 3);
    h.send(&mut c, Request::Create2(req));
    let e = one(&mut h);
    assert_eq!(e.header.op_type, 15);
    let TxnBody::Create(t) = &e.body else {
        panic!("{e:?}")
    };
    assert_eq!(
        (t.path.as_str(), t.ephemeral, t.parent_c_version),
        ("/a/s-0000000000", true, 1)
    );

    h.send(&mut c, set_data("/a", b"yz", -1));
    let e = one(&mut h);
    assert_eq!(
        e.body,
        TxnBody::SetData(SetDataTxn {
            path: "/a".into(),
            data: Some(b"yz".to_vec()),
            version: 1
        })
    );
    let acl = vec![Acl {
        perms: 31,
        id: shepherd_protocol::Id::new("world", "anyone"),
    }];
    h.send(
        &mut c,
        Request::SetACL(SetACLRequest {
            path: "/a".into(),
            acl: acl.clone(),
            version: 0,
        }),
    );
    let e = one(&mut h);
    assert_eq!(e.header.op_type, 7);
    assert_eq!(
        e.body,
        TxnBody::SetACL(SetACLTxn {
            path: "/a".into(),
            acl,
            version: 1
        })
    );
    assert_eq!(e.digest.map(|d| d.tree_digest), tree_digest(&h));

    // A failed write: an error txn with its code and no digest.
    h.send(&mut c, create("/a", b""));
    let e = one(&mut h);
    assert_eq!(e.header.op_type, -1);
    assert_eq!(e.body, TxnBody::Error(ErrorTxn { err: -110 }));
    assert_eq!(e.digest, None);

    // closeSession: the request's xid, the ephemerals it deletes, the digest after them.
    let xid = 7;
    let mut payload = Vec::new();
    RequestHeader {
        xid,
        op_type: OpCode::CloseSession.into(),
    }
    .encode(&mut payload);
    h.raw(c.conn, &payload);
    let e = one(&mut h);
    assert_eq!(
        (e.header.client_id, e.header.cxid, e.header.op_type),
        (c.session, xid, -11)
    );
    assert_eq!(
        e.body,
        TxnBody::CloseSession(Some(CloseSessionTxn {
            paths2_delete: vec!["/a/s-0000000000".into()]
        }))
    );
    assert_eq!(e.digest.map(|d| d.tree_digest), tree_digest(&h));
}

#[test]
fn expiry_reaping_and_refusals() {
    let mut h = H::with(CoreConfig {
        container_check_interval_ms: 1_000,
        ..logging()
    });
    let mut c = h.connect_with(4_000);
    take(&mut h);
    h.send(&mut c, Request::CreateContainer(create_req("/c", None, 4)));
    h.send(&mut c, create("/c/x", b""));
    h.send(&mut c, delete("/c/x", -1));
    assert_eq!(take(&mut h).len(), 3);
    // Reconfig is a failed txn; an undecodable write an error txn.
    h.send(&mut c, Request::Reconfig(Default::default()));
    assert_eq!(one(&mut h).body, TxnBody::Error(ErrorTxn { err: -123 }));
    let mut payload = Vec::new();
    RequestHeader { xid: 9, op_type: 1 }.encode(&mut payload);
    h.raw(c.conn, &payload);
    let e = one(&mut h);
    assert_eq!(
        (e.header.cxid, e.body.clone(), e.digest),
        (9, TxnBody::Error(ErrorTxn { err: -5 }), None)
    );
    // The reaper deletes the container as session 0, xid 0, deleteContainer.
    h.advance(1_000);
    h.tick();
    let e = one(&mut h);
    assert_eq!(
        (e.header.client_id, e.header.cxid, e.header.op_type),
        (0, 0, 20)
    );
    assert_eq!(e.body, TxnBody::Delete(DeleteTxn { path: "/c".into() }));
    assert_eq!(e.digest.map(|d| d.tree_digest), tree_digest(&h));
    // Expiry: closeSession with xid 0.
    h.advance(10_000);
    h.tick();
    let e = one(&mut h);
    assert_eq!(
        (e.header.client_id, e.header.cxid, e.header.op_type),
        (c.session, 0, -11)
    );
}

#[test]
fn multis() {
    let mut h = H::with(logging());
    let mut c = h.connect();
    h.send(&mut c, create("/m", b""));
    take(&mut h);
    let check = |path: &str, version| {
        MultiOp::Check(CheckVersionRequest {
            path: path.into(),
            version,
        })
    };
    let ops = vec![
        MultiOp::Create(create_req("/m/a", Some(b""), 0)),
        MultiOp::CreateContainer(create_req("/m/c", None, 4)),
        MultiOp::SetData(SetDataRequest {
            path: "/m".into(),
            data: None,
            version: 0,
        }),
        check("/m", 1),
        MultiOp::Delete(DeleteRequest {
            path: "/m/a".into(),
            version: -1,
        }),
    ];
    h.send(&mut c, Request::Multi(MultiRequest { ops }));
    let e = one(&mut h);
    assert_eq!(e.header.op_type, 14);
    let TxnBody::Multi(subs) = &e.body else {
        panic!("{e:?}")
    };
    let types: Vec<i32> = subs.iter().map(|(t, _)| *t).collect();
    assert_eq!(types, [1, 19, 5, 13, 2]);
    assert_eq!(
        subs[1].1,
        TxnBody::CreateContainer(CreateContainerTxn {
            path: "/m/c".into(),
            data: None,
            acl: Acl::open_unsafe(),
            parent_c_version: 2,
        })
    );
    assert_eq!(
        subs[3].1,
        TxnBody::CheckVersion(CheckVersionTxn {
            path: "/m".into(),
            version: 2
        })
    );
    assert_eq!(e.digest.map(|d| d.tree_digest), tree_digest(&h));

    // A failed multi keeps the records before the failure; the digest is the unchanged tree's.
    let before = tree_digest(&h);
    let ops = vec![
        MultiOp::Create(create_req("/m/b", Some(b""), 0)),
        check("/nope", -1),
        MultiOp::Delete(DeleteRequest {
            path: "/m".into(),
            version: -1,
        }),
    ];
    h.send(&mut c, Request::Multi(MultiRequest { ops }));
    let e = one(&mut h);
    let TxnBody::Multi(subs) = &e.body else {
        panic!("{e:?}")
    };
    assert!(matches!(subs[0], (1, TxnBody::Create(_))));
    assert_eq!(subs[1], (-1, TxnBody::Error(ErrorTxn { err: -101 })));
    assert_eq!(subs[2], (-1, TxnBody::Error(ErrorTxn { err: -2 })));
    assert_eq!(
        (e.digest.map(|d| d.tree_digest), tree_digest(&h)),
        (before, before)
    );

    // TTL flags without a TTL field fail the whole request: an error txn, with the digest the
    // earlier ops prepared (here: the create of /m/t).
    let ops = vec![
        MultiOp::Create(create_req("/m/t", Some(b""), 0)),
        MultiOp::Create(create_req("/m/u", Some(b""), 5)),
    ];
    h.send(&mut c, Request::Multi(MultiRequest { ops }));
    let e = one(&mut h);
    assert_eq!(
        (e.header.op_type, &e.body),
        (-1, &TxnBody::Error(ErrorTxn { err: -5 }))
    );
    assert_ne!(e.digest.map(|d| d.tree_digest), tree_digest(&h));
    // ... and none when the first op fails so.
    let ops = vec![MultiOp::Create(create_req("/m/u", Some(b""), 5))];
    h.send(&mut c, Request::Multi(MultiRequest { ops }));
    assert_eq!(one(&mut h).digest, None);
    // A TTL create inside a multi is logged as createTTL.
    let ops = vec![MultiOp::CreateTTL(CreateTTLRequest {
        path: "/m/ttl".into(),
        data: None,
        acl: Acl::open_unsafe(),
        flags: 5,
        ttl: 100,
    })];
    h.send(&mut c, Request::Multi(MultiRequest { ops }));
    let TxnBody::Multi(subs) = one(&mut h).body else {
        panic!()
    };
    assert!(matches!(&subs[..], [(21, TxnBody::CreateTTL(t))] if t.ttl == 100));
}

/// ZooKeeper prepares a create's digest from the flags while the opcode decides the node: a
/// create with container flags logs the digest of a container that was never made.
#[test]
fn prepared_digest_follows_the_flags() {
    let mut h = H::with(logging());
    let mut c = h.connect();
    take(&mut h);
    h.send(&mut c, Request::Create(create_req("/p", Some(b""), 4)));
    let e = one(&mut h);
    assert!(matches!(&e.body, TxnBody::Create(t) if !t.ephemeral));
    let logged = e.digest.unwrap().tree_digest;
    assert_ne!(Some(logged), tree_digest(&h));
    let mut as_prepared = h.core.tree.get("/p").unwrap().clone();
    as_prepared.owner = crate::owner::Owner::Container;
    let node = h.core.tree.get("/p").unwrap();
    let expected = tree_digest(&h).unwrap() - crate::digest::node_digest("/p", node)
        + crate::digest::node_digest("/p", &as_prepared);
    assert_eq!(logged, expected);
    // The next txn logs the real tree's digest again.
    h.send(&mut c, set_data("/p", b"", -1));
    assert_eq!(one(&mut h).digest.map(|d| d.tree_digest), tree_digest(&h));
}
