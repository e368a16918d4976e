//! A client forging another's session. Session ids are predictable (sequential from the start
//! time), so a password must be the only thing that binds a client to a session: it is a keyed
//! hash of the id under a secret the server drew from the OS random source, and nothing a client
//! sees (its own id and password) lets it compute another's. Every guess is answered as
//! ZooKeeper answers a bad password (a ConnectResponse with timeout 0, then the close), and the
//! victim's session, connection and ephemeral node go on untouched.

use shepherd_protocol::{ConnectRequest, CreateMode, Reply, Response};
use shepherd_testkit::{Peer, create, exists, hello};

use super::{bystander_is_served, err, server};

/// What an attacker who knows its own (id, password) might try for `victim`: its own
/// password, zeros, and its own password mixed with the difference of the two ids (the shape
/// of a password that is a reversible mix of a seed and the id).
fn guesses(own_id: i64, own: &[u8], victim: i64) -> Vec<Vec<u8>> {
    let delta = (own_id ^ victim).to_be_bytes();
    let mixed: Vec<u8> = own
        .iter()
        .enumerate()
        .map(|(i, b)| b ^ delta[i % 8])
        .collect();
    let added: Vec<u8> = own
        .iter()
        .enumerate()
        .map(|(i, b)| b.wrapping_add(delta[i % 8]))
        .collect();
    vec![own.to_vec(), vec![0; 16], mixed, added, Vec::new()]
}

fn resume(session_id: i64, passwd: Vec<u8>) -> ConnectRequest {
    ConnectRequest {
        session_id,
        passwd: Some(passwd),
        ..hello()
    }
}

#[tokio::test]
async fn forged_session_passwords_are_refused_and_the_victim_goes_on() {
    let server = server().await;
    let mut victim = Peer::tcp(server.local_addr()).await;
    let victim_session = victim
        .handshake(&hello())
        .await
        .expect("the victim's session");
    let held = victim
        .call(&create("/victim-lock", b"mine", CreateMode::Ephemeral))
        .await;
    assert_eq!(err(&held), 0, "the victim's ephemeral lock node");

    let mut attacker = Peer::tcp(server.local_addr()).await;
    let own = attacker
        .handshake(&hello())
        .await
        .expect("the attacker's session");
    let own_passwd = own.passwd.clone().expect("a password");
    let victim_passwd = victim_session.passwd.clone().expect("a password");
    assert_ne!(
        own.passwd, victim_session.passwd,
        "passwords differ per session"
    );

    for (i, passwd) in guesses(own.session_id, &own_passwd, victim_session.session_id)
        .into_iter()
        .enumerate()
    {
        let mut forger = Peer::tcp(server.local_addr()).await;
        let answer = forger
            .handshake(&resume(victim_session.session_id, passwd))
            .await
            .expect("a bad password is answered, not dropped");
        assert_eq!(
            answer.timeout, 0,
            "guess {i} is refused as an expired session"
        );
        assert!(
            forger.closed().await,
            "guess {i}: the forger's connection closes"
        );
    }

    // The victim noticed nothing: its connection still answers, its node is still its own.
    bystander_is_served(&mut victim, "/victim-after").await;
    let exists = victim.call(&exists("/victim-lock", false)).await;
    match exists {
        Reply::Ok(_, Response::Exists(r)) => assert_eq!(
            r.stat.ephemeral_owner, victim_session.session_id,
            "the lock node still belongs to the victim"
        ),
        other => panic!("exists of the victim's node: {other:?}"),
    }
    // The attacker's own session is unharmed too: refusing forgeries ends nothing.
    bystander_is_served(&mut attacker, "/attacker-after").await;

    // The test can fail: the victim's real password does resume its session.
    let mut moved = Peer::tcp(server.local_addr()).await;
    let answer = moved
        .handshake(&resume(victim_session.session_id, victim_passwd))
        .await
        .expect("the right password is answered");
    assert_eq!(answer.session_id, victim_session.session_id);
    assert!(answer.timeout > 0, "the real password resumes the session");
    server.shutdown().await;
}
