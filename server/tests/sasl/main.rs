//! SASL DIGEST-MD5 end to end, over real loopback sockets: a server given a JAAS file, a client
//! speaking the exchange with the protocol crate's client side, hand-built frames
//! (docs/security.md, "SASL DIGEST-MD5").
//!
//! Every wait is bounded (the test kit's reads time out) and waits on a reply or a close.

use std::path::PathBuf;

use shepherd_protocol::sasl::{ClientStep, DigestMd5Client, DigestParams};
use shepherd_protocol::{Acl, Id, Reply, Request, Response, SaslToken, WhoAmIResponse, perms};
use shepherd_server::{Server, ServerBuilder};
use shepherd_testkit::{Peer, create, get_data, reply_header};

const JAAS: &str = r#"
Server {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    user_super="adminsecret"
    user_bob="bobsecret";
};
Client {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    username="bob"
    password="bobsecret";
};
"#;

fn jaas_file(dir: &tempfile::TempDir, text: &str) -> PathBuf {
    let path = dir.path().join("jaas.conf");
    std::fs::write(&path, text).expect("write the JAAS file");
    path
}

/// A server started from `builder` with [`JAAS`]'s users; the directory holding the file lives
/// as long as the returned guard.
async fn jaas_server(builder: ServerBuilder) -> (Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let server = builder
        .jaas_file(jaas_file(&dir, JAAS))
        .start()
        .await
        .expect("server starts");
    (server, dir)
}

async fn session(server: &Server) -> Peer {
    Peer::session(server.local_addr(), 30_000, 0)
        .await
        .expect("a session")
}

fn token(reply: &Reply) -> Vec<u8> {
    match reply {
        Reply::Ok(_, Response::Sasl(SaslToken { token: Some(t) })) => t.clone(),
        other => panic!("no token: {other:?}"),
    }
}

fn sasl(token: Vec<u8>) -> Request {
    Request::Sasl(SaslToken { token: Some(token) })
}

/// The client side of the exchange; returns the last reply (rspauth's, or the refusal).
async fn login(peer: &mut Peer, user: &str, password: &str) -> Reply {
    let mut client = DigestMd5Client::new(DigestParams::zookeeper(), user, password, "e2e-cnonce");
    let challenge = peer.call(&sasl(client.initial_token())).await;
    let ClientStep::Respond(response) = client.step(&token(&challenge)).expect("a response") else {
        panic!("the client did not respond")
    };
    let last = peer.call(&sasl(response)).await;
    if reply_header(&last).err == 0 {
        assert_eq!(
            client.step(&token(&last)),
            Ok(ClientStep::Complete),
            "rspauth verifies"
        );
    }
    last
}

#[tokio::test]
async fn a_jaas_user_logs_in_and_owns_a_sasl_acl() {
    let (server, _dir) = jaas_server(Server::builder()).await;
    let mut bob = session(&server).await;
    let done = login(&mut bob, "bob", "bobsecret").await;
    assert_eq!((reply_header(&done).err, reply_header(&done).zxid), (0, 0));
    let Reply::Ok(_, Response::WhoAmI(WhoAmIResponse { client_info })) =
        bob.call(&Request::WhoAmI).await
    else {
        panic!("no whoami")
    };
    assert!(
        client_info
            .iter()
            .any(|i| i.auth_scheme == "sasl" && i.user == "bob")
    );

    let mut node = create("/bobs", b"x", shepherd_protocol::CreateMode::Persistent);
    if let Request::Create(c) = &mut node {
        c.acl = vec![Acl {
            perms: perms::ALL,
            id: Id::new("sasl", "bob"),
        }];
    }
    assert_eq!(reply_header(&bob.call(&node).await).err, 0);
    assert_eq!(reply_header(&bob.call(&get_data("/bobs")).await).err, 0);
    let mut stranger = session(&server).await;
    assert_eq!(
        reply_header(&stranger.call(&get_data("/bobs")).await).err,
        -102,
        "NoAuth"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_wrong_password_is_auth_failed_then_closed() {
    let (server, _dir) = jaas_server(Server::builder()).await;
    let mut eve = session(&server).await;
    let refused = login(&mut eve, "bob", "guess").await;
    assert_eq!(reply_header(&refused).err, -115, "AuthFailed");
    assert!(eve.closed().await, "closed after AuthFailed");
    server.shutdown().await;
}

#[tokio::test]
async fn enforced_sasl_closes_the_unauthenticated_and_serves_the_authenticated() {
    let builder = Server::builder()
        .sasl_super_user("super")
        .enforce_auth(["sasl"]);
    let (server, _dir) = jaas_server(builder).await;
    let mut anonymous = session(&server).await;
    let refused = anonymous.call(&get_data("/")).await;
    assert_eq!(
        reply_header(&refused).err,
        -124,
        "SessionClosedRequireSaslAuth"
    );
    assert!(anonymous.closed().await);

    let mut admin = session(&server).await;
    assert_eq!(
        reply_header(&login(&mut admin, "super", "adminsecret").await).err,
        0
    );
    assert_eq!(reply_header(&admin.call(&get_data("/")).await).err, 0);
    server.shutdown().await;
}

#[tokio::test]
async fn a_jaas_file_without_a_server_section_stops_the_start() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = jaas_file(
        &dir,
        "Client { m required username=\"bob\" password=\"x\"; };",
    );
    let err = Server::builder()
        .jaas_file(path)
        .start()
        .await
        .expect_err("refused");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("no 'Server' section"), "{err}");
    let err = Server::builder()
        .jaas_file(dir.path().join("absent.conf"))
        .start()
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("absent.conf"), "{err}");
}

/// A flood of sasl tokens, pipelined: the first gets the challenge, the second (not a digest
/// response) AuthFailed, then the close; nothing after is answered, and another session is
/// served throughout.
#[tokio::test]
async fn a_sasl_flood_ends_with_the_connection() {
    let (server, _dir) = jaas_server(Server::builder()).await;
    let mut attacker = session(&server).await;
    let mut bystander = session(&server).await;
    for _ in 0..1_000 {
        attacker.send(&sasl(Vec::new())).await;
    }
    let first = attacker.next().await.expect("the challenge");
    assert_eq!(reply_header(&first).err, 0);
    let second = attacker.next().await.expect("the refusal");
    assert_eq!(reply_header(&second).err, -115, "AuthFailed");
    assert!(attacker.closed().await, "closed after AuthFailed");
    assert_eq!(reply_header(&bystander.call(&get_data("/")).await).err, 0);
    server.shutdown().await;
}
