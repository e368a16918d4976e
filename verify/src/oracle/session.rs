//! One session slot of a run: its connection (a raw [`Peer`]), the session's id and password,
//! the last zxid it saw, and how many sessions the slot has had.
//!
//! Invariants: every read is bounded by the caller's limit (shorter than the kit's
//! [`WAIT`](shepherd_testkit::WAIT), so a silent server becomes a recorded line, not a panic); a slot
//! whose connection is lost is given a connection again before anything else is read from it
//! (resumed with its id and password, or a new session if the server refuses).

use std::time::Duration;

use shepherd_protocol::{ConnectRequest, ConnectResponse, decode_from};
use tokio::net::TcpStream;

use shepherd_testkit::{Peer, hello};

/// What one bounded read gave.
#[derive(Debug)]
pub enum Read {
    /// A frame's payload.
    Frame(Vec<u8>),
    /// The server closed the connection.
    Closed,
    /// Nothing within the limit.
    Silent,
}

/// A session slot.
#[derive(Debug)]
pub struct Slot {
    /// The connection; `None` only between losing one and the next resume.
    pub peer: Option<Peer>,
    /// The session id (0 before the first handshake).
    pub id: i64,
    /// The session's password.
    pub passwd: Vec<u8>,
    /// The highest reply zxid this session has seen, sent when it resumes.
    pub last_zxid: i64,
    /// How many sessions this slot has had before the current one.
    pub generation: u32,
}

/// Connects to `addr` and sends `request` as the handshake, bounded by `limit`.
///
/// # Errors
/// A line saying what went wrong (no connection, closed without an answer, silence, garbage).
pub async fn handshake(
    addr: &str,
    request: &ConnectRequest,
    limit: Duration,
) -> Result<(Peer, ConnectResponse), String> {
    let stream = match tokio::time::timeout(limit, TcpStream::connect(addr)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return Err(format!("cannot connect to {addr}: {e}")),
        Err(_) => return Err(format!("no TCP connection to {addr} within {limit:?}")),
    };
    let mut peer = Peer::new(stream);
    peer.send_connect(request).await;
    match read(&mut peer, limit).await {
        Read::Frame(payload) => match decode_from::<ConnectResponse>(&payload) {
            Ok(response) => Ok((peer, response)),
            Err(e) => Err(format!("undecodable handshake answer ({e})")),
        },
        Read::Closed => Err("closed without a handshake answer".into()),
        Read::Silent => Err(format!("no handshake answer within {limit:?}")),
    }
}

/// The next frame, bounded by `limit`. Cancel-safe: the peer keeps what it has buffered.
pub async fn read(peer: &mut Peer, limit: Duration) -> Read {
    match tokio::time::timeout(limit, peer.next_frame()).await {
        Ok(Some(frame)) => Read::Frame(frame),
        Ok(None) => Read::Closed,
        Err(_) => Read::Silent,
    }
}

impl Slot {
    /// A slot with no session yet.
    pub fn empty() -> Slot {
        Slot {
            peer: None,
            id: 0,
            passwd: Vec::new(),
            last_zxid: 0,
            generation: 0,
        }
    }

    /// Opens a new session (the kit's [`hello`]: 30 s, as every real client asks).
    ///
    /// # Errors
    /// As [`handshake`], or a refusal.
    pub async fn open(&mut self, addr: &str, limit: Duration) -> Result<ConnectResponse, String> {
        let (peer, response) = handshake(addr, &hello(), limit).await?;
        if response.is_expired() {
            return Err("a new session was refused".into());
        }
        self.peer = Some(peer);
        self.id = response.session_id;
        self.passwd = response.passwd.clone().unwrap_or_default();
        self.last_zxid = 0;
        Ok(response)
    }

    /// The handshake that resumes this slot's session, with `passwd`.
    pub fn resume_request(&self, passwd: Vec<u8>) -> ConnectRequest {
        ConnectRequest {
            last_zxid_seen: self.last_zxid,
            session_id: self.id,
            passwd: Some(passwd),
            ..hello()
        }
    }
}
