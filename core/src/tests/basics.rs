//! The initial tree, zxid accounting, Stat bookkeeping and the odd requests.

use shepherd_protocol::{
    Acl, AuthPacket, CheckVersionRequest, ClientInfo, Create2Response, CreateResponse,
    CreateTTLRequest, GetAllChildrenNumberResponse, GetChildren2Response, GetEphemeralsResponse,
    PathRequest, PathWatchRequest, RawBody, ReconfigRequest, Reply, Request, Response, SaslToken,
    WhoAmIResponse, perms,
};

use super::*;

#[test]
fn initial_tree_stats() {
    let mut h = H::new();
    let mut c = h.connect();
    let root = h.send(&mut c, exists("/", false)).stat();
    assert_eq!(
        (
            root.cversion,
            root.num_children,
            root.czxid,
            root.ctime,
            root.pzxid
        ),
        (-1, 1, 0, 0, 0)
    );
    let zk = h.send(&mut c, exists("/zookeeper", false)).stat();
    assert_eq!((zk.cversion, zk.num_children), (-2, 2));
    let quota = h.send(&mut c, exists("/zookeeper/quota", false)).stat();
    assert_eq!(quota, Stat::default());
    let config = h.send(&mut c, get_acl("/zookeeper/config"));
    match config.ok() {
        Response::GetACL(a) => {
            assert_eq!(a.acl, Acl::read_unsafe());
            assert_eq!(a.stat.aversion, -1);
        }
        other => panic!("{other:?}"),
    }
    // Root data is empty, not null.
    match h.send(&mut c, get_data("/", false)).ok() {
        Response::GetData(d) => assert_eq!(d.data, Some(vec![])),
        other => panic!("{other:?}"),
    }
    // `""` is the root's alias for reads.
    assert_eq!(
        h.send(&mut c, exists("", false)).stat(),
        h.send(&mut c, exists("/", false)).stat()
    );
    let n = h.send(
        &mut c,
        Request::GetAllChildrenNumber(PathRequest { path: "/".into() }),
    );
    assert_eq!(
        n.ok(),
        Response::GetAllChildrenNumber(GetAllChildrenNumberResponse { total_number: 3 })
    );
    assert_eq!(
        (h.core.node_count(), h.core.approximate_data_size()),
        (4, 44)
    );
    // System nodes cannot go.
    for p in ["/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"] {
        assert_eq!(h.send(&mut c, delete(p, -1)).err(), -8, "{p}");
    }
}

#[test]
fn zxids_are_consumed_by_sessions_and_every_write() {
    let mut h = H::new();
    let mut c = h.connect();
    // createSession took zxid 1 (docs/protocol.md §2.4 step 5).
    assert_eq!(h.core.last_zxid(), 1);
    assert_eq!(h.send(&mut c, create("/a", b"x")).zxid(), 2);
    // Failing writes take one too; reads report the current value.
    assert_eq!(h.send(&mut c, create("/a", b"x")).zxid(), 3);
    assert_eq!(h.send(&mut c, create("/a", b"x")).zxid(), 4);
    assert_eq!(h.send(&mut c, get_data("/nope", false)).zxid(), 4);
    let ping = h.send(&mut c, Request::Ping);
    assert_eq!((ping.header().xid, ping.zxid()), (-2, 4));
    let reconfig = h.send(&mut c, Request::Reconfig(ReconfigRequest::default()));
    assert_eq!((reconfig.err(), reconfig.zxid()), (-123, 5));
    let _ = h.connect();
    assert_eq!(h.core.last_zxid(), 6);
}

#[test]
fn stat_after_each_operation() {
    let mut h = H::new();
    let mut c = h.connect();
    let t = h.now.wall_ms;
    let created = h.send(&mut c, Request::Create2(create_req("/p", Some(b"abc"), 0)));
    let s = created.stat();
    assert_eq!(
        (s.czxid, s.mzxid, s.pzxid, s.ctime, s.mtime),
        (2, 2, 2, t, t)
    );
    assert_eq!(
        (
            s.version,
            s.cversion,
            s.aversion,
            s.data_length,
            s.num_children,
            s.ephemeral_owner
        ),
        (0, 0, 0, 3, 0, 0)
    );
    let root = h.send(&mut c, exists("/", false)).stat();
    assert_eq!((root.cversion, root.pzxid, root.num_children), (0, 2, 2));

    h.advance(10);
    let s = h.send(&mut c, set_data("/p", b"", 0)).stat();
    assert_eq!(
        (s.version, s.mzxid, s.mtime, s.czxid, s.ctime, s.data_length),
        (1, 3, t + 10, 2, t, 0)
    );
    // The version rises even when the data is unchanged.
    assert_eq!(h.send(&mut c, set_data("/p", b"", -1)).stat().version, 2);

    let s = h.send(&mut c, create("/p/a", b"")).zxid();
    let p = h.send(&mut c, exists("/p", false)).stat();
    assert_eq!((p.cversion, p.pzxid, p.num_children, p.mzxid), (1, s, 1, 4));
    let d = h.send(&mut c, delete("/p/a", -1)).zxid();
    let p = h.send(&mut c, exists("/p", false)).stat();
    assert_eq!((p.cversion, p.pzxid, p.num_children), (2, d, 0));
    // Deletes do not move the counter: the next sequential child is …0000000001 (docs/protocol.md §8.1).
    match h.send(&mut c, create_flags("/p/s-", 2)).ok() {
        Response::Create(CreateResponse { path }) => assert_eq!(path, "/p/s-0000000001"),
        other => panic!("{other:?}"),
    }

    let acl = Request::SetACL(shepherd_protocol::SetACLRequest {
        path: "/p".into(),
        acl: open_acl(),
        version: 0,
    });
    let before = h.send(&mut c, exists("/p", false)).stat();
    let s = h.send(&mut c, acl).stat();
    assert_eq!(
        (s.aversion, s.mzxid, s.version),
        (1, before.mzxid, before.version)
    );

    // Null data stays null; its length is 0.
    h.send(&mut c, Request::Create(create_req("/null", None, 0)));
    match h.send(&mut c, get_data("/null", false)).ok() {
        Response::GetData(d) => assert_eq!((d.data, d.stat.data_length), (None, 0)),
        other => panic!("{other:?}"),
    }
    let gc2 = h.send(
        &mut c,
        Request::GetChildren2(PathWatchRequest {
            path: "/p".into(),
            watch: false,
        }),
    );
    match gc2.ok() {
        Response::GetChildren2(GetChildren2Response { children, stat }) => {
            assert_eq!(children, ["s-0000000001"]);
            assert_eq!(stat.num_children, 1);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn sequence_names_wrap_at_2_pow_31() {
    let mut h = H::new();
    let mut c = h.connect();
    h.send(&mut c, create("/q", b""));
    assert!(h.core.set_sequence_counter("/q", i32::MAX));
    assert!(!h.core.set_sequence_counter("/none", 1));
    let name = |o: Out| match o.ok() {
        Response::Create(CreateResponse { path }) => path,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        name(h.send(&mut c, create_flags("/q/n", 2))),
        "/q/n2147483647"
    );
    assert_eq!(
        name(h.send(&mut c, create_flags("/q/n", 2))),
        "/q/n-2147483648"
    );
    assert_eq!(
        name(h.send(&mut c, create_flags("/q/n", 3))),
        "/q/n-2147483647"
    );
    // The root's first sequential child is …0000000000 although /zookeeper exists.
    assert_eq!(name(h.send(&mut c, create_flags("/x", 2))), "/x0000000001");
}

#[test]
fn root_sequence_starts_at_zero() {
    let mut h = H::new();
    let mut c = h.connect();
    match h.send(&mut c, create_flags("/x", 2)).ok() {
        Response::Create(CreateResponse { path }) => assert_eq!(path, "/x0000000000"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn containers_and_ttl_nodes_show_owner_zero() {
    let mut h = H::new();
    let mut c = h.connect();
    let out = h.send(
        &mut c,
        Request::CreateContainer(create_req("/c", Some(b""), 4)),
    );
    assert!(matches!(
        out.ok(),
        Response::CreateContainer(Create2Response { .. })
    ));
    assert_eq!(out.stat().ephemeral_owner, 0);
    let ttl = CreateTTLRequest {
        path: "/t".into(),
        data: None,
        acl: open_acl(),
        flags: 5,
        ttl: 100,
    };
    assert_eq!(
        h.send(&mut c, Request::CreateTTL(ttl))
            .stat()
            .ephemeral_owner,
        0
    );
    let e = h
        .send(&mut c, Request::Create2(create_req("/e", None, 1)))
        .stat();
    assert_eq!(e.ephemeral_owner, c.session);
    assert_eq!(h.core.ephemerals_count(), 1);
}

#[test]
fn refused_requests() {
    let mut h = H::new();
    let c = h.connect();
    // Unknown op: Unimplemented, zxid -1, then close (docs/protocol.md §4.1).
    let raw = [0, 0, 0, 9, 0, 0, 0, 55];
    let actions = h.raw(c.conn, &raw);
    assert_eq!(actions.len(), 2);
    assert_eq!(actions[1], Action::Close(c.conn));
    let Action::Send(_, payload) = &actions[0] else {
        panic!()
    };
    assert_eq!(
        decode_reply(payload, |_| None).unwrap(),
        Reply::Err(ReplyHeader {
            xid: 9,
            zxid: -1,
            err: -6
        })
    );
    // The connection is gone; the session is not.
    assert!(h.raw(c.conn, &[0, 0, 0, 1, 0, 0, 0, 11]).is_empty());
    assert_eq!(h.core.sessions().len(), 1);

    for request in [
        Request::Check(CheckVersionRequest {
            path: "/".into(),
            version: -1,
        }),
        Request::DeleteContainer(RawBody(b"/x".to_vec())),
    ] {
        let mut c = h.connect();
        let out = h.send(&mut c, request);
        assert_eq!((out.err(), out.zxid()), (-6, -1));
        assert!(out.closed(c.conn));
    }

    let mut c = h.connect();
    let zxid = h.core.last_zxid();
    assert!(h.send(&mut c, Request::CreateSession).actions.is_empty());
    // A header that is too short closes the connection.
    assert_eq!(h.raw(c.conn, &[0, 0, 0]), vec![Action::Close(c.conn)]);
    assert_eq!(h.core.last_zxid(), zxid);
}

#[test]
fn undecodable_bodies_are_marshalling_errors() {
    let mut h = H::new();
    let mut c = h.connect();
    let before = h.core.last_zxid();
    // create (write) with a truncated body: -5 and a zxid.
    let out = h.raw(c.conn, &[0, 0, 0, 1, 0, 0, 0, 1, 0, 0]);
    let Action::Send(_, p) = &out[0] else {
        panic!()
    };
    assert_eq!(
        decode_reply(p, |_| None).unwrap(),
        Reply::Err(ReplyHeader {
            xid: 1,
            zxid: before + 1,
            err: -5
        })
    );
    // getData (read): -5, no zxid.
    let out = h.raw(c.conn, &[0, 0, 0, 2, 0, 0, 0, 4, 0]);
    let Action::Send(_, p) = &out[0] else {
        panic!()
    };
    assert_eq!(
        decode_reply(p, |_| None).unwrap(),
        Reply::Err(ReplyHeader {
            xid: 2,
            zxid: before + 1,
            err: -5
        })
    );
    assert_eq!(out.len(), 1);
    // multi with an unparsable body still takes a zxid.
    let out = h.raw(
        c.conn,
        &[0, 0, 0, 3, 0, 0, 0, 14, 0, 0, 0, 99, 0, 255, 255, 255, 255],
    );
    let Action::Send(_, p) = &out[0] else {
        panic!()
    };
    assert_eq!(
        decode_reply(p, |_| None).unwrap(),
        Reply::Err(ReplyHeader {
            xid: 3,
            zxid: before + 2,
            err: -5
        })
    );
    let _ = h.send(&mut c, Request::Ping);
}

#[test]
fn sasl_sync_whoami_ephemerals() {
    let mut h = H::new();
    let mut c = h.connect();
    let sasl = h.send(
        &mut c,
        Request::Sasl(SaslToken {
            token: Some(b"x".to_vec()),
        }),
    );
    assert_eq!((sasl.err(), sasl.zxid()), (0, 0));
    assert_eq!(sasl.ok(), Response::Sasl(SaslToken { token: None }));
    let sync = h.send(&mut c, Request::Sync(PathRequest { path: "/fl".into() }));
    assert_eq!(
        sync.ok(),
        Response::Sync(PathRequest { path: "/fl".into() })
    );

    let me = |h: &mut H, c: &mut Client| match h.send(c, Request::WhoAmI).ok() {
        Response::WhoAmI(WhoAmIResponse { client_info }) => client_info,
        other => panic!("{other:?}"),
    };
    let ip = ClientInfo {
        auth_scheme: "ip".into(),
        user: "127.0.0.1".into(),
    };
    assert_eq!(me(&mut h, &mut c), std::slice::from_ref(&ip));
    for _ in 0..2 {
        let auth = AuthPacket {
            auth_type: 0,
            scheme: "digest".into(),
            auth: Some(b"alice:secret".to_vec()),
        };
        assert_eq!(h.send(&mut c, Request::Auth(auth)).zxid(), 0);
    }
    let alice = ClientInfo {
        auth_scheme: "digest".into(),
        user: "alice".into(),
    };
    assert_eq!(me(&mut h, &mut c), [ip, alice]);

    for p in ["/ea", "/eb", "/f"] {
        h.send(&mut c, create_flags(p, 1));
    }
    let mut other = h.connect();
    h.send(&mut other, create_flags("/eo", 1));
    let eph = |h: &mut H, c: &mut Client, prefix: &str| match h
        .send(
            c,
            Request::GetEphemerals(PathRequest {
                path: prefix.into(),
            }),
        )
        .ok()
    {
        Response::GetEphemerals(GetEphemeralsResponse { ephemerals }) => ephemerals,
        other => panic!("{other:?}"),
    };
    assert_eq!(eph(&mut h, &mut c, "/e"), ["/ea", "/eb"]);
    assert_eq!(eph(&mut h, &mut c, "/"), ["/ea", "/eb", "/f"]);
    assert_eq!(eph(&mut h, &mut c, ""), ["/ea", "/eb", "/f"]);
    assert_eq!(h.core.ephemerals_count(), 4);
    let _ = perms::ALL;
}
