//! Error precedence, case by case, as observed on ZooKeeper 3.8.0 (docs/protocol.md §6.2-§6.7).

use shepherd_protocol::{CreateRequest, CreateTTLRequest, Request, SetACLRequest};

use super::*;

fn ttl_req(path: &str, flags: i32, ttl: i64) -> Request {
    Request::CreateTTL(CreateTTLRequest {
        path: path.into(),
        data: None,
        acl: open_acl(),
        flags,
        ttl,
    })
}

#[test]
fn create_error_order() {
    let mut h = H::new();
    let mut c = h.connect();
    h.send(&mut c, create("/p", b""));
    let cases: Vec<(Request, i32)> = vec![
        (create_flags("/x", 9), -8),
        // flags 5 through op 1 (ttl -1) is a bad TTL when extended types are on.
        (create_flags("/x", 5), -8),
        (ttl_req("/x", 5, 0), -8),
        (ttl_req("/x", 0, 100), -8),
        (ttl_req("/x", 5, 0x100_0000_0000), -8),
        (create("p", b""), -8),
        (create_acl("/x", vec![]), -114),
        // The ACL is judged before the parent (InvalidACL beats NoNode).
        (create_acl("/nope/x", vec![]), -114),
        (create("/nope/x", b""), -101),
        // The parent check runs before full validation.
        (create("/nope/", b""), -101),
        (create("/p/", b""), -8),
        (create("/p/./x", b""), -101),
        (create("/", b""), -110),
        (create("/p", b""), -110),
        (create("/zookeeper/config/x", b""), -102),
    ];
    for (request, code) in cases {
        let text = format!("{request:?}");
        assert_eq!(h.send(&mut c, request).err(), code, "{text}");
    }
    assert_eq!(h.send(&mut c, create_flags("/p/", 2)).err(), 0);
    assert_eq!(h.send(&mut c, create("/zookeeper/foo", b"")).err(), 0);
    h.send(&mut c, create_flags("/e", 1));
    assert_eq!(h.send(&mut c, create("/e/x", b"")).err(), -108);
    assert_eq!(h.send(&mut c, create("/e", b"")).err(), -110);
    // A NUL in the path is caught at step 5.
    assert_eq!(h.send(&mut c, create("/a\0b", b"")).err(), -8);
}

#[test]
fn ttl_needs_extended_types() {
    let mut h = H::with(CoreConfig {
        extended_types_enabled: false,
        ..CoreConfig::default()
    });
    let mut c = h.connect();
    assert_eq!(h.send(&mut c, ttl_req("/t", 5, 100)).err(), -6);
    assert_eq!(h.send(&mut c, ttl_req("/t", 6, 100)).err(), -6);
    // Without a TTL mode the TTL check still applies.
    assert_eq!(h.send(&mut c, ttl_req("/t", 0, 100)).err(), -8);
    // createTTL always needs a valid TTL, whatever its flags: a negative one is refused rather
    // than stored as a node the reaper would delete at once.
    assert_eq!(h.send(&mut c, ttl_req("/t", 0, -1)).err(), -8);
    // Containers need no flag.
    let container = Request::CreateContainer(CreateRequest {
        path: "/c".into(),
        data: None,
        acl: open_acl(),
        flags: 4,
    });
    assert_eq!(h.send(&mut c, container).err(), 0);
}

#[test]
fn delete_error_order() {
    let mut h = H::new();
    let mut c = h.connect();
    h.send(&mut c, create("/p", b""));
    h.send(&mut c, create("/p/c", b""));
    assert_eq!(h.send(&mut c, delete("p", -1)).err(), -8);
    assert_eq!(h.send(&mut c, delete("/nope/x", -1)).err(), -101);
    assert_eq!(h.send(&mut c, delete("/x", -1)).err(), -101);
    // The version is checked before the children.
    assert_eq!(h.send(&mut c, delete("/p", 5)).err(), -103);
    assert_eq!(h.send(&mut c, delete("/p", 0)).err(), -111);
    assert_eq!(h.send(&mut c, delete("/p/c", 0)).err(), 0);
    assert_eq!(h.send(&mut c, delete("/p", -1)).err(), 0);
    // DELETE is needed on the parent, not on the node.
    h.send(
        &mut c,
        create_acl(
            "/ro",
            vec![shepherd_protocol::Acl {
                perms: shepherd_protocol::perms::ALL & !shepherd_protocol::perms::DELETE,
                id: shepherd_protocol::Id::new("world", "anyone"),
            }],
        ),
    );
    h.send(&mut c, create_acl("/ro/x", vec![]));
    h.send(&mut c, create("/ro/y", b""));
    assert_eq!(h.send(&mut c, delete("/ro/y", -1)).err(), -102);
    assert_eq!(h.send(&mut c, delete("/ro/missing", -1)).err(), -102);
}

#[test]
fn set_data_and_set_acl_error_order() {
    let mut h = H::new();
    let mut c = h.connect();
    h.send(&mut c, create("/p", b""));
    assert_eq!(h.send(&mut c, set_data("p", b"", -1)).err(), -8);
    assert_eq!(h.send(&mut c, set_data("/p/", b"", -1)).err(), -8);
    assert_eq!(h.send(&mut c, set_data("/x", b"", -1)).err(), -101);
    assert_eq!(h.send(&mut c, set_data("/p", b"", 3)).err(), -103);
    assert_eq!(
        h.send(&mut c, set_data("/zookeeper/config", b"", -1)).err(),
        -102
    );
    assert_eq!(h.send(&mut c, set_data("/", b"", -1)).err(), 0);
    assert_eq!(h.send(&mut c, set_data("/zookeeper", b"", -1)).err(), 0);

    let set_acl = |path: &str, acl, version| {
        Request::SetACL(SetACLRequest {
            path: path.into(),
            acl,
            version,
        })
    };
    assert_eq!(h.send(&mut c, set_acl("/x", vec![], -1)).err(), -114);
    assert_eq!(h.send(&mut c, set_acl("x", vec![], -1)).err(), -8);
    assert_eq!(h.send(&mut c, set_acl("/x", open_acl(), -1)).err(), -101);
    assert_eq!(h.send(&mut c, set_acl("/p", open_acl(), 1)).err(), -103);
    assert_eq!(
        h.send(&mut c, set_acl("/zookeeper/config", open_acl(), -1))
            .err(),
        -102
    );
    assert_eq!(h.send(&mut c, set_acl("/p", open_acl(), 0)).err(), 0);
}

#[test]
fn read_errors() {
    let mut h = H::new();
    let mut c = h.connect();
    assert_eq!(h.send(&mut c, exists("/a\0", false)).err(), -8);
    assert_eq!(h.send(&mut c, exists("/nope", false)).err(), -101);
    assert_eq!(h.send(&mut c, get_data("/nope", false)).err(), -101);
    assert_eq!(h.send(&mut c, get_children("/nope", false)).err(), -101);
    assert_eq!(h.send(&mut c, get_acl("/nope")).err(), -101);
    // Reads do not validate: an odd path is just missing.
    assert_eq!(h.send(&mut c, get_data("/a/", false)).err(), -101);
    assert_eq!(h.send(&mut c, get_data("", false)).err(), 0);
}
