//! ACLs and authentication (docs/protocol.md §12): digest identities, NoAuth, InvalidACL, auth expansion,
//! getACL masking, super, AuthFailed.

use shepherd_protocol::{Acl, AuthPacket, GetACLResponse, Id, Request, Response, perms};

use super::*;

fn auth(scheme: &str, credential: &str) -> Request {
    Request::Auth(AuthPacket {
        auth_type: 0,
        scheme: scheme.into(),
        auth: Some(credential.as_bytes().to_vec()),
    })
}

fn acl(perms: i32, scheme: &str, id: &str) -> Acl {
    Acl {
        perms,
        id: Id::new(scheme, id),
    }
}

#[test]
fn digest_identity_of_alice() {
    assert_eq!(
        crate::acl::digest_identity(b"alice:secret"),
        "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E="
    );
}

#[test]
fn digest_acls_and_no_auth() {
    let mut h = H::new();
    let mut alice = h.connect();
    let mut anon = h.connect();
    let out = h.send(&mut alice, auth("digest", "alice:secret"));
    assert_eq!((out.err(), out.zxid(), out.header().xid), (0, 0, 1));
    let node_acl = vec![
        acl(perms::READ, "world", "anyone"),
        digest_acl(perms::ALL, "alice:secret"),
    ];
    assert_eq!(h.send(&mut alice, create_acl("/a", node_acl)).err(), 0);
    assert_eq!(h.send(&mut anon, get_data("/a", false)).err(), 0);
    assert_eq!(h.send(&mut anon, set_data("/a", b"", -1)).err(), -102);
    assert_eq!(h.send(&mut alice, set_data("/a", b"", -1)).err(), 0);
    assert_eq!(h.send(&mut anon, create("/a/x", b"")).err(), -102);
    // A wrong password still "succeeds", with an identity that matches nothing.
    assert_eq!(h.send(&mut anon, auth("digest", "alice:wrong")).err(), 0);
    assert_eq!(h.send(&mut anon, set_data("/a", b"", -1)).err(), -102);

    // getACL: masked without ADMIN, plain with it.
    let masked = match h.send(&mut anon, get_acl("/a")).ok() {
        Response::GetACL(GetACLResponse { acl, .. }) => acl,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        masked,
        [acl(1, "world", "anyone"), acl(31, "digest", "alice:x")]
    );
    let full = match h.send(&mut alice, get_acl("/a")).ok() {
        Response::GetACL(GetACLResponse { acl, .. }) => acl,
        other => panic!("{other:?}"),
    };
    assert_eq!(full[1], digest_acl(31, "alice:secret"));
    // perms 0: unreadable, even by getACL.
    h.send(
        &mut alice,
        create_acl("/zero", vec![acl(0, "world", "anyone")]),
    );
    assert_eq!(h.send(&mut alice, get_acl("/zero")).err(), -102);
    // exists has no ACL check in 3.8.0.
    assert_eq!(h.send(&mut anon, exists("/zero", false)).err(), 0);
}

#[test]
fn auth_scheme_expands_and_invalid_acls() {
    let mut h = H::new();
    let mut c = h.connect();
    assert_eq!(
        h.send(&mut c, create_acl("/x", vec![acl(31, "auth", "")]))
            .err(),
        -114
    );
    assert_eq!(
        h.send(&mut c, create_acl("/x", vec![acl(31, "world", "someone")]))
            .err(),
        -114
    );
    assert_eq!(
        h.send(&mut c, create_acl("/x", vec![acl(31, "super", "x")]))
            .err(),
        -114
    );
    assert_eq!(
        h.send(&mut c, create_acl("/x", vec![acl(31, "digest", "nocolon")]))
            .err(),
        -114
    );
    assert_eq!(
        h.send(&mut c, create_acl("/x", vec![acl(31, "ip", "10.0.0.0/33")]))
            .err(),
        -114
    );
    // ip ACLs match the peer address under the mask.
    assert_eq!(
        h.send(&mut c, create_acl("/ip", vec![acl(31, "ip", "10.0.0.0/8")]))
            .err(),
        0
    );
    assert_eq!(h.send(&mut c, get_data("/ip", false)).err(), -102);
    assert_eq!(
        h.send(
            &mut c,
            create_acl("/lo", vec![acl(31, "ip", "127.0.0.1/8")])
        )
        .err(),
        0
    );
    assert_eq!(h.send(&mut c, get_data("/lo", false)).err(), 0);

    h.send(&mut c, auth("digest", "alice:secret"));
    h.send(&mut c, auth("ip", ""));
    assert_eq!(
        h.send(&mut c, create_acl("/x", vec![acl(31, "auth", "")]))
            .err(),
        0
    );
    match h.send(&mut c, get_acl("/x")).ok() {
        Response::GetACL(GetACLResponse { acl, .. }) => {
            assert_eq!(acl, [digest_acl(31, "alice:secret")])
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn super_digest_passes_everything() {
    let mut h = H::with(CoreConfig {
        super_digest: Some(crate::acl::digest_identity(b"super:test")),
        ..CoreConfig::default()
    });
    let mut owner = h.connect();
    let mut root = h.connect();
    h.send(
        &mut owner,
        create_acl("/locked", vec![acl(0, "world", "anyone")]),
    );
    assert_eq!(h.send(&mut root, get_data("/locked", false)).err(), -102);
    h.send(&mut root, auth("digest", "super:test"));
    assert_eq!(h.send(&mut root, get_data("/locked", false)).err(), 0);
    assert_eq!(
        h.send(&mut root, set_data("/zookeeper/config", b"", -1))
            .err(),
        0
    );
    let who = match h.send(&mut root, Request::WhoAmI).ok() {
        Response::WhoAmI(w) => w.client_info,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        who.iter()
            .map(|i| (i.auth_scheme.as_str(), i.user.as_str()))
            .collect::<Vec<_>>(),
        [("ip", "127.0.0.1"), ("digest", "super"), ("super", "")]
    );
}

#[test]
fn unknown_schemes_fail_and_close() {
    for scheme in ["super", "world", "sasl", "kerberos"] {
        let mut h = H::new();
        let mut c = h.connect();
        let out = h.send(&mut c, auth(scheme, "x:y"));
        assert_eq!((out.err(), out.zxid()), (-115, 0), "{scheme}");
        assert_eq!(out.actions.last(), Some(&Action::Close(c.conn)));
        assert_eq!(h.core.sessions().len(), 1);
    }
}

/// ZooKeeper 3.8's `ip` provider reads IPv4 only, each number with `Integer.parseInt`
/// (docs/protocol.md §12.3). Expectations observed on Debian's 3.8.0 over the raw wire from a
/// 127.0.0.1 client: create with each id alone, then getData (0 = admitted, -102 = NoAuth);
/// setACL validates the same way.
#[test]
fn ip_acls_read_numbers_as_java() {
    let mut h = H::new();
    let mut c = h.connect();
    let cases = [
        ("127.0.0.1", 0, Some(0)),
        ("+127.0.0.1", 0, Some(0)),
        ("127.0.0.1/-0", 0, Some(0)),
        ("127.0.0.1/+8", 0, Some(0)),
        ("0127.00.0.1", 0, Some(0)),
        ("\u{FF11}\u{FF12}\u{FF17}.0.0.1", 0, Some(0)),
        ("-0.0.0.0", 0, Some(-102)),
        ("10.0.0.0/0", 0, Some(0)),
        ("::1", -114, None),
        ("0:0:0:0:0:0:0:1", -114, None),
        ("127.0.0.1/33", -114, None),
        ("127.0.0.1/2147483648", -114, None),
        ("1.2.3.4/", -114, None),
        ("127.0.0.1/ 8", -114, None),
        (" 127.0.0.1", -114, None),
    ];
    for (i, (id, created, read)) in cases.into_iter().enumerate() {
        let path = format!("/ip{i}");
        let out = h.send(&mut c, create_acl(&path, vec![acl(31, "ip", id)]));
        assert_eq!(out.err(), created, "create with ip:{id}");
        if let Some(read) = read {
            assert_eq!(
                h.send(&mut c, get_data(&path, false)).err(),
                read,
                "read ip:{id}"
            );
        }
    }
    h.send(&mut c, create("/set", b""));
    let set_acl = |id: &str| {
        Request::SetACL(shepherd_protocol::SetACLRequest {
            path: "/set".into(),
            acl: vec![acl(31, "ip", id)],
            version: -1,
        })
    };
    assert_eq!(h.send(&mut c, set_acl("::1")).err(), -114);
    assert_eq!(h.send(&mut c, set_acl("+127.0.0.1")).err(), 0);
}
