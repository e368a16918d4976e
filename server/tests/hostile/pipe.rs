//! What the tests of careless readers share: sessions over an in-memory pipe of a chosen size
//! (`Server::serve_io` on a `tokio::io::duplex`), so that "the peer stopped reading" is
//! exact rather than at the mercy of the kernel's socket buffers, and a bystander whose
//! requests must go on being served.

use shepherd_protocol::{ConnectRequest, CreateMode, Reply, Request, encode_frame, encode_request};
use shepherd_server::Server;
pub use shepherd_testkit::all_words_server as server;
use shepherd_testkit::{Peer, create, get_data, hello, within};
use tokio::io::{AsyncReadExt, DuplexStream};

/// Room in each direction of a well-behaved client's pipe.
pub const PIPE: usize = 64 * 1024;

/// A node's data as large as a request may carry it (under `jute.maxbuffer`).
pub const BIG: usize = 1_000_000;

/// A session over a pipe with `pipe` bytes of room each way, negotiated for `timeout_ms`.
pub async fn session(server: &Server, pipe: usize, timeout_ms: i32) -> Peer<DuplexStream> {
    let (client, served) = tokio::io::duplex(pipe);
    server.serve_io(served);
    let mut peer = Peer::new(client);
    let request = ConnectRequest {
        timeout: timeout_ms,
        ..hello()
    };
    peer.handshake(&request).await.expect("a session");
    peer
}

/// A request's whole frame, as written to the wire.
pub fn frame(xid: i32, request: &Request) -> Vec<u8> {
    encode_frame(|b| encode_request(xid, request, b))
}

/// Creates `/big` holding [`BIG`] bytes, from a session of its own.
pub async fn create_big(server: &Server) {
    let mut writer = session(server, PIPE, 30_000).await;
    let reply = writer
        .call(&create("/big", &vec![7; BIG], CreateMode::Persistent))
        .await;
    assert!(matches!(reply, Reply::Ok(..)), "{reply:?}");
}

/// Reads until the server closes the stream; how many bytes came.
pub async fn bytes_until_closed(stream: &mut DuplexStream) -> usize {
    let mut sink = Vec::new();
    within(
        "the server to close the stream",
        stream.read_to_end(&mut sink),
    )
    .await
    .expect("readable");
    sink.len()
}

/// Another session, started now, is served as usual: it creates and reads a node.
pub async fn bystander_is_served(server: &Server, name: &str) {
    let mut peer = session(server, PIPE, 30_000).await;
    let path = format!("/{name}");
    let created = peer
        .call(&create(&path, b"fine", CreateMode::Ephemeral))
        .await;
    assert!(matches!(created, Reply::Ok(..)), "{created:?}");
    let read = peer.call(&get_data(&path)).await;
    assert!(matches!(read, Reply::Ok(..)), "{read:?}");
}
