//! Peers that start a four-letter word, or take its answer, and then do nothing: each is
//! dropped by a deadline, and none holds up shutdown.

use std::time::Duration;

use shepherd_testkit::{Peer, within};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

use crate::pipe::{bystander_is_served, server};

/// How long a connection may stay silent, or a write make no progress, before a handshake.
const HANDSHAKE_IDLE: Duration = Duration::from_secs(10);

/// A TCP peer sends one byte of a four-letter word (or of a frame length) and nothing more.
/// The server closes it after 10 s of virtual time, serves another session meanwhile, and
/// shuts down.
#[tokio::test(start_paused = true)]
async fn a_slow_loris_on_the_client_port_is_closed_after_ten_seconds() {
    let server = server().await;
    let mut loris = Peer::tcp(server.local_addr()).await;
    loris.send_raw(b"s").await;
    let started = Instant::now();
    bystander_is_served(&server, "beside-a-loris").await;
    assert!(loris.closed().await);
    let took = started.elapsed();
    assert!(took >= HANDSHAKE_IDLE, "closed after only {took:?}");
    within("shutdown", server.shutdown()).await;
}

/// A peer asks `srvr` through an 8-byte pipe and reads one byte of the answer, no more. The
/// server's write of the rest is stuck; shutdown completes all the same.
#[tokio::test]
async fn a_four_letter_word_never_read_does_not_hold_up_shutdown() {
    let server = server().await;
    let (mut client, served) = tokio::io::duplex(8);
    server.serve_io(served);
    client.write_all(b"srvr").await.expect("written");
    let mut first = [0; 1];
    within("the answer to start", client.read_exact(&mut first))
        .await
        .expect("readable");
    within("shutdown", server.shutdown()).await;
    let mut rest = Vec::new();
    within("the close", client.read_to_end(&mut rest))
        .await
        .expect("readable");
    assert!(rest.len() <= 8, "{} bytes", rest.len());
}

/// The same peer, with the server left running: once the answer's write has made no progress
/// for 10 s (virtual), the connection is dropped; the peer's next write finds it gone.
#[tokio::test(start_paused = true)]
async fn a_four_letter_word_never_read_is_dropped_after_ten_seconds() {
    let server = server().await;
    let (mut client, served) = tokio::io::duplex(8);
    server.serve_io(served);
    client.write_all(b"srvr").await.expect("written");
    let mut first = [0; 1];
    within("the answer to start", client.read_exact(&mut first))
        .await
        .expect("readable");
    let started = Instant::now();
    // Nothing reads these: the write waits until the server drops its end.
    let gone = within("the server to drop the stream", client.write_all(&[0; 64])).await;
    assert!(gone.is_err());
    let took = started.elapsed();
    assert!(took >= HANDSHAKE_IDLE, "dropped after only {took:?}");
    bystander_is_served(&server, "after-a-deaf-four-letter-word").await;
}
