//! Wire tests with a raw peer: hand-built frames against the embedded server, checking the
//! bytes and the connection's fate as ZooKeeper 3.8 has them (reference §1.3, §2, §4.1, §14).
//!
//! Bad input closes only the offending connection: every test that abuses one connection checks
//! that a second, well-behaved session goes on untouched.

use std::time::Duration;

use shepherd_protocol::{
    Acl, Codec, ConnectRequest, ConnectResponse, CreateRequest, ErrorCode, FourLetterWord,
    GetDataResponse, OpCode, PathWatchRequest, Reply, ReplyHeader, Request, Response, decode_reply,
    encode_frame, encode_request,
};
use shepherd_server::{Server, ServerHandle};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Every read in these tests is bounded, so a server that fails to answer fails the test
/// instead of hanging it.
const LIMIT: Duration = Duration::from_secs(10);

async fn server() -> ServerHandle {
    Server::builder()
        .all_four_letter_words()
        .start()
        .await
        .expect("server starts")
}

fn connect_frame(read_only: Option<bool>, session_id: i64, passwd: Vec<u8>) -> Vec<u8> {
    let request = ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 0,
        timeout: 30_000,
        session_id,
        passwd: Some(passwd),
        read_only,
    };
    encode_frame(|buf| request.encode(buf))
}

async fn read_frame(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut len = [0u8; 4];
    tokio::time::timeout(LIMIT, stream.read_exact(&mut len))
        .await
        .expect("frame in time")
        .ok()?;
    let mut payload = vec![0u8; u32::from_be_bytes(len) as usize];
    tokio::time::timeout(LIMIT, stream.read_exact(&mut payload))
        .await
        .expect("payload in time")
        .ok()?;
    Some(payload)
}

/// True when the server has closed the connection (EOF or reset).
async fn closed(stream: &mut TcpStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(
        tokio::time::timeout(LIMIT, stream.read(&mut byte))
            .await
            .expect("close in time"),
        Ok(0) | Err(_)
    )
}

async fn session(addr: &str) -> (TcpStream, ConnectResponse) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(&connect_frame(Some(false), 0, vec![0; 16]))
        .await
        .unwrap();
    let payload = read_frame(&mut stream).await.expect("connect response");
    let response = shepherd_protocol::decode_from::<ConnectResponse>(&payload).unwrap();
    (stream, response)
}

async fn call(stream: &mut TcpStream, xid: i32, request: &Request) -> Reply {
    let frame = encode_frame(|buf| encode_request(xid, request, buf));
    stream.write_all(&frame).await.unwrap();
    loop {
        let payload = read_frame(stream).await.expect("reply");
        let op = request.op_code();
        let reply = decode_reply(&payload, |_| Some(op)).unwrap();
        if !matches!(reply, Reply::Event(..)) {
            return reply;
        }
    }
}

/// A well-behaved session: create, then read back.
async fn still_serves(addr: &str) {
    let (mut stream, response) = session(addr).await;
    assert!(!response.is_expired());
    let path = format!("/alive-{}", response.session_id);
    let create = Request::Create(CreateRequest {
        path: path.clone(),
        data: Some(b"ok".to_vec()),
        acl: Acl::open_unsafe(),
        flags: 0,
    });
    assert!(matches!(call(&mut stream, 1, &create).await, Reply::Ok(..)));
    let get = Request::GetData(PathWatchRequest { path, watch: false });
    match call(&mut stream, 2, &get).await {
        Reply::Ok(_, Response::GetData(GetDataResponse { data, .. })) => {
            assert_eq!(data.as_deref(), Some(&b"ok"[..]))
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn both_handshake_forms_are_answered_in_kind() {
    let server = server().await;
    let addr = server.connect_string();
    for (read_only, expected_len) in [(Some(false), 37), (None, 36)] {
        let mut stream = TcpStream::connect(&addr).await.unwrap();
        stream
            .write_all(&connect_frame(read_only, 0, vec![0; 16]))
            .await
            .unwrap();
        let payload = read_frame(&mut stream).await.unwrap();
        assert_eq!(payload.len(), expected_len);
        let response = shepherd_protocol::decode_from::<ConnectResponse>(&payload).unwrap();
        assert_eq!(response.protocol_version, 0);
        assert_eq!(response.timeout, 30_000);
        assert_ne!(response.session_id, 0);
        assert_eq!(response.passwd.as_ref().map(Vec::len), Some(16));
    }
    server.shutdown().await;
}

#[tokio::test]
async fn unknown_session_gets_the_invalid_reply_then_close() {
    let server = server().await;
    let addr = server.connect_string();
    for (read_only, expected_len) in [(Some(false), 37), (None, 36)] {
        let mut stream = TcpStream::connect(&addr).await.unwrap();
        stream
            .write_all(&connect_frame(read_only, 0x0123_4567_89ab, vec![7; 16]))
            .await
            .unwrap();
        let payload = read_frame(&mut stream).await.unwrap();
        assert_eq!(payload.len(), expected_len);
        let response = shepherd_protocol::decode_from::<ConnectResponse>(&payload).unwrap();
        assert_eq!(response, ConnectResponse::invalid(read_only));
        assert!(closed(&mut stream).await);
    }
    still_serves(&addr).await;
    server.shutdown().await;
}

#[tokio::test]
async fn oversized_frame_closes_only_that_connection() {
    let server = server().await;
    let addr = server.connect_string();
    let (mut bad, _) = session(&addr).await;
    // One byte over jute.maxbuffer: ZooKeeper closes without a reply.
    bad.write_all(&(0x10_0000u32).to_be_bytes()).await.unwrap();
    assert!(closed(&mut bad).await);
    // A negative length, likewise.
    let (mut bad, _) = session(&addr).await;
    bad.write_all(&(-5i32).to_be_bytes()).await.unwrap();
    assert!(closed(&mut bad).await);
    still_serves(&addr).await;
    server.shutdown().await;
}

#[tokio::test]
async fn unknown_opcode_gets_unimplemented_then_close() {
    let server = server().await;
    let addr = server.connect_string();
    let (mut stream, _) = session(&addr).await;
    let mut payload = Vec::new();
    shepherd_protocol::RequestHeader {
        xid: 5,
        op_type: 55,
    }
    .encode(&mut payload);
    stream
        .write_all(&encode_frame(|buf| buf.extend_from_slice(&payload)))
        .await
        .unwrap();
    let reply = read_frame(&mut stream).await.unwrap();
    let header = shepherd_protocol::decode_from::<ReplyHeader>(&reply).unwrap();
    assert_eq!(
        header,
        ReplyHeader {
            xid: 5,
            zxid: -1,
            err: ErrorCode::Unimplemented.into()
        }
    );
    assert_eq!(reply.len(), 16, "the header alone");
    assert!(closed(&mut stream).await);
    still_serves(&addr).await;
    server.shutdown().await;
}

#[tokio::test]
async fn malformed_body_is_marshalling_error_and_the_connection_stays() {
    let server = server().await;
    let addr = server.connect_string();
    let (mut stream, _) = session(&addr).await;
    // getData whose path length runs past the end of the frame.
    let mut payload = Vec::new();
    shepherd_protocol::RequestHeader {
        xid: 9,
        op_type: OpCode::GetData.into(),
    }
    .encode(&mut payload);
    payload.extend_from_slice(&100i32.to_be_bytes());
    payload.extend_from_slice(b"/short");
    stream
        .write_all(&encode_frame(|buf| buf.extend_from_slice(&payload)))
        .await
        .unwrap();
    let reply = read_frame(&mut stream).await.unwrap();
    let header = shepherd_protocol::decode_from::<ReplyHeader>(&reply).unwrap();
    assert_eq!(header.xid, 9);
    assert_eq!(header.err, i32::from(ErrorCode::MarshallingError));
    // The same connection still works.
    let exists = Request::Exists(PathWatchRequest {
        path: "/".into(),
        watch: false,
    });
    assert!(matches!(
        call(&mut stream, 10, &exists).await,
        Reply::Ok(..)
    ));
    server.shutdown().await;
}

#[tokio::test]
async fn a_request_before_the_handshake_is_closed_silently() {
    let server = server().await;
    let addr = server.connect_string();
    let mut stream = TcpStream::connect(&addr).await.unwrap();
    let ping = encode_frame(|buf| encode_request(-2, &Request::Ping, buf));
    stream.write_all(&ping).await.unwrap();
    assert!(closed(&mut stream).await);
    still_serves(&addr).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_client_vanishing_mid_frame_leaves_others_untouched() {
    let server = server().await;
    let addr = server.connect_string();
    let (mut stream, _) = session(&addr).await;
    // Half a frame, then gone.
    stream.write_all(&[0, 0, 0, 40, 0, 0]).await.unwrap();
    drop(stream);
    still_serves(&addr).await;
    server.shutdown().await;
}

#[tokio::test]
async fn four_letter_words_answer_as_text_and_close() {
    let server = server().await;
    let addr = server.connect_string();
    for (word, expect) in [
        (FourLetterWord::Ruok, "imok"),
        (FourLetterWord::Srvr, "Mode: standalone"),
        (FourLetterWord::Mntr, "zk_server_state\tstandalone"),
        (FourLetterWord::Isro, "rw"),
    ] {
        let mut stream = TcpStream::connect(&addr).await.unwrap();
        stream.write_all(&word.bytes()).await.unwrap();
        // Clients half-close right after sending; the answer must still come.
        stream.shutdown().await.unwrap();
        let mut text = String::new();
        tokio::time::timeout(LIMIT, stream.read_to_string(&mut text))
            .await
            .unwrap()
            .unwrap();
        assert!(text.contains(expect), "{word:?}: {text}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn words_outside_the_whitelist_are_refused_by_default() {
    let server = Server::builder().start().await.unwrap();
    let mut stream = TcpStream::connect(server.local_addr()).await.unwrap();
    stream.write_all(b"ruok").await.unwrap();
    let mut text = String::new();
    tokio::time::timeout(LIMIT, stream.read_to_string(&mut text))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        text,
        "ruok is not executed because it is not in the whitelist.\n"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn many_servers_in_one_process() {
    let mut servers = Vec::new();
    for _ in 0..8 {
        servers.push(server().await);
    }
    for server in &servers {
        still_serves(&server.connect_string()).await;
    }
    for server in servers {
        server.shutdown().await;
    }
}

#[tokio::test]
async fn connections_over_the_per_ip_limit_are_closed_on_accept() {
    let server = Server::builder()
        .max_client_connections(3)
        .start()
        .await
        .unwrap();
    let addr = server.connect_string();
    let mut kept = Vec::new();
    for _ in 0..3 {
        let (stream, response) = session(&addr).await;
        assert!(!response.is_expired());
        kept.push(stream);
    }
    // The fourth from the same address is closed at once, with nothing written.
    let mut fourth = TcpStream::connect(&addr).await.unwrap();
    let _ = fourth
        .write_all(&connect_frame(Some(false), 0, vec![0; 16]))
        .await;
    assert!(closed(&mut fourth).await);
    // Closing one frees a place.
    drop(kept.pop());
    let mut admitted = None;
    for _ in 0..100 {
        // The server notices the close asynchronously; retry until the place is free.
        let mut stream = TcpStream::connect(&addr).await.unwrap();
        let _ = stream
            .write_all(&connect_frame(Some(false), 0, vec![0; 16]))
            .await;
        if let Some(payload) = read_frame(&mut stream).await {
            admitted = Some(payload);
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(admitted.is_some(), "a freed place is reused");
    server.shutdown().await;
}

#[tokio::test]
async fn a_slow_reader_slows_only_itself() {
    const REQUESTS: usize = 2000;
    let server = server().await;
    let addr = server.connect_string();
    let (mut setup, _) = session(&addr).await;
    let create = Request::Create(CreateRequest {
        path: "/big".into(),
        data: Some(vec![7u8; 256 * 1024]),
        acl: Acl::open_unsafe(),
        flags: 0,
    });
    assert!(matches!(call(&mut setup, 1, &create).await, Reply::Ok(..)));
    // A client that pipelines reads of a 256 KiB node and never reads a byte back: the
    // replies (500 MiB) are far more than any socket buffer holds.
    let (mut slow, _) = session(&addr).await;
    let get = encode_frame(|buf| {
        encode_request(
            2,
            &Request::GetData(PathWatchRequest {
                path: "/big".into(),
                watch: false,
            }),
            buf,
        )
    });
    let burst = get.repeat(REQUESTS);
    slow.write_all(&burst).await.unwrap();
    // Every other session is served as usual meanwhile.
    for _ in 0..5 {
        still_serves(&addr).await;
    }
    // The server stopped reading the slow connection once its replies backed up, instead of
    // reading everything and queueing the replies in memory.
    let cons = server.four_letter_word(FourLetterWord::Cons);
    let most_received = cons
        .split("recved=")
        .skip(1)
        .filter_map(|rest| rest.split(',').next()?.parse::<usize>().ok())
        .max()
        .unwrap_or(0);
    assert!(
        most_received < REQUESTS / 2,
        "the slow connection was read {most_received} times: {cons}"
    );
    eprintln!("slow reader: read {most_received} of {REQUESTS} requests");
    drop(slow);
    server.shutdown().await;
}
