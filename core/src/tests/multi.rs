//! multi and multiRead (docs/protocol.md §10).

use shepherd_protocol::{
    CheckVersionRequest, Create2Response, CreateTTLRequest, DeleteRequest, GetDataResponse,
    MultiOp, MultiRequest, MultiResponse, MultiResult, PathWatchRequest, Request, Response,
    SetDataRequest,
};

use super::*;

fn multi(ops: Vec<MultiOp>) -> Request {
    Request::Multi(MultiRequest { ops })
}

fn results(out: &Out) -> Vec<MultiResult> {
    match out.ok() {
        Response::Multi(MultiResponse { results })
        | Response::MultiRead(MultiResponse { results }) => results,
        other => panic!("{other:?}"),
    }
}

fn check(path: &str, version: i32) -> MultiOp {
    MultiOp::Check(CheckVersionRequest {
        path: path.into(),
        version,
    })
}

#[test]
fn success_applies_everything_under_one_zxid() {
    let mut h = H::new();
    let mut a = h.connect();
    let mut b = h.connect();
    h.send(&mut b, exists("/m", true));
    let zxid = h.core.last_zxid();
    let ops = vec![
        MultiOp::Create(create_req("/m", Some(b""), 0)),
        MultiOp::Create2(create_req("/m/a", Some(b""), 0)),
        MultiOp::Create(create_req("/m/s", Some(b""), 2)),
        MultiOp::Create(create_req("/m/s", Some(b""), 2)),
        MultiOp::CreateContainer(create_req("/m/c", None, 4)),
        MultiOp::CreateTTL(CreateTTLRequest {
            path: "/m/t".into(),
            data: None,
            acl: open_acl(),
            flags: 5,
            ttl: 10,
        }),
        MultiOp::SetData(SetDataRequest {
            path: "/m".into(),
            data: Some(b"x".to_vec()),
            version: 0,
        }),
        MultiOp::Delete(DeleteRequest {
            path: "/m/a".into(),
            version: 0,
        }),
        check("/m", 1),
    ];
    let out = h.send(&mut a, multi(ops));
    assert_eq!((out.err(), out.zxid()), (0, zxid + 1));
    assert_eq!(h.core.last_zxid(), zxid + 1);
    let r = results(&out);
    assert_eq!(r[0], MultiResult::Create("/m".into()));
    // 3.8 decays create2 to a path-only create result.
    assert_eq!(r[1], MultiResult::Create("/m/a".into()));
    assert_eq!(r[2], MultiResult::Create("/m/s0000000001".into()));
    assert_eq!(r[3], MultiResult::Create("/m/s0000000002".into()));
    assert!(
        matches!(&r[4], MultiResult::Create2(Create2Response { path, stat }) if path == "/m/c" && stat.czxid == zxid + 1)
    );
    assert!(matches!(&r[5], MultiResult::Create2(Create2Response { path, .. }) if path == "/m/t"));
    assert!(matches!(&r[6], MultiResult::SetData(s) if s.version == 1 && s.num_children == 5));
    assert_eq!(r[7], MultiResult::Delete);
    assert_eq!(r[8], MultiResult::Check);
    // Events before the reply, with the changes they reveal.
    assert_eq!(
        out.events(b.conn),
        [(EventType::NodeCreated, "/m".to_string())]
    );
    let m = h.send(&mut a, exists("/m", false)).stat();
    assert_eq!(
        (m.czxid, m.mzxid, m.pzxid, m.num_children, m.cversion),
        (zxid + 1, zxid + 1, zxid + 1, 4, 6)
    );
}

#[test]
fn failure_rolls_back_and_reports_per_op() {
    let mut h = H::new();
    let mut a = h.connect();
    let mut b = h.connect();
    h.send(&mut a, create("/k", b""));
    h.send(&mut b, exists("/new", true));
    h.send(&mut b, get_data("/k", true));
    let root = h.send(&mut a, exists("/", false)).stat();
    let ops = vec![
        MultiOp::Create(create_req("/new", Some(b""), 0)),
        MultiOp::SetData(SetDataRequest {
            path: "/k".into(),
            data: None,
            version: -1,
        }),
        check("/k", 7),
        MultiOp::Delete(DeleteRequest {
            path: "/k".into(),
            version: -1,
        }),
        MultiOp::Create(create_req("/x", Some(b""), 0)),
    ];
    let zxid = h.core.last_zxid();
    let out = h.send(&mut a, multi(ops));
    assert_eq!((out.err(), out.zxid()), (0, zxid + 1));
    assert_eq!(results(&out), [0, 0, -103, -2, -2].map(MultiResult::Error));
    assert!(all_events(&out.actions).is_empty());
    assert_eq!(h.send(&mut a, exists("/new", false)).err(), -101);
    assert_eq!(h.send(&mut a, exists("/", false)).stat(), root);
    assert_eq!(h.send(&mut a, exists("/k", false)).stat().version, 0);
    // Bad flags inside a multi are a per-op BadArguments in 3.8.
    let out = h.send(
        &mut a,
        multi(vec![MultiOp::Create(create_req("/y", Some(b""), 9))]),
    );
    assert_eq!(results(&out), [MultiResult::Error(-8)]);
    // The watches are still armed.
    let out = h.send(&mut a, set_data("/k", b"", -1));
    assert_eq!(
        out.events(b.conn),
        [(EventType::NodeDataChanged, "/k".to_string())]
    );
}

#[test]
fn empty_and_mixed_multis() {
    let mut h = H::new();
    let mut c = h.connect();
    let zxid = h.core.last_zxid();
    let out = h.send(&mut c, multi(vec![]));
    assert_eq!((results(&out), out.zxid()), (vec![], zxid + 1));
    let get = MultiOp::GetData(PathWatchRequest {
        path: "/".into(),
        watch: false,
    });
    let out = h.send(
        &mut c,
        multi(vec![
            MultiOp::Create(create_req("/z", Some(b""), 0)),
            get.clone(),
        ]),
    );
    assert_eq!((out.err(), out.zxid()), (-5, zxid + 2));
    assert_eq!(h.send(&mut c, exists("/z", false)).err(), -101);
    let read = Request::MultiRead(MultiRequest {
        ops: vec![get, check("/", -1)],
    });
    let out = h.send(&mut c, read);
    assert_eq!((out.err(), out.zxid()), (-5, zxid + 2));
}

/// A multiRead of writes only gets a body on its MarshallingError: 3.8 decodes it, makes an
/// empty response, fails at the first op and still sends the response (docs/protocol.md §10.4).
/// Bytes observed on Debian's 3.8.0 over the raw wire: a create alone, or a check alone, gave
/// err -5 with the last zxid and then `ffffffff 01 ffffffff`; a getData + delete mix gave -5
/// and nothing after the header.
#[test]
fn multi_read_of_writes_answers_an_empty_response() {
    let mut h = H::new();
    let mut c = h.connect();
    let zxid = h.core.last_zxid();
    let closing_header = [0xff, 0xff, 0xff, 0xff, 0x01, 0xff, 0xff, 0xff, 0xff];
    let conn = c.conn;
    let body = move |out: &Out| match &out.actions[..] {
        [Action::Send(to, payload)] if *to == conn => payload[16..].to_vec(),
        other => panic!("{other:?}"),
    };
    for ops in [
        vec![MultiOp::Create(create_req("/w", Some(b""), 0))],
        vec![check("/", -1)],
        vec![
            check("/", -1),
            MultiOp::Delete(DeleteRequest {
                path: "/x".into(),
                version: -1,
            }),
        ],
    ] {
        let out = h.send(&mut c, Request::MultiRead(MultiRequest { ops }));
        assert_eq!((out.err(), out.zxid()), (-5, zxid));
        assert_eq!(body(&out), closing_header);
    }
    let mixed = vec![
        MultiOp::GetData(PathWatchRequest {
            path: "/".into(),
            watch: false,
        }),
        MultiOp::Delete(DeleteRequest {
            path: "/nonex".into(),
            version: -1,
        }),
    ];
    let out = h.send(&mut c, Request::MultiRead(MultiRequest { ops: mixed }));
    assert_eq!((out.err(), out.zxid()), (-5, zxid));
    assert!(body(&out).is_empty());
    assert_eq!(h.send(&mut c, exists("/w", false)).err(), -101);
    // An empty multiRead is an ordinary success with the same 9 bytes.
    let out = h.send(&mut c, Request::MultiRead(MultiRequest { ops: vec![] }));
    assert_eq!((out.err(), body(&out)), (0, closing_header.to_vec()));
}

#[test]
fn multi_read_is_per_op_and_ignores_watches() {
    let mut h = H::new();
    let mut c = h.connect();
    h.send(&mut c, create("/r", b"d"));
    h.send(&mut c, create_acl("/secret", vec![digest_acl(31, "x:y")]));
    let zxid = h.core.last_zxid();
    let ops = vec![
        MultiOp::GetData(PathWatchRequest {
            path: "/r".into(),
            watch: true,
        }),
        MultiOp::GetChildren(PathWatchRequest {
            path: "/".into(),
            watch: true,
        }),
        MultiOp::GetData(PathWatchRequest {
            path: "/missing".into(),
            watch: true,
        }),
        MultiOp::GetData(PathWatchRequest {
            path: "/secret".into(),
            watch: false,
        }),
        MultiOp::GetChildren(PathWatchRequest {
            path: "/r".into(),
            watch: false,
        }),
    ];
    let out = h.send(&mut c, Request::MultiRead(MultiRequest { ops }));
    assert_eq!((out.err(), out.zxid()), (0, zxid));
    let r = results(&out);
    assert!(
        matches!(&r[0], MultiResult::GetData(GetDataResponse { data: Some(d), .. }) if d == b"d")
    );
    assert_eq!(
        r[1],
        MultiResult::GetChildren(vec!["r".into(), "secret".into(), "zookeeper".into()])
    );
    assert_eq!(
        r[2..],
        [
            MultiResult::Error(-101),
            MultiResult::Error(-102),
            MultiResult::GetChildren(vec![])
        ]
    );
    assert_eq!(h.core.watch_count(), 0);
    assert_eq!(h.core.last_zxid(), zxid);
}

/// Inside a multi, 3.8 chooses a create's kind from its flags, not from the sub-op's opcode
/// (docs/protocol.md §10.2). Each row was observed on Debian's 3.8.0 over the raw wire: a multi
/// of that one sub-op, then exists on the created path for its ephemeralOwner, and for flags 4
/// a child created and deleted to see the container reaped.
#[test]
fn create_kind_comes_from_the_flags() {
    use crate::tree::Owner;
    use shepherd_protocol::{OpCode, Reply};

    /// What 3.8 made: the node's owner and whether its result had a Stat (type 15), a per-op
    /// error, or an error for the whole multi.
    #[derive(Debug, PartialEq)]
    enum Made {
        Node(&'static str, bool),
        OpError(i32),
        Whole(i32),
    }
    use Made::{Node, OpError, Whole};
    let plain = |flags: i32| match flags {
        0 | 2 => Node("persistent", false),
        1 | 3 => Node("ephemeral", false),
        4 => Node("container", true),
        5 | 6 => Whole(-5),
        _ => OpError(-8),
    };
    let mut expected = Vec::new();
    for op in [OpCode::Create, OpCode::Create2, OpCode::CreateContainer] {
        for flags in [0, 1, 2, 3, 4, 5, 6, 7, -1] {
            expected.push((op, flags, None, plain(flags)));
        }
    }
    for flags in [0, 1, 2, 3, 4, 5, 6, 7, -1] {
        for ttl in [1000, 0, -1] {
            let made = match flags {
                5 | 6 if ttl > 0 => Node("ttl", true),
                5 | 6 => OpError(-8),
                // Any other flags drop the TTL: a plain create, whatever the TTL.
                _ => plain(flags),
            };
            expected.push((OpCode::CreateTTL, flags, Some(ttl), made));
        }
    }
    let mut h = H::new();
    let mut c = h.connect();
    for (i, (op, flags, ttl, want)) in expected.into_iter().enumerate() {
        let path = format!("/k{i}");
        let req = create_req(&path, Some(b""), flags);
        let sub = match op {
            OpCode::Create => MultiOp::Create(req),
            OpCode::Create2 => MultiOp::Create2(req),
            OpCode::CreateContainer => MultiOp::CreateContainer(req),
            _ => MultiOp::CreateTTL(CreateTTLRequest {
                path: req.path,
                data: req.data,
                acl: req.acl,
                flags,
                ttl: ttl.unwrap_or(-1),
            }),
        };
        let zxid = h.core.last_zxid();
        let out = h.send(&mut c, multi(vec![sub]));
        assert_eq!(out.zxid(), zxid + 1, "{op:?} {flags} {ttl:?}: one zxid");
        let made = match out.reply() {
            Reply::Err(header) => Whole(header.err),
            Reply::Ok(..) => match &results(&out)[..] {
                [MultiResult::Error(code)] => OpError(*code),
                [result] => {
                    let (created, stat) = match result {
                        MultiResult::Create(path) => (path.clone(), false),
                        MultiResult::Create2(r) => (r.path.clone(), true),
                        other => panic!("{other:?}"),
                    };
                    let sequential = created != path;
                    assert_eq!(sequential, flags == 2 || flags == 3 || flags == 6);
                    let owner = match h.core.tree.get(&created).expect("created").owner {
                        Owner::Persistent => "persistent",
                        Owner::Ephemeral(s) if s == c.session => "ephemeral",
                        Owner::Container => "container",
                        Owner::Ttl(t) if Some(t) == ttl => "ttl",
                        other => panic!("{other:?}"),
                    };
                    Node(owner, stat)
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        };
        assert_eq!(made, want, "{op:?} flags {flags} ttl {ttl:?}");
    }
    // An earlier failure wins over the cast: the TTL-flagged sub-op is then only
    // RuntimeInconsistency (observed: a create, a create of `/` (NodeExists), then a
    // createContainer with flags 6 gave 0, -110, -2).
    let ops = vec![
        MultiOp::Create(create_req("/m2a", Some(b""), 0)),
        MultiOp::Create(create_req("/", Some(b""), 0)),
        MultiOp::CreateContainer(create_req("/m2b", Some(b""), 6)),
    ];
    let out = h.send(&mut c, multi(ops));
    assert_eq!(
        results(&out),
        [
            MultiResult::Error(0),
            MultiResult::Error(-110),
            MultiResult::Error(-2)
        ]
    );
}
