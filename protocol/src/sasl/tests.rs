//! The mechanism against RFC 2831's worked example, against a response recorded from
//! pure-sasl 0.6.2 (the library kazoo uses), client against server, and hostile input.

use super::*;
use proptest::prelude::*;

fn rfc_params() -> DigestParams {
    DigestParams {
        realm: "elwood.innosoft.com".into(),
        service: "imap".into(),
        host: "elwood.innosoft.com".into(),
    }
}

/// RFC 2831 §4's IMAP example: the response and rspauth given there.
#[test]
fn rfc2831_example() {
    let mut client = DigestMd5Client::new(rfc_params(), "chris", "secret", "OA6MHXh6VqTrRk");
    let challenge = br#"realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8"#;
    let ClientStep::Respond(response) = client.step(challenge).unwrap() else {
        panic!("no response")
    };
    let text = String::from_utf8(response.clone()).unwrap();
    assert!(
        text.contains("response=d388dad90d4bbd760a152321f2143af7"),
        "{text}"
    );
    assert!(
        text.contains(r#"digest-uri="imap/elwood.innosoft.com""#),
        "{text}"
    );

    let mut server = DigestMd5Server::new(rfc_params(), "OA6MG9tEQGm2hh".into());
    assert!(matches!(
        server.step(b"", |_| None::<&str>),
        Ok(ServerStep::Challenge(_))
    ));
    // The RFC's own response bytes, as an IMAP client sent them.
    let rfc_response = br#"charset=utf-8,username="chris",realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",nc=00000001,cnonce="OA6MHXh6VqTrRk",digest-uri="imap/elwood.innosoft.com",response=d388dad90d4bbd760a152321f2143af7,qop=auth"#;
    let step = server
        .step(rfc_response, |u| (u == "chris").then_some("secret"))
        .unwrap();
    assert_eq!(
        step,
        ServerStep::Done {
            token: b"rspauth=ea40f60335c427b5527b84dbabcdfffd".to_vec(),
            user: "chris".into()
        }
    );
    assert_eq!(
        client.step(b"rspauth=ea40f60335c427b5527b84dbabcdfffd"),
        Ok(ClientStep::Complete)
    );
}

const NONCE: &str = "dGhpcyBpcyBhIGZpeGVkIG5vbmNlIGZvciB0ZXN0cw==";

/// The bytes pure-sasl 0.6.2 sends (as `kazoo` with `sasl_options={"mechanism": "DIGEST-MD5",
/// "username": "bob", "password": "bobsecret"}` does) to this server's challenge, its cnonce
/// pinned to `5772156649015329`. Note the order, no `charset`, `qop` first.
const PURE_SASL_RESPONSE: &[u8] = br#"qop=auth,realm="zk-sasl-md5",username="bob",nonce="dGhpcyBpcyBhIGZpeGVkIG5vbmNlIGZvciB0ZXN0cw==",cnonce="5772156649015329",nc=00000001,digest-uri="zookeeper/zk-sasl-md5",response=53b0d331a25cec8509e296c836c6260c"#;

fn bob(user: &str) -> Option<&'static str> {
    (user == "bob").then_some("bobsecret")
}

#[test]
fn server_accepts_pure_sasl() {
    let mut server = DigestMd5Server::new(DigestParams::zookeeper(), NONCE.into());
    let ServerStep::Challenge(challenge) = server.step(b"", bob).unwrap() else {
        panic!("no challenge")
    };
    assert_eq!(
        challenge,
        format!(r#"realm="zk-sasl-md5",nonce="{NONCE}",charset=utf-8,algorithm=md5-sess"#)
            .into_bytes()
    );
    let step = server.step(PURE_SASL_RESPONSE, bob).unwrap();
    assert_eq!(
        step,
        ServerStep::Done {
            token: b"rspauth=37ffad3a33b8cbcc431d9f374e3c13c0".to_vec(),
            user: "bob".into()
        }
    );
    assert!(server.is_over());
    assert_eq!(server.step(b"", bob), Err(SaslError::Finished));
}

#[test]
fn client_computes_what_pure_sasl_computes() {
    let mut client = DigestMd5Client::new(
        DigestParams::zookeeper(),
        "bob",
        "bobsecret",
        "5772156649015329",
    );
    assert!(client.initial_token().is_empty());
    let challenge = format!(
        r#"realm="zk-sasl-md5",nonce="{NONCE}",qop="auth",charset=utf-8,algorithm=md5-sess"#
    );
    let ClientStep::Respond(response) = client.step(challenge.as_bytes()).unwrap() else {
        panic!("no response")
    };
    let text = String::from_utf8(response).unwrap();
    assert!(
        text.contains("response=53b0d331a25cec8509e296c836c6260c"),
        "{text}"
    );
    assert_eq!(
        client.step(b"rspauth=00000000000000000000000000000000"),
        Err(SaslError::BadServerProof)
    );
    assert_eq!(
        client.step(b"rspauth=37ffad3a33b8cbcc431d9f374e3c13c0"),
        Err(SaslError::Finished)
    );
}

fn run(user: &str, password: &str) -> Result<String, SaslError> {
    let mut server = DigestMd5Server::new(DigestParams::zookeeper(), "n0nce".into());
    let mut client = DigestMd5Client::new(DigestParams::zookeeper(), user, password, "cn0nce");
    let users = |u: &str| match u {
        "bob" => Some("bobsecret"),
        "zoë" => Some("pässword"),
        _ => None,
    };
    let ServerStep::Challenge(challenge) = server.step(&client.initial_token(), users)? else {
        panic!("no challenge")
    };
    let ClientStep::Respond(response) = client.step(&challenge)? else {
        panic!("no response")
    };
    let ServerStep::Done { token, user } = server.step(&response, users)? else {
        panic!("not done")
    };
    assert_eq!(client.step(&token)?, ClientStep::Complete);
    Ok(user)
}

#[test]
fn client_against_server() {
    assert_eq!(run("bob", "bobsecret"), Ok("bob".into()));
    assert_eq!(run("zoë", "pässword"), Ok("zoë".into()));
    assert_eq!(run("bob", "wrong"), Err(SaslError::BadCredentials));
    assert_eq!(run("eve", ""), Err(SaslError::BadCredentials));
}

#[test]
fn server_refusals() {
    let challenged = || {
        let mut s = DigestMd5Server::new(DigestParams::zookeeper(), NONCE.into());
        s.step(b"", bob).unwrap();
        s
    };
    let swap = |from: &str, to: &str| {
        let text = String::from_utf8(PURE_SASL_RESPONSE.to_vec()).unwrap();
        assert!(text.contains(from));
        text.replace(from, to).into_bytes()
    };
    let cases: Vec<(Vec<u8>, SaslError)> = vec![
        (
            swap("nc=00000001", "nc=00000002"),
            SaslError::Unacceptable("nc"),
        ),
        (
            swap("qop=auth", "qop=auth-int"),
            SaslError::Unacceptable("qop"),
        ),
        (
            swap("zookeeper/zk-sasl-md5", "zookeeper/host"),
            SaslError::Unacceptable("digest-uri"),
        ),
        (
            swap("realm=\"zk-sasl-md5\"", "realm=\"other\""),
            SaslError::Unacceptable("realm"),
        ),
        (
            swap("nonce=\"dGhp", "nonce=\"xGhp"),
            SaslError::Unacceptable("nonce"),
        ),
        (
            swap("response=53b0", "response=63b0"),
            SaslError::BadCredentials,
        ),
        (
            swap("response=53b0", "response=5"),
            SaslError::Unacceptable("response"),
        ),
        (
            swap("username=\"bob\"", "username=\"eve\""),
            SaslError::BadCredentials,
        ),
        (swap("cnonce=", "cn="), SaslError::Missing("cnonce")),
        (swap("qop=auth", "nc=1"), SaslError::Repeated("nc")),
        (
            vec![b'a'; MAX_RESPONSE_LEN + 1],
            SaslError::Unacceptable("response length"),
        ),
    ];
    for (token, error) in cases {
        let mut server = challenged();
        assert_eq!(
            server.step(&token, bob),
            Err(error),
            "{}",
            String::from_utf8_lossy(&token)
        );
        assert!(server.is_over());
    }
    // A first token with content still gets the challenge, as from ZooKeeper 3.8.
    let mut fresh = DigestMd5Server::new(DigestParams::zookeeper(), NONCE.into());
    assert!(matches!(
        fresh.step(b"x", bob),
        Ok(ServerStep::Challenge(_))
    ));
}

#[test]
fn client_refusals() {
    let client = || DigestMd5Client::new(DigestParams::zookeeper(), "bob", "pw", "c");
    for (challenge, error) in [
        (
            &br#"nonce="n",qop="auth-conf",algorithm=md5-sess"#[..],
            SaslError::Unacceptable("qop"),
        ),
        (
            br#"nonce="n",algorithm=md5"#,
            SaslError::Unacceptable("algorithm"),
        ),
        (
            br#"qop="auth",algorithm=md5-sess"#,
            SaslError::Missing("nonce"),
        ),
        (
            br#"nonce="n",nonce="m",algorithm=md5-sess"#,
            SaslError::Repeated("nonce"),
        ),
    ] {
        assert_eq!(client().step(challenge), Err(error));
    }
}

proptest! {
    #[test]
    fn server_never_panics(first in proptest::collection::vec(any::<u8>(), 0..64),
                           second in proptest::collection::vec(any::<u8>(), 0..600)) {
        let mut server = DigestMd5Server::new(DigestParams::zookeeper(), NONCE.into());
        let _ = server.step(&first, bob);
        let _ = server.step(&second, bob);
        let _ = server.step(&second, bob);
    }

    #[test]
    fn client_never_panics(first in proptest::collection::vec(any::<u8>(), 0..600),
                           second in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut client = DigestMd5Client::new(DigestParams::zookeeper(), "bob", "pw", "c");
        let _ = client.step(&first);
        let _ = client.step(&second);
    }

    /// Directive-shaped noise: the lists a confused peer would send.
    #[test]
    fn directive_noise_never_panics(s in r#"([a-z-]{0,8}=("[^"]{0,8}"?|[a-z0-9]{0,8}),?){0,12}"#) {
        let mut server = DigestMd5Server::new(DigestParams::zookeeper(), NONCE.into());
        let _ = server.step(b"", bob);
        let _ = server.step(s.as_bytes(), bob);
        let _ = DigestMd5Client::new(DigestParams::zookeeper(), "bob", "pw", "c").step(s.as_bytes());
    }
}

/// One exchange recorded against a real ZooKeeper 3.8.0 (Debian's, JAAS `user_bob="bobsecret"`)
/// with pure-sasl's cnonce pinned: ZooKeeper's challenge, pure-sasl's response, ZooKeeper's
/// rspauth. Our server, given ZooKeeper's nonce, answers the same rspauth; our client computes
/// the same response and accepts ZooKeeper's rspauth.
#[test]
fn zookeeper_38_exchange() {
    const ZK_NONCE: &str = "itmJv/bMKt3vcFnZVHcsggGbdOq5BoDc8Pq8+2An";
    const ZK_CHALLENGE: &[u8] = br#"realm="zk-sasl-md5",nonce="itmJv/bMKt3vcFnZVHcsggGbdOq5BoDc8Pq8+2An",charset=utf-8,algorithm=md5-sess"#;
    const RESPONSE: &[u8] = br#"qop=auth,realm="zk-sasl-md5",username="bob",nonce="itmJv/bMKt3vcFnZVHcsggGbdOq5BoDc8Pq8+2An",cnonce="5772156649015329",nc=00000001,digest-uri="zookeeper/zk-sasl-md5",response=dfe3b15a3e083db1cc9014b68048de56"#;
    const ZK_RSPAUTH: &[u8] = b"rspauth=634097b4be9a5f16775cb30b59cf315f";

    let mut server = DigestMd5Server::new(DigestParams::zookeeper(), ZK_NONCE.into());
    assert_eq!(
        server.step(b"", bob),
        Ok(ServerStep::Challenge(ZK_CHALLENGE.to_vec()))
    );
    assert_eq!(
        server.step(RESPONSE, bob),
        Ok(ServerStep::Done {
            token: ZK_RSPAUTH.to_vec(),
            user: "bob".into()
        })
    );

    let mut client = DigestMd5Client::new(
        DigestParams::zookeeper(),
        "bob",
        "bobsecret",
        "5772156649015329",
    );
    let ClientStep::Respond(response) = client.step(ZK_CHALLENGE).unwrap() else {
        panic!("no response")
    };
    let text = String::from_utf8(response).unwrap();
    assert!(
        text.contains("response=dfe3b15a3e083db1cc9014b68048de56"),
        "{text}"
    );
    assert_eq!(client.step(ZK_RSPAUTH), Ok(ClientStep::Complete));
}

/// A response without `nc` is hashed as `nc=00000001`, as the JDK's DIGEST-MD5 server that
/// ZooKeeper 3.8 runs takes it (checked against a real server): pure-sasl's response with its
/// `nc` removed gets the same rspauth.
#[test]
fn absent_nc_counts_as_one() {
    let mut server = DigestMd5Server::new(DigestParams::zookeeper(), NONCE.into());
    assert!(matches!(
        server.step(b"", bob),
        Ok(ServerStep::Challenge(_))
    ));
    let text = String::from_utf8(PURE_SASL_RESPONSE.to_vec()).unwrap();
    let without_nc = text.replace("nc=00000001,", "");
    assert_ne!(text, without_nc);
    assert_eq!(
        server.step(without_nc.as_bytes(), bob),
        Ok(ServerStep::Done {
            token: b"rspauth=37ffad3a33b8cbcc431d9f374e3c13c0".to_vec(),
            user: "bob".into()
        })
    );
}

/// The length cap holds for every token: the server's ignored first one and the client's
/// `rspauth`, not only the digest response and the challenge.
#[test]
fn every_token_is_capped() {
    let mut server = DigestMd5Server::new(DigestParams::zookeeper(), NONCE.into());
    assert_eq!(
        server.step(&vec![b'a'; MAX_RESPONSE_LEN + 1], bob),
        Err(SaslError::Unacceptable("response length"))
    );
    assert!(server.is_over());

    let mut client = DigestMd5Client::new(
        DigestParams::zookeeper(),
        "bob",
        "bobsecret",
        "5772156649015329",
    );
    let challenge =
        format!(r#"realm="zk-sasl-md5",nonce="{NONCE}",charset=utf-8,algorithm=md5-sess"#);
    assert!(matches!(
        client.step(challenge.as_bytes()),
        Ok(ClientStep::Respond(_))
    ));
    let mut rspauth = b"rspauth=37ffad3a33b8cbcc431d9f374e3c13c0,x=\"".to_vec();
    rspauth.resize(MAX_CHALLENGE_LEN + 1, b'a');
    assert_eq!(
        client.step(&rspauth),
        Err(SaslError::Unacceptable("challenge length"))
    );
}
