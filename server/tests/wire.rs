//! Wire tests with a raw peer: hand-built frames against the embedded server, checking the
//! bytes and the connection's fate as ZooKeeper 3.8 has them (reference docs/protocol.md §1.3, §2, §4.1, §14).
//!
//! Bad input closes only the offending connection: every test that abuses one connection checks
//! that a second, well-behaved session goes on untouched.

use std::future::Future;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use shepherd_protocol::{
    Codec, ConnectRequest, ConnectResponse, CreateMode, ErrorCode, FourLetterWord, GetDataResponse,
    OpCode, Reply, ReplyHeader, Request, RequestHeader, Response, decode_from, encode_frame,
    encode_request,
};
use shepherd_server::Server;
use shepherd_testkit::all_words_server as server;
use shepherd_testkit::{Peer, create, exists, four_letter_word, get_data, hello};

/// Runs `abuse` against a fresh server's address, then checks that a well-behaved session is
/// still served, and stops the server.
async fn only_that_connection<F, Fut>(abuse: F)
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = ()>,
{
    let server = server().await;
    let addr = server.connect_string();
    abuse(addr.clone()).await;
    still_serves(&addr).await;
    server.shutdown().await;
}

/// A handshake in the 45-byte form (`read_only: Some`) or the 44-byte one (`None`): the answer
/// must come in kind, 37 or 36 bytes.
async fn handshake_in_kind(
    addr: &str,
    read_only: Option<bool>,
    session_id: i64,
    passwd: Vec<u8>,
) -> (Peer, ConnectResponse) {
    let mut peer = Peer::tcp(addr).await;
    peer.send_connect(&ConnectRequest {
        read_only,
        session_id,
        passwd: Some(passwd),
        ..hello()
    })
    .await;
    let payload = peer.next_frame().await.expect("a connect response");
    let expected_len = if read_only.is_some() { 37 } else { 36 };
    assert_eq!(payload.len(), expected_len, "answered in kind");
    (peer, decode_from::<ConnectResponse>(&payload).unwrap())
}

/// A new session over a raw peer.
async fn session(addr: &str) -> (Peer, ConnectResponse) {
    let mut peer = Peer::tcp(addr).await;
    let response = peer.handshake(&hello()).await.expect("a connect response");
    (peer, response)
}

/// A well-behaved session: create, then read back.
async fn still_serves(addr: &str) {
    let (mut peer, response) = session(addr).await;
    assert!(!response.is_expired());
    let path = format!("/alive-{}", response.session_id);
    let create = create(&path, b"ok", CreateMode::Persistent);
    assert!(matches!(peer.call_as(1, &create).await, Reply::Ok(..)));
    match peer.call_as(2, &get_data(&path)).await {
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
    for read_only in [Some(false), None] {
        let (_, response) = handshake_in_kind(&addr, read_only, 0, vec![0; 16]).await;
        assert_eq!(response.protocol_version, 0);
        assert_eq!(response.timeout, 30_000);
        assert_ne!(response.session_id, 0);
        assert_eq!(response.passwd.as_ref().map(Vec::len), Some(16));
    }
    server.shutdown().await;
}

#[tokio::test]
async fn unknown_session_gets_the_invalid_reply_then_close() {
    only_that_connection(|addr| async move {
        for read_only in [Some(false), None] {
            let (mut peer, response) =
                handshake_in_kind(&addr, read_only, 0x0123_4567_89ab, vec![7; 16]).await;
            assert_eq!(response, ConnectResponse::invalid(read_only));
            assert!(peer.closed().await);
        }
    })
    .await;
}

#[tokio::test]
async fn oversized_frame_closes_only_that_connection() {
    only_that_connection(|addr| async move {
        // One byte over jute.maxbuffer: ZooKeeper closes without a reply.
        let (mut bad, _) = session(&addr).await;
        bad.send_raw(&(0x10_0000u32).to_be_bytes()).await;
        assert!(bad.closed().await);
        // A negative length, likewise.
        let (mut bad, _) = session(&addr).await;
        bad.send_raw(&(-5i32).to_be_bytes()).await;
        assert!(bad.closed().await);
    })
    .await;
}

/// A request, then a length past jute.maxbuffer with a megabyte behind it, all in one write:
/// the request read before the bad length is answered, then the server shuts its side down (a
/// FIN: the peer reads to the end of the stream), having read and dropped the rest rather than
/// reset the connection under the reply. (The connection used to be dropped at once: the reply
/// was lost and, with a megabyte unread, the peer's read failed with a reset.)
#[tokio::test]
async fn a_length_past_the_limit_closes_after_the_replies_before_it_and_without_a_reset() {
    only_that_connection(|addr| async move {
        let (peer, _) = session(&addr).await;
        let mut stream = peer.into_inner();
        let mut bytes = encode_frame(|b| encode_request(7, &exists("/", false), b));
        bytes.extend_from_slice(&(0x10_0000u32).to_be_bytes());
        bytes.extend(std::iter::repeat_n(0u8, 1 << 20));
        let mut got = Vec::new();
        let read = shepherd_testkit::within("the reply and the close", async {
            stream.write_all(&bytes).await?;
            stream.read_to_end(&mut got).await
        })
        .await;
        assert!(read.is_ok(), "{read:?} after {} bytes", got.len());
        assert!(got.len() > 8, "no reply: {got:?}");
        let len = u32::from_be_bytes(got[..4].try_into().unwrap()) as usize;
        assert_eq!(got.len(), 4 + len, "one frame, then the end of the stream");
        let header = decode_from::<ReplyHeader>(&got[4..]).unwrap();
        assert_eq!((header.xid, header.err), (7, 0));
    })
    .await;
}

#[tokio::test]
async fn unknown_opcode_gets_unimplemented_then_close() {
    only_that_connection(|addr| async move {
        let (mut peer, _) = session(&addr).await;
        let header = RequestHeader {
            xid: 5,
            op_type: 55,
        };
        peer.send_payload(&header.to_bytes()).await;
        let reply = peer.next_frame().await.unwrap();
        assert_eq!(
            decode_from::<ReplyHeader>(&reply).unwrap(),
            ReplyHeader {
                xid: 5,
                zxid: -1,
                err: ErrorCode::Unimplemented.into()
            }
        );
        assert_eq!(reply.len(), 16, "the header alone");
        assert!(peer.closed().await);
    })
    .await;
}

#[tokio::test]
async fn malformed_body_is_marshalling_error_and_the_connection_stays() {
    let server = server().await;
    let (mut peer, _) = session(&server.connect_string()).await;
    // getData whose path length runs past the end of the frame.
    let mut payload = RequestHeader {
        xid: 9,
        op_type: OpCode::GetData.into(),
    }
    .to_bytes();
    payload.extend_from_slice(&100i32.to_be_bytes());
    payload.extend_from_slice(b"/short");
    peer.send_payload(&payload).await;
    let reply = peer.next_frame().await.unwrap();
    let header = decode_from::<ReplyHeader>(&reply).unwrap();
    assert_eq!(header.xid, 9);
    assert_eq!(header.err, i32::from(ErrorCode::MarshallingError));
    // The same connection still works.
    assert!(matches!(
        peer.call_as(10, &exists("/", false)).await,
        Reply::Ok(..)
    ));
    server.shutdown().await;
}

#[tokio::test]
async fn a_request_before_the_handshake_is_closed_silently() {
    only_that_connection(|addr| async move {
        let mut peer = Peer::tcp(&addr).await;
        peer.send_as(-2, &Request::Ping).await;
        assert!(peer.closed().await);
    })
    .await;
}

#[tokio::test]
async fn a_client_vanishing_mid_frame_leaves_others_untouched() {
    only_that_connection(|addr| async move {
        let (mut peer, _) = session(&addr).await;
        // Half a frame, then gone.
        peer.send_raw(&[0, 0, 0, 40, 0, 0]).await;
        drop(peer);
    })
    .await;
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
        // Clients half-close right after sending; the answer must still come.
        let text = four_letter_word(&addr, word).await;
        assert!(text.contains(expect), "{word:?}: {text}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn words_outside_the_whitelist_are_refused_by_default() {
    let server = Server::builder().start().await.unwrap();
    let text = four_letter_word(&server.connect_string(), FourLetterWord::Ruok).await;
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

/// `maxCnxns` (ZooKeeper's server-wide limit): past it a connection is closed on accept,
/// whatever its address.
#[tokio::test]
async fn connections_over_the_server_wide_limit_are_closed_on_accept() {
    let mut config = shepherd_server::Config::default();
    config
        .apply_zoo_cfg("maxCnxns=2\nmaxClientCnxns=0\n")
        .unwrap();
    let server = Server::builder().config(config).start().await.unwrap();
    let addr = server.connect_string();
    let mut kept = Vec::new();
    for _ in 0..2 {
        let (peer, response) = session(&addr).await;
        assert!(!response.is_expired());
        kept.push(peer);
    }
    let mut third = Peer::tcp(&addr).await;
    assert!(third.handshake(&hello()).await.is_none());
    server.shutdown().await;
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
        let (peer, response) = session(&addr).await;
        assert!(!response.is_expired());
        kept.push(peer);
    }
    // The fourth from the same address is closed at once, with nothing written.
    let mut fourth = Peer::tcp(&addr).await;
    assert!(fourth.handshake(&hello()).await.is_none());
    // Closing one frees a place.
    drop(kept.pop());
    let mut admitted = None;
    for _ in 0..100 {
        // The server notices the close asynchronously; retry until the place is free.
        let mut peer = Peer::tcp(&addr).await;
        if let Some(response) = peer.handshake(&hello()).await {
            admitted = Some(response);
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
    let big = create("/big", &[7u8; 256 * 1024], CreateMode::Persistent);
    assert!(matches!(setup.call_as(1, &big).await, Reply::Ok(..)));
    // A client that pipelines reads of a 256 KiB node and never reads a byte back: the
    // replies (500 MiB) are far more than any socket buffer holds.
    let (mut slow, _) = session(&addr).await;
    let get = encode_frame(|buf| encode_request(2, &get_data("/big"), buf));
    slow.send_raw(&get.repeat(REQUESTS)).await;
    // Every other session is served as usual meanwhile.
    for _ in 0..5 {
        still_serves(&addr).await;
    }
    // The server stopped reading the slow connection once its replies backed up, instead of
    // reading everything and queueing the replies in memory.
    let cons = server.controls().four_letter_word(FourLetterWord::Cons);
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
