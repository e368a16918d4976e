//! Requests that hostile clients send, built once for the hostile-client tests and the
//! benchmark that measures a bystander's latency under them (`bench/benches/hostile/`).

use shepherd_protocol::{Acl, CreateMode, CreateRequest, Id, Request};

/// How many ACL entries [`huge_acl_create`] carries.
pub const HUGE_ACL_ENTRIES: i32 = 45_000;

/// A create of `path` carrying [`HUGE_ACL_ENTRIES`] ACL entries: all but the last are valid
/// and distinct (`world:anyone`, told apart by their permission bits, 23 bytes each), the last
/// has no scheme. About 1 035 000 bytes, under the default `jute.maxbuffer` of 1 048 575.
/// Before any validation ZooKeeper's duplicate removal scans such a list once per entry
/// (about 10⁹ comparisons); Shepherd's single pass must reach the last entry to find it
/// invalid, so the whole list is de-duplicated either way, and the answer is InvalidACL on both.
pub fn huge_acl_create(path: &str) -> Request {
    let acl = (0..HUGE_ACL_ENTRIES - 1)
        .map(|perms| Acl {
            perms,
            id: Id::new("world", "anyone"),
        })
        .chain([Acl {
            perms: 0,
            id: Id::new("", ""),
        }])
        .collect();
    Request::Create(CreateRequest {
        path: path.into(),
        data: None,
        acl,
        flags: CreateMode::Persistent.into(),
    })
}
