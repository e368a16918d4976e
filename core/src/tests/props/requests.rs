//! Strategies for the requests a run sends: a small path alphabet (`/a`..`/c/c/c`, the system
//! nodes, and invalid paths), data, versions, flags, TTLs and ACLs with odd values, and every
//! variant of [`Request`], weighted towards the tree operations.
//!
//! Invariants: the strategies are written from the wire format, not from the core, so they
//! reach inputs the core does not expect (invalid paths, unknown ACL schemes, out-of-range
//! TTLs and modes); every request they build encodes.

use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::Union;
use shepherd_protocol::{
    Acl, AddWatchRequest, AuthPacket, CheckVersionRequest, CreateRequest, CreateTTLRequest,
    DeleteRequest, Id, MultiOp, MultiRequest, PathRequest, PathWatchRequest, RawBody,
    ReconfigRequest, RemoveWatchesRequest, Request, SaslToken, SetACLRequest, SetDataRequest,
    SetWatches, SetWatches2, perms,
};

use super::SUPER;
use crate::acl::digest_identity;

/// The largest TTL (docs/protocol.md §6.2): 40 bits.
const MAX_TTL: i64 = 0xFF_FFFF_FFFF;

pub(super) fn path() -> BoxedStrategy<String> {
    let depth = prop_oneof![4 => Just(1usize), 3 => Just(2), 1 => Just(3)];
    let valid = depth
        .prop_flat_map(|depth| prop::collection::vec(select(vec!["a", "b", "c"]), depth))
        .prop_map(|segments| format!("/{}", segments.join("/")));
    let special = select(vec![
        "/".to_string(),
        "/zookeeper".to_string(),
        "/zookeeper/config".to_string(),
        "/zookeeper/quota".to_string(),
        "/zookeeper/x".to_string(),
        String::new(),
        "a".to_string(),
        "/a/".to_string(),
        "/a/b/".to_string(),
        "//".to_string(),
        "/a//b".to_string(),
        "/a/.".to_string(),
        "/a/..".to_string(),
        "/a\0b".to_string(),
        "/\u{1}".to_string(),
        "/ü".to_string(),
        "/\u{1f600}".to_string(),
        "/a/b/c/d".to_string(),
        format!("/{}", "x".repeat(300)),
    ]);
    prop_oneof![8 => valid, 2 => special].boxed()
}

fn paths() -> BoxedStrategy<Vec<String>> {
    prop::collection::vec(path(), 0..4).boxed()
}

fn data() -> BoxedStrategy<Option<Vec<u8>>> {
    prop_oneof![
        1 => Just(None),
        4 => prop::collection::vec(any::<u8>(), 0..6).prop_map(Some),
    ]
    .boxed()
}

fn version() -> BoxedStrategy<i32> {
    prop_oneof![5 => Just(-1), 3 => 0..3i32, 1 => any::<i32>()].boxed()
}

fn flags() -> BoxedStrategy<i32> {
    prop_oneof![
        12 => Just(0),
        8 => 0..=7i32,
        1 => select(vec![-1, 8, 100, i32::MIN, i32::MAX]),
        1 => any::<i32>(),
    ]
    .boxed()
}

fn ttl() -> BoxedStrategy<i64> {
    prop_oneof![
        4 => select(vec![
            -1,
            0,
            1,
            500,
            5_000,
            60_000,
            MAX_TTL,
            MAX_TTL + 1,
            i64::MIN,
            i64::MAX,
        ]),
        1 => any::<i64>(),
    ]
    .boxed()
}

fn acl_entry() -> BoxedStrategy<Acl> {
    let ids = vec![
        Id::new("world", "anyone"),
        Id::new("world", "someone"),
        Id::new("auth", ""),
        Id::new("auth", "x"),
        Id::new("digest", digest_identity(b"u:p")),
        Id::new("digest", digest_identity(SUPER)),
        Id::new("digest", "nocolon"),
        Id::new("digest", ""),
        Id::new("ip", "127.0.0.1"),
        Id::new("ip", "10.0.0.0/8"),
        Id::new("ip", "::1"),
        Id::new("ip", "0:0:0:0:0:0:0:1/128"),
        Id::new("ip", "bogus"),
        Id::new("ip", "1.2.3.4/99"),
        Id::new("ip", ""),
        Id::new("super", ""),
        Id::new("foo", "bar"),
        Id::new("", ""),
    ];
    let perms = prop_oneof![
        4 => Just(perms::ALL),
        2 => 0..=31i32,
        1 => select(vec![0, 32, 64, -1, i32::MAX]),
    ];
    (perms, select(ids))
        .prop_map(|(perms, id)| Acl { perms, id })
        .boxed()
}

fn acls() -> BoxedStrategy<Vec<Acl>> {
    prop_oneof![
        12 => Just(Acl::open_unsafe()),
        1 => Just(Acl::read_unsafe()),
        1 => Just(Acl::creator_all()),
        3 => prop::collection::vec(acl_entry(), 0..3),
    ]
    .boxed()
}

fn create_req() -> BoxedStrategy<CreateRequest> {
    (path(), data(), acls(), flags())
        .prop_map(|(path, data, acl, flags)| CreateRequest {
            path,
            data,
            acl,
            flags,
        })
        .boxed()
}

fn create_ttl_req() -> BoxedStrategy<CreateTTLRequest> {
    (create_req(), ttl())
        .prop_map(|(r, ttl)| CreateTTLRequest {
            path: r.path,
            data: r.data,
            acl: r.acl,
            flags: r.flags,
            ttl,
        })
        .boxed()
}

fn delete_req() -> BoxedStrategy<DeleteRequest> {
    (path(), version())
        .prop_map(|(path, version)| DeleteRequest { path, version })
        .boxed()
}

fn set_data_req() -> BoxedStrategy<SetDataRequest> {
    (path(), data(), version())
        .prop_map(|(path, data, version)| SetDataRequest {
            path,
            data,
            version,
        })
        .boxed()
}

fn check_req() -> BoxedStrategy<CheckVersionRequest> {
    (path(), version())
        .prop_map(|(path, version)| CheckVersionRequest { path, version })
        .boxed()
}

fn path_watch() -> BoxedStrategy<PathWatchRequest> {
    (path(), any::<bool>())
        .prop_map(|(path, watch)| PathWatchRequest { path, watch })
        .boxed()
}

fn path_req() -> BoxedStrategy<PathRequest> {
    path().prop_map(|path| PathRequest { path }).boxed()
}

fn watcher_type() -> BoxedStrategy<RemoveWatchesRequest> {
    let kind = prop_oneof![8 => 0..=6i32, 1 => any::<i32>()];
    (path(), kind)
        .prop_map(|(path, watcher_type)| RemoveWatchesRequest { path, watcher_type })
        .boxed()
}

/// A multi sub-op: mostly writes, now and then a read (which makes a multi a mix, docs/protocol.md §10.1).
fn multi_op(read_weight: u32, write_weight: u32) -> BoxedStrategy<MultiOp> {
    Union::new_weighted(vec![
        (
            3 * write_weight,
            create_req().prop_map(MultiOp::Create).boxed(),
        ),
        (
            write_weight,
            create_req().prop_map(MultiOp::Create2).boxed(),
        ),
        (
            write_weight,
            create_req().prop_map(MultiOp::CreateContainer).boxed(),
        ),
        (
            write_weight,
            create_ttl_req().prop_map(MultiOp::CreateTTL).boxed(),
        ),
        (
            2 * write_weight,
            delete_req().prop_map(MultiOp::Delete).boxed(),
        ),
        (
            2 * write_weight,
            set_data_req().prop_map(MultiOp::SetData).boxed(),
        ),
        (
            2 * write_weight,
            check_req().prop_map(MultiOp::Check).boxed(),
        ),
        (read_weight, path_watch().prop_map(MultiOp::GetData).boxed()),
        (
            read_weight,
            path_watch().prop_map(MultiOp::GetChildren).boxed(),
        ),
    ])
    .boxed()
}

fn multi(read_weight: u32, write_weight: u32) -> BoxedStrategy<MultiRequest> {
    prop::collection::vec(multi_op(read_weight, write_weight), 0..5)
        .prop_map(|ops| MultiRequest { ops })
        .boxed()
}

fn auth_packet() -> BoxedStrategy<AuthPacket> {
    let scheme = select(vec!["digest", "digest", "digest", "ip", "sasl", "foo", ""]);
    let auth = prop_oneof![
        3 => select(vec![&b"u:p"[..], b"v:q", SUPER, b"nocolon", b""])
            .prop_map(|a| Some(a.to_vec())),
        1 => Just(None),
        1 => prop::collection::vec(any::<u8>(), 0..8).prop_map(Some),
    ];
    (any::<i32>(), scheme, auth)
        .prop_map(|(auth_type, scheme, auth)| AuthPacket {
            auth_type,
            scheme: scheme.to_string(),
            auth,
        })
        .boxed()
}

fn relative_zxid() -> BoxedStrategy<i64> {
    prop_oneof![
        3 => select(vec![-1i64, 0, 1, 5, 20, 1000, i64::MAX]),
        1 => any::<i64>(),
    ]
    .boxed()
}

fn optional_string() -> BoxedStrategy<Option<String>> {
    prop::option::of(select(vec!["", "server.1=a:1:2", "1"]).prop_map(str::to_string)).boxed()
}

/// Every variant of [`Request`], weighted towards the tree operations.
pub(super) fn request() -> BoxedStrategy<Request> {
    use Request as R;
    let arms: Vec<(u32, BoxedStrategy<Request>)> = vec![
        (14, create_req().prop_map(R::Create).boxed()),
        (4, create_req().prop_map(R::Create2).boxed()),
        (4, create_req().prop_map(R::CreateContainer).boxed()),
        (3, create_ttl_req().prop_map(R::CreateTTL).boxed()),
        (6, delete_req().prop_map(R::Delete).boxed()),
        (5, set_data_req().prop_map(R::SetData).boxed()),
        (
            3,
            (path(), acls(), version())
                .prop_map(|(path, acl, version)| R::SetACL(SetACLRequest { path, acl, version }))
                .boxed(),
        ),
        (4, path_watch().prop_map(R::Exists).boxed()),
        (4, path_watch().prop_map(R::GetData).boxed()),
        (3, path_watch().prop_map(R::GetChildren).boxed()),
        (3, path_watch().prop_map(R::GetChildren2).boxed()),
        (2, path_req().prop_map(R::GetACL).boxed()),
        (1, path_req().prop_map(R::Sync).boxed()),
        (2, Just(R::Ping).boxed()),
        (1, check_req().prop_map(R::Check).boxed()),
        (6, multi(1, 12).prop_map(R::Multi).boxed()),
        (
            1,
            (
                optional_string(),
                optional_string(),
                optional_string(),
                any::<i64>(),
            )
                .prop_map(|(j, l, n, id)| {
                    R::Reconfig(ReconfigRequest {
                        joining_servers: j,
                        leaving_servers: l,
                        new_members: n,
                        cur_config_id: id,
                    })
                })
                .boxed(),
        ),
        (2, watcher_type().prop_map(R::CheckWatches).boxed()),
        (2, watcher_type().prop_map(R::RemoveWatches).boxed()),
        (
            1,
            prop::collection::vec(any::<u8>(), 0..8)
                .prop_map(|b| R::DeleteContainer(RawBody(b)))
                .boxed(),
        ),
        (2, multi(12, 1).prop_map(R::MultiRead).boxed()),
        (3, auth_packet().prop_map(R::Auth).boxed()),
        (
            2,
            (relative_zxid(), paths(), paths(), paths())
                .prop_map(|(relative_zxid, d, e, c)| {
                    R::SetWatches(SetWatches {
                        relative_zxid,
                        data_watches: d,
                        exist_watches: e,
                        child_watches: c,
                    })
                })
                .boxed(),
        ),
        (
            2,
            (relative_zxid(), paths(), paths(), paths(), paths(), paths())
                .prop_map(|(relative_zxid, d, e, c, p, r)| {
                    R::SetWatches2(SetWatches2 {
                        relative_zxid,
                        data_watches: d,
                        exist_watches: e,
                        child_watches: c,
                        persistent_watches: p,
                        persistent_recursive_watches: r,
                    })
                })
                .boxed(),
        ),
        (
            1,
            prop::option::of(prop::collection::vec(any::<u8>(), 0..4))
                .prop_map(|token| R::Sasl(SaslToken { token }))
                .boxed(),
        ),
        (2, path_req().prop_map(R::GetEphemerals).boxed()),
        (2, path_req().prop_map(R::GetAllChildrenNumber).boxed()),
        (
            3,
            (path(), prop_oneof![8 => 0..=2i32, 1 => any::<i32>()])
                .prop_map(|(path, mode)| R::AddWatch(AddWatchRequest { path, mode }))
                .boxed(),
        ),
        (1, Just(R::WhoAmI).boxed()),
        (1, Just(R::CreateSession).boxed()),
        (2, Just(R::CloseSession).boxed()),
    ];
    Union::new_weighted(arms).boxed()
}

/// The xid a request is sent with: the connection's counter, or one of the special values.
pub(super) fn xid() -> BoxedStrategy<Option<i32>> {
    prop_oneof![
        8 => Just(None),
        1 => select(vec![-4, -8, -2, -1, 0, i32::MAX, i32::MIN]).prop_map(Some),
    ]
    .boxed()
}
