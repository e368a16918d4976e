//! The wire protocol over an in-memory stream: `Server::serve_io` on one end of a
//! `tokio::io::duplex`, and the test kit's raw wire peer ([`Peer`], frames built from
//! `shepherd_protocol`'s records) on the other, with no socket anywhere.
//!
//! What these pin down: a stream served this way is served as a TCP connection is (handshake,
//! requests, watch events in order, four-letter words), it ends when the server shuts down, and
//! the TCP-only rules (the per-IP limit) leave it alone.

use shepherd_protocol::{
    CreateMode, EventType, FourLetterWord, GetDataResponse, PathWatchRequest, Reply, Request,
    Response,
};
use shepherd_server::Server;
use shepherd_testkit::{Peer, create, get_data, hello, set_data, within};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

/// Room in each direction of the in-memory pipe.
const PIPE: usize = 64 * 1024;

/// A server as built by default: the whitelist of four-letter words is part of what is tested.
async fn server() -> Server {
    Server::builder().start().await.expect("server starts")
}

/// A raw client on the far end of an in-memory pipe whose other end the server now serves.
fn attach(server: &Server) -> Peer<DuplexStream> {
    let (client, served) = tokio::io::duplex(PIPE);
    server.serve_io(served);
    Peer::new(client)
}

/// Reads everything the server writes until it closes the stream.
async fn read_to_end(stream: &mut DuplexStream) -> String {
    let mut text = String::new();
    within(
        "the server to close the stream",
        stream.read_to_string(&mut text),
    )
    .await
    .expect("readable");
    text
}

#[tokio::test]
async fn handshake_create_get_and_a_watch_event_over_duplex() {
    let server = server().await;
    let mut watcher = attach(&server);
    let response = watcher.handshake(&hello()).await.expect("connect response");
    assert!(!response.is_expired());
    assert_eq!(response.timeout, 30_000);
    assert_eq!(response.passwd.as_ref().map(Vec::len), Some(16));

    let created = watcher
        .call_as(1, &create("/io", b"one", CreateMode::Persistent))
        .await;
    match created {
        Reply::Ok(header, Response::Create(created)) => {
            assert_eq!(header.xid, 1);
            assert_eq!(created.path, "/io");
        }
        other => panic!("unexpected {other:?}"),
    }
    let get = Request::GetData(PathWatchRequest {
        path: "/io".into(),
        watch: true,
    });
    match watcher.call_as(2, &get).await {
        Reply::Ok(header, Response::GetData(GetDataResponse { data, .. })) => {
            assert_eq!(header.xid, 2);
            assert_eq!(data.as_deref(), Some(&b"one"[..]));
        }
        other => panic!("unexpected {other:?}"),
    }

    // A second in-memory session changes the node; the first hears of it.
    let mut writer = attach(&server);
    let other = writer.handshake(&hello()).await.expect("connect response");
    assert_ne!(other.session_id, response.session_id);
    assert!(matches!(
        writer.call_as(1, &set_data("/io", b"two")).await,
        Reply::Ok(..)
    ));
    match watcher.next().await.expect("the watch event") {
        Reply::Event(header, event) => {
            assert_eq!(header.xid, -1);
            assert_eq!(event.event_type, EventType::NodeDataChanged);
            assert_eq!(event.path, "/io");
        }
        other => panic!("expected the watch event, got {other:?}"),
    }
    // The watch was one-shot, and the session still serves.
    match watcher.call_as(3, &get_data("/io")).await {
        Reply::Ok(_, Response::GetData(GetDataResponse { data, .. })) => {
            assert_eq!(data.as_deref(), Some(&b"two"[..]))
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        server.controls().dump_watches().is_empty(),
        "the fired watch is gone"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn four_letter_words_are_answered_over_duplex() {
    let server = server().await;
    // srvr is whitelisted by default; ruok is not, and says so, as over TCP.
    let (mut client, served) = tokio::io::duplex(PIPE);
    server.serve_io(served);
    client.write_all(b"srvr").await.unwrap();
    let text = read_to_end(&mut client).await;
    assert!(text.starts_with("Zookeeper version: "), "{text}");
    assert!(text.contains("Mode: standalone"), "{text}");

    let (mut client, served) = tokio::io::duplex(PIPE);
    server.serve_io(served);
    client.write_all(b"ruok").await.unwrap();
    assert_eq!(
        read_to_end(&mut client).await,
        "ruok is not executed because it is not in the whitelist.\n"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn in_memory_peers_are_loopback_and_not_held_to_the_per_ip_limit() {
    let server = Server::builder()
        .max_client_connections(1)
        .start()
        .await
        .expect("server starts");
    let mut first = attach(&server);
    let mut second = attach(&server);
    for peer in [&mut first, &mut second] {
        let response = peer.handshake(&hello()).await.expect("connect response");
        assert!(!response.is_expired());
    }
    let cons = server.controls().four_letter_word(FourLetterWord::Cons);
    assert_eq!(cons.matches(" /127.0.0.1:0[1]").count(), 2, "{cons}");
    server.shutdown().await;
}

#[tokio::test]
async fn shutdown_closes_in_memory_connections() {
    let server = server().await;
    let mut peer = attach(&server);
    let response = peer.handshake(&hello()).await.expect("connect response");
    assert!(!response.is_expired());
    within("shutdown", server.shutdown()).await;
    assert_eq!(peer.next_frame().await, None, "the stream ends at shutdown");

    // After shutdown a stream is not served: it is dropped at once.
    let (mut client, served) = tokio::io::duplex(PIPE);
    server.serve_io(served);
    assert_eq!(read_to_end(&mut client).await, "");
}
