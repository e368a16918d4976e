//! An auth flood: one connection sends auth packets without end. Repeats of one credential
//! are answered and add nothing; fresh credentials stop at the per-connection bound
//! (docs/protocol.md §12.5), where the attacker gets AuthFailed and is closed.

use shepherd_protocol::{AuthPacket, Request};

use super::{bystander_is_served, err, send, server, session};

fn auth(credential: String) -> Request {
    Request::Auth(AuthPacket {
        auth_type: 0,
        scheme: "digest".into(),
        auth: Some(credential.into_bytes()),
    })
}

#[tokio::test]
async fn an_auth_flood_is_bounded_then_closed_while_others_are_served() {
    let server = server().await;
    let mut attacker = session(&server).await;
    let mut bystander = session(&server).await;

    // 5 000 repeats, pipelined: each is answered OK, and the identities do not grow.
    for _ in 0..5_000 {
        send(&mut attacker, &auth("same:credential".into())).await;
    }
    for i in 0..5_000 {
        let reply = attacker.next().await.expect("an answer to each repeat");
        assert_eq!(err(&reply), 0, "repeat {i}");
    }
    bystander_is_served(&mut bystander, "/during-repeats").await;

    // Fresh credentials, pipelined: 14 more fit (ip + same:credential + 14 = 16), then
    // AuthFailed and the close; nothing after it is answered.
    for i in 0..1_000 {
        send(&mut attacker, &auth(format!("user{i}:pw"))).await;
    }
    for i in 0..14 {
        let reply = attacker.next().await.expect("an answer");
        assert_eq!(err(&reply), 0, "fresh identity {i}");
    }
    let refused = attacker.next().await.expect("the refusal");
    assert_eq!(err(&refused), -115, "AuthFailed past the bound");
    assert!(attacker.closed().await, "closed after AuthFailed");

    bystander_is_served(&mut bystander, "/after-flood").await;
    server.shutdown().await;
}
