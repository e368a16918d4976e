//! The sasl request (op 102) and enforce.auth over the core (docs/security.md, "SASL
//! DIGEST-MD5"): a full DIGEST-MD5 exchange with the protocol crate's client, ZooKeeper's
//! outcomes for a wrong password, a token after the exchange and an unauthenticated request, and the
//! `sasl` ACL scheme.

use std::collections::HashMap;
use std::sync::Arc;

use shepherd_protocol::sasl::{ClientStep, DigestMd5Client, DigestParams};
use shepherd_protocol::{Acl, Id, Request, Response, SaslToken, WhoAmIResponse, perms};

use super::*;
use crate::AuthPolicy;

fn policy(enforce: &[&str]) -> CoreConfig {
    let users: HashMap<String, String> = [("bob", "bobsecret"), ("admin", "adminpw")]
        .into_iter()
        .map(|(u, p)| (u.to_string(), p.to_string()))
        .collect();
    CoreConfig {
        auth: AuthPolicy {
            sasl_users: Some(Arc::new(users)),
            super_users: vec!["admin".into()],
            sasl_scheme: true,
            enforce_schemes: enforce.iter().map(|s| s.to_string()).collect(),
        },
        ..CoreConfig::default()
    }
}

fn sasl(token: Vec<u8>) -> Request {
    Request::Sasl(SaslToken { token: Some(token) })
}

fn token_of(out: &Out) -> Vec<u8> {
    match out.ok() {
        Response::Sasl(SaslToken { token: Some(t) }) => t,
        other => panic!("no token: {other:?}"),
    }
}

/// Runs the exchange; returns the final reply (the rspauth one, or the failure).
fn login(h: &mut H, c: &mut Client, user: &str, password: &str) -> Out {
    let mut client = DigestMd5Client::new(DigestParams::zookeeper(), user, password, "cnonce-1");
    let challenge = h.send(c, sasl(client.initial_token()));
    assert_eq!((challenge.err(), challenge.zxid()), (0, 0));
    let ClientStep::Respond(response) = client.step(&token_of(&challenge)).unwrap() else {
        panic!("no response")
    };
    let last = h.send(c, sasl(response));
    if last.err() == 0 {
        assert_eq!(client.step(&token_of(&last)), Ok(ClientStep::Complete));
    }
    last
}

fn who(h: &mut H, c: &mut Client) -> Vec<(String, String)> {
    let Response::WhoAmI(WhoAmIResponse { client_info }) = h.send(c, Request::WhoAmI).ok() else {
        panic!("no whoami")
    };
    client_info
        .into_iter()
        .map(|i| (i.auth_scheme, i.user))
        .collect()
}

#[test]
fn digest_md5_login_adds_sasl_identity() {
    let mut h = H::with(policy(&[]));
    let mut c = h.connect();
    let done = login(&mut h, &mut c, "bob", "bobsecret");
    assert_eq!((done.err(), done.zxid()), (0, 0));
    assert!(!done.closed(c.conn));
    assert_eq!(
        who(&mut h, &mut c),
        [
            ("ip".into(), "127.0.0.1".into()),
            ("sasl".into(), "bob".into())
        ]
    );
    // The sasl scheme: bob's ACL admits bob, `auth` expands to sasl:bob.
    let bob_only = vec![Acl {
        perms: perms::ALL,
        id: Id::new("sasl", "bob"),
    }];
    assert_eq!(h.send(&mut c, create_acl("/b", bob_only.clone())).err(), 0);
    assert_eq!(h.send(&mut c, get_data("/b", false)).err(), 0);
    let auth_acl = vec![Acl {
        perms: perms::ALL,
        id: Id::new("auth", ""),
    }];
    assert_eq!(h.send(&mut c, create_acl("/a", auth_acl)).err(), 0);
    let Response::GetACL(acl) = h.send(&mut c, get_acl("/a")).ok() else {
        panic!("no acl")
    };
    assert_eq!(acl.acl, bob_only);
    // Another client is refused.
    let mut other = h.connect();
    assert_eq!(h.send(&mut other, get_data("/b", false)).err(), -102);
}

#[test]
fn super_user_gets_super() {
    let mut h = H::with(policy(&[]));
    let mut c = h.connect();
    assert_eq!(login(&mut h, &mut c, "admin", "adminpw").err(), 0);
    assert_eq!(
        who(&mut h, &mut c),
        [
            ("ip".into(), "127.0.0.1".into()),
            ("sasl".into(), "admin".into()),
            ("super".into(), String::new())
        ]
    );
}

#[test]
fn wrong_password_is_auth_failed_and_closes() {
    let mut h = H::with(policy(&[]));
    let mut c = h.connect();
    let failed = login(&mut h, &mut c, "bob", "wrong");
    assert_eq!((failed.err(), failed.zxid()), (-115, 0));
    assert_eq!(failed.actions.last(), Some(&Action::Close(c.conn)));
    // ZooKeeper writes a null token after the header even on failure.
    let Action::Send(_, payload) = &failed.actions[0] else {
        panic!("no reply")
    };
    assert_eq!(payload[16..], [0xff, 0xff, 0xff, 0xff]);
    // The connection closes; the session lives on.
    assert_eq!(h.core.sessions().len(), 1);
}

#[test]
fn failure_under_enforced_sasl_is_session_closed_require_sasl_auth() {
    let mut h = H::with(policy(&["sasl"]));
    let mut c = h.connect();
    let failed = login(&mut h, &mut c, "eve", "x");
    assert_eq!(failed.err(), -124);
    assert!(failed.closed(c.conn));
}

#[test]
fn enforced_auth_refuses_everything_but_auth_and_sasl() {
    let mut h = H::with(policy(&["sasl"]));
    for request in [Request::Ping, get_data("/", false), Request::CloseSession] {
        let mut c = h.connect();
        let out = h.send(&mut c, request);
        assert_eq!((out.err(), out.zxid()), (-124, 0));
        assert_eq!(out.actions.last(), Some(&Action::Close(c.conn)));
    }
    // A digest identity does not satisfy sasl enforcement; sasl does.
    let mut c = h.connect();
    assert_eq!(login(&mut h, &mut c, "bob", "bobsecret").err(), 0);
    assert_eq!(h.send(&mut c, get_data("/", false)).err(), 0);
    assert_eq!(h.send(&mut c, Request::Ping).err(), 0);
}

#[test]
fn enforced_digest_accepts_a_digest_identity() {
    let mut h = H::with(policy(&["digest"]));
    let mut c = h.connect();
    let auth = Request::Auth(shepherd_protocol::AuthPacket {
        auth_type: 0,
        scheme: "digest".into(),
        auth: Some(b"u:p".to_vec()),
    });
    assert_eq!(h.send(&mut c, auth).err(), 0);
    assert_eq!(h.send(&mut c, get_data("/", false)).err(), 0);
}

/// A token after a completed exchange is a failed exchange, as on ZooKeeper 3.8 (checked
/// against a real server): AuthFailed, or SessionClosedRequireSaslAuth under enforced SASL,
/// with a null token, then the close.
#[test]
fn a_token_after_the_exchange_is_auth_failed() {
    for (enforce, code) in [(&[][..], -115), (&["sasl"][..], -124)] {
        let mut h = H::with(policy(enforce));
        let mut c = h.connect();
        assert_eq!(login(&mut h, &mut c, "bob", "bobsecret").err(), 0);
        let again = h.send(&mut c, sasl(Vec::new()));
        assert_eq!((again.err(), again.zxid()), (code, 0));
        let Action::Send(_, payload) = &again.actions[0] else {
            panic!("no reply")
        };
        assert_eq!(payload[16..], [0xff, 0xff, 0xff, 0xff]);
        assert_eq!(again.actions.last(), Some(&Action::Close(c.conn)));
    }
}

/// The boot salt changes the nonce: a restart with the same session secret, connection id and
/// wall clock (set back) does not issue a nonce again.
#[test]
fn the_boot_salt_changes_the_nonce() {
    let challenge = |salt: u8| {
        let mut h = H::with(CoreConfig {
            boot_salt: [salt; 32],
            ..policy(&[])
        });
        let mut c = h.connect();
        token_of(&h.send(&mut c, sasl(Vec::new())))
    };
    assert_eq!(challenge(1), challenge(1));
    assert_ne!(challenge(1), challenge(2));
}

/// A flood of sasl requests: the first starts the exchange, the second (not a valid response)
/// ends it and the connection; nothing accumulates.
#[test]
fn a_flood_of_sasl_requests_ends_with_the_connection() {
    let mut h = H::with(policy(&[]));
    let mut c = h.connect();
    assert_eq!(h.send(&mut c, sasl(Vec::new())).err(), 0);
    let second = h.send(&mut c, sasl(vec![b'x'; 100_000]));
    assert_eq!(second.err(), -115);
    assert!(second.closed(c.conn));
    for _ in 0..1000 {
        let out = h.send(&mut c, sasl(Vec::new()));
        assert!(out.actions.is_empty(), "a closed connection gets nothing");
    }
}

#[test]
fn nonces_differ_per_connection() {
    let mut h = H::with(policy(&[]));
    let mut a = h.connect();
    let mut b = h.connect();
    let ta = token_of(&h.send(&mut a, sasl(Vec::new())));
    let tb = token_of(&h.send(&mut b, sasl(Vec::new())));
    assert_ne!(ta, tb);
}

#[test]
fn without_sasl_users_a_null_token() {
    let mut h = H::new();
    let mut c = h.connect();
    let out = h.send(&mut c, sasl(Vec::new()));
    assert_eq!(
        (out.err(), out.ok()),
        (0, Response::Sasl(SaslToken { token: None }))
    );
}
