//! The wire protocol over an in-memory stream: `ServerHandle::serve_io` on one end of a
//! `tokio::io::duplex`, and raw frames through `shepherd_protocol`'s codec on the other, with
//! no socket anywhere.
//!
//! What these pin down: a stream served this way is served as a TCP connection is (handshake,
//! requests, watch events in order, four-letter words), it ends when the server shuts down, and
//! the TCP-only rules (the per-IP limit) leave it alone.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use shepherd_protocol::{
    Acl, Codec, ConnectRequest, ConnectResponse, CreateRequest, EventType, FourLetterWord, Frame,
    FrameCodec, GetDataResponse, PathWatchRequest, Reply, Request, Response, SetDataRequest,
    decode_from, decode_reply, encode_request,
};
use shepherd_server::{Server, ServerHandle};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio_util::codec::Framed;

/// Every wait is bounded, so a server that fails to answer fails the test instead of hanging.
const LIMIT: Duration = Duration::from_secs(10);

/// Room in each direction of the in-memory pipe.
const PIPE: usize = 64 * 1024;

async fn server() -> ServerHandle {
    Server::builder().start().await.expect("server starts")
}

/// A raw client on the far end of an in-memory pipe.
struct Peer {
    framed: Framed<DuplexStream, FrameCodec>,
}

impl Peer {
    /// A pipe whose other end the server now serves.
    fn attach(server: &ServerHandle) -> Peer {
        let (client, served) = tokio::io::duplex(PIPE);
        server.serve_io(served);
        Peer {
            framed: Framed::new(client, FrameCodec::client(1 << 20)),
        }
    }

    /// The next frame's payload; `None` once the server has closed the stream.
    async fn next(&mut self) -> Option<Vec<u8>> {
        let frame = tokio::time::timeout(LIMIT, self.framed.next())
            .await
            .expect("frame in time")?;
        match frame.expect("well-formed frame") {
            Frame::Payload(payload) => Some(payload.to_vec()),
            Frame::FourLetterWord(word) => panic!("a client codec read a word: {word:?}"),
        }
    }

    async fn handshake(&mut self) -> ConnectResponse {
        let request = ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: 0,
            timeout: 30_000,
            session_id: 0,
            passwd: Some(vec![0; 16]),
            read_only: Some(false),
        };
        let mut payload = Vec::new();
        request.encode(&mut payload);
        self.framed.send(payload).await.unwrap();
        let reply = self.next().await.expect("connect response");
        decode_from::<ConnectResponse>(&reply).unwrap()
    }

    async fn send(&mut self, xid: i32, request: &Request) {
        let mut payload = Vec::new();
        encode_request(xid, request, &mut payload);
        self.framed.send(payload).await.unwrap();
    }

    /// The next frame, decoded as a reply to `request` or as an event.
    async fn reply(&mut self, request: &Request) -> Reply {
        let payload = self.next().await.expect("reply");
        let op = request.op_code();
        decode_reply(&payload, |_| Some(op)).unwrap()
    }

    async fn call(&mut self, xid: i32, request: &Request) -> Reply {
        self.send(xid, request).await;
        self.reply(request).await
    }
}

fn create(path: &str, data: &[u8]) -> Request {
    Request::Create(CreateRequest {
        path: path.into(),
        data: Some(data.to_vec()),
        acl: Acl::open_unsafe(),
        flags: 0,
    })
}

/// Reads everything the server writes until it closes the stream.
async fn read_to_end(stream: &mut DuplexStream) -> String {
    let mut text = String::new();
    tokio::time::timeout(LIMIT, stream.read_to_string(&mut text))
        .await
        .expect("close in time")
        .expect("readable");
    text
}

#[tokio::test]
async fn handshake_create_get_and_a_watch_event_over_duplex() {
    let server = server().await;
    let mut watcher = Peer::attach(&server);
    let response = watcher.handshake().await;
    assert!(!response.is_expired());
    assert_eq!(response.timeout, 30_000);
    assert_eq!(response.passwd.as_ref().map(Vec::len), Some(16));

    let created = watcher.call(1, &create("/io", b"one")).await;
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
    match watcher.call(2, &get).await {
        Reply::Ok(header, Response::GetData(GetDataResponse { data, .. })) => {
            assert_eq!(header.xid, 2);
            assert_eq!(data.as_deref(), Some(&b"one"[..]));
        }
        other => panic!("unexpected {other:?}"),
    }

    // A second in-memory session changes the node; the first hears of it.
    let mut writer = Peer::attach(&server);
    let other = writer.handshake().await;
    assert_ne!(other.session_id, response.session_id);
    let set = Request::SetData(SetDataRequest {
        path: "/io".into(),
        data: Some(b"two".to_vec()),
        version: -1,
    });
    assert!(matches!(writer.call(1, &set).await, Reply::Ok(..)));
    match watcher.reply(&get).await {
        Reply::Event(header, event) => {
            assert_eq!(header.xid, -1);
            assert_eq!(event.event_type, EventType::NodeDataChanged);
            assert_eq!(event.path, "/io");
        }
        other => panic!("expected the watch event, got {other:?}"),
    }
    // The watch was one-shot, and the session still serves.
    let reread = Request::GetData(PathWatchRequest {
        path: "/io".into(),
        watch: false,
    });
    match watcher.call(3, &reread).await {
        Reply::Ok(_, Response::GetData(GetDataResponse { data, .. })) => {
            assert_eq!(data.as_deref(), Some(&b"two"[..]))
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(server.dump_watches().is_empty(), "the fired watch is gone");
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
    let mut first = Peer::attach(&server);
    let mut second = Peer::attach(&server);
    assert!(!first.handshake().await.is_expired());
    assert!(!second.handshake().await.is_expired());
    let cons = server.four_letter_word(FourLetterWord::Cons);
    assert_eq!(cons.matches(" /127.0.0.1:0[1]").count(), 2, "{cons}");
    server.shutdown().await;
}

#[tokio::test]
async fn shutdown_closes_in_memory_connections() {
    let server = server().await;
    let mut peer = Peer::attach(&server);
    assert!(!peer.handshake().await.is_expired());
    tokio::time::timeout(LIMIT, server.shutdown())
        .await
        .expect("shutdown in time");
    assert_eq!(peer.next().await, None, "the stream ends at shutdown");

    // After shutdown a stream is not served: it is dropped at once.
    let (mut client, served) = tokio::io::duplex(PIPE);
    server.serve_io(served);
    assert_eq!(read_to_end(&mut client).await, "");
}
