//! Requests that hostile clients send, built once for the hostile-client tests and the
//! benchmark that measures a bystander's latency under them (`bench/benches/hostile/`).

use shepherd_protocol::{Acl, CreateMode, CreateRequest, Id, Request};

/// How many ACL entries [`huge_acl_create`] carries.
pub const HUGE_ACL_ENTRIES: i32 = 80_000;

/// A create of `path` carrying [`HUGE_ACL_ENTRIES`] distinct ACL entries of 12 bytes each
/// (perms, and two empty strings): 960 000 bytes, under the default `jute.maxbuffer` of
/// 1 048 575, all distinct by their permission bits. Before any permission check, ZooKeeper's
/// duplicate removal scans such a list once per entry (3.2 × 10⁹ comparisons); the entries have
/// no scheme, so the answer is InvalidACL.
pub fn huge_acl_create(path: &str) -> Request {
    let acl = (0..HUGE_ACL_ENTRIES)
        .map(|perms| Acl {
            perms,
            id: Id::new("", ""),
        })
        .collect();
    Request::Create(CreateRequest {
        path: path.into(),
        data: None,
        acl,
        flags: CreateMode::Persistent.into(),
    })
}
