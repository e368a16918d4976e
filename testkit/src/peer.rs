//! A raw wire peer: a ZooKeeper client made of hand-built frames, for tests where the exact
//! bytes, their order or a protocol violation matter. It never pings, retries or reconnects
//! unless told to.
//!
//! Everything it writes and reads goes through `shepherd-protocol`'s records and codec. It runs
//! over a `TcpStream` or any `AsyncRead + AsyncWrite` (an in-memory duplex stream served
//! in-process works the same).
//!
//! Invariants: every read is bounded by [`WAIT`](crate::WAIT) (a server that fails to answer
//! fails the test); bytes read but not yet returned stay buffered, so looking for silence never
//! loses a frame; replies are decoded with the opcode sent under their xid.

use std::collections::HashMap;
use std::time::Duration;

use shepherd_protocol::{
    Codec, ConnectRequest, ConnectResponse, OpCode, Reply, ReplyHeader, Request, decode_from,
    decode_reply, encode_frame, encode_request, xid,
};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, ToSocketAddrs};

use crate::frame::{Chunk, FrameReader};
use crate::wait::within;

/// The handshake every real client sends for a new session: a 30 s timeout, a zero password,
/// and the trailing read-only flag (the 45-byte form; `read_only: None` gives the 44-byte one).
pub fn hello() -> ConnectRequest {
    ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 0,
        timeout: 30_000,
        session_id: 0,
        passwd: Some(vec![0; 16]),
        read_only: Some(false),
    }
}

/// The header of any reply.
pub fn reply_header(reply: &Reply) -> &ReplyHeader {
    match reply {
        Reply::Event(h, _) | Reply::Ok(h, _) | Reply::Err(h) => h,
    }
}

/// A raw ZooKeeper client connection over `S` (a `TcpStream` by default): hand-built frames,
/// no pings, retries or reconnects unless told to, every read bounded by [`WAIT`](crate::WAIT).
#[derive(Debug)]
pub struct Peer<S = TcpStream> {
    stream: FrameReader<S>,
    session: i64,
    last_xid: i32,
    /// The opcode sent under each xid, to decode its reply.
    sent: HashMap<i32, OpCode>,
}

impl Peer<TcpStream> {
    /// A TCP connection to `addr`, with nothing sent yet.
    pub async fn tcp(addr: impl ToSocketAddrs) -> Peer<TcpStream> {
        let stream = within("a TCP connection", TcpStream::connect(addr))
            .await
            .expect("connect");
        Peer::new(stream)
    }

    /// A TCP connection to `addr` with a session: [`hello`] sent with `timeout_ms` and
    /// `last_zxid_seen`. `None` if the server refuses the handshake (closes without a reply).
    pub async fn session(
        addr: impl ToSocketAddrs,
        timeout_ms: i32,
        last_zxid_seen: i64,
    ) -> Option<Peer<TcpStream>> {
        let mut peer = Peer::tcp(addr).await;
        let request = ConnectRequest {
            timeout: timeout_ms,
            last_zxid_seen,
            ..hello()
        };
        peer.handshake(&request).await?;
        Some(peer)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Peer<S> {
    /// A peer over `stream`, with nothing sent yet.
    pub fn new(stream: S) -> Peer<S> {
        Peer {
            stream: FrameReader::new(stream),
            session: 0,
            last_xid: 0,
            sent: HashMap::new(),
        }
    }

    /// The session id the handshake was answered with (0 before it).
    pub fn session_id(&self) -> i64 {
        self.session
    }

    /// The stream, and with it any bytes not read yet.
    pub fn into_inner(self) -> S {
        self.stream.into_inner()
    }

    /// Sends `request` as the handshake and reads the answer; `None` if the server closes
    /// without one.
    pub async fn handshake(&mut self, request: &ConnectRequest) -> Option<ConnectResponse> {
        self.send_connect(request).await;
        let payload = self.next_frame().await?;
        let response = decode_from::<ConnectResponse>(&payload).expect("a ConnectResponse");
        self.session = response.session_id;
        Some(response)
    }

    /// Writes `request` as a handshake frame, reading nothing.
    pub async fn send_connect(&mut self, request: &ConnectRequest) {
        self.send_raw(&encode_frame(|b| request.encode(b))).await;
    }

    /// Sends a request under the next xid (pings under theirs), reading nothing; returns the
    /// xid.
    pub async fn send(&mut self, request: &Request) -> i32 {
        let xid = if matches!(request, Request::Ping) {
            xid::PING
        } else {
            self.last_xid += 1;
            self.last_xid
        };
        self.send_as(xid, request).await;
        xid
    }

    /// Sends a request under `xid`, reading nothing.
    pub async fn send_as(&mut self, xid: i32, request: &Request) {
        self.sent.insert(xid, request.op_code());
        self.send_raw(&encode_frame(|b| encode_request(xid, request, b)))
            .await;
    }

    /// Sends `payload` (a header and a body, however malformed) in a frame.
    pub async fn send_payload(&mut self, payload: &[u8]) {
        self.send_raw(&encode_frame(|b| b.extend_from_slice(payload)))
            .await;
    }

    /// Writes `bytes` as they are: garbage, half frames, a bare length. A write the server no
    /// longer reads is no failure here (it may close a connection on accept, or mid-request):
    /// what it does about it shows in what is read next.
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let _ = within("a write", self.stream.get_mut().write_all(bytes)).await;
    }

    /// Half-closes the connection: the server sees the end of what this peer sends.
    pub async fn shutdown_write(&mut self) {
        let _ = within("a half-close", self.stream.get_mut().shutdown()).await;
    }

    /// The next frame's payload; `None` once the server has closed the connection.
    pub async fn next_frame(&mut self) -> Option<Vec<u8>> {
        match within("a frame", self.stream.next_chunk()).await {
            Chunk::Frame(frame) => Some(frame[4..].to_vec()),
            Chunk::Raw(bytes) if bytes.len() >= 4 => panic!("not a frame: {bytes:?}"),
            Chunk::Raw(_) | Chunk::End => None,
        }
    }

    /// The next reply or notification, decoded; `None` once the server has closed.
    pub async fn next(&mut self) -> Option<Reply> {
        let payload = self.next_frame().await?;
        let sent = &self.sent;
        Some(decode_reply(&payload, |xid| sent.get(&xid).copied()).expect("a reply"))
    }

    /// Sends `request` and returns its reply, skipping notifications; checks the reply's xid.
    pub async fn call(&mut self, request: &Request) -> Reply {
        let xid = self.send(request).await;
        self.reply_to(xid).await
    }

    /// [`Peer::call`] under `xid`.
    pub async fn call_as(&mut self, xid: i32, request: &Request) -> Reply {
        self.send_as(xid, request).await;
        self.reply_to(xid).await
    }

    async fn reply_to(&mut self, xid: i32) -> Reply {
        loop {
            match self.next().await.expect("a reply before the close") {
                Reply::Event(..) => continue,
                reply => {
                    assert_eq!(reply_header(&reply).xid, xid, "the reply's xid");
                    return reply;
                }
            }
        }
    }

    /// True if nothing arrives within `wait` (the connection stays open and silent). What does
    /// arrive stays buffered for the next read.
    pub async fn silent_for(&mut self, wait: Duration) -> bool {
        if self.stream.has_buffered() {
            return false;
        }
        tokio::time::timeout(wait, self.stream.fill())
            .await
            .is_err()
    }

    /// True when the server closes the connection (end of stream or reset) before sending
    /// anything more; false if more bytes come first.
    pub async fn closed(&mut self) -> bool {
        !self.stream.has_buffered() && within("the close", self.stream.fill()).await == 0
    }
}
