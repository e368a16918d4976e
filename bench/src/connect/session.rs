//! One measured session: TCP connect, the TLS handshake when asked, ZooKeeper's
//! ConnectRequest/ConnectResponse, then closeSession and its reply, on a connection used for
//! nothing else (docs/protocol.md §2 for the handshake records).
//!
//! Invariants: every read is bounded by the frame limit and every step by the caller's
//! deadline, so a server that stalls or sends garbage costs one failed sample, never a hung
//! benchmark; the session is always closed with closeSession (not left to expire), so a
//! `--connect` server does not accumulate the benchmark's sessions.

use std::sync::Arc;
use std::time::{Duration, Instant};

use shepherd_protocol::{
    Codec, ConnectRequest, ConnectResponse, OpCode, Reply, Request, decode_from, decode_reply,
    encode_frame, encode_request, frame_len,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::ServerName;

/// Largest reply accepted: a ConnectResponse or a closeSession reply is a few dozen bytes.
const MAX_REPLY: usize = 4096;
/// The xid of the closeSession request (the first request of the session).
const CLOSE_XID: i32 = 1;

/// How a session reaches the server.
#[derive(Clone)]
pub enum Transport {
    /// Plain TCP.
    Plain,
    /// TLS with this connector (its configuration says whether a client certificate is sent),
    /// verifying the server as `name`.
    Tls(TlsConnector, ServerName<'static>),
}

/// The time one session took, and the part of it spent before ZooKeeper's handshake began
/// (TCP connect plus the TLS handshake).
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// From the start of the TCP connect to the closeSession reply.
    pub total: Duration,
    /// From the start of the TCP connect to the end of the TLS handshake (TCP connect alone
    /// over plain TCP).
    pub transport: Duration,
}

/// Opens, establishes and closes one session at `addr`, within `deadline`.
///
/// # Errors
/// A description of the first step that failed (connect, TLS, an I/O error, a malformed or
/// refused reply, or the deadline).
pub async fn one(
    addr: &str,
    transport: &Transport,
    timeout_ms: i32,
    deadline: Duration,
) -> Result<Sample, String> {
    match tokio::time::timeout(deadline, measured(addr, transport, timeout_ms)).await {
        Ok(result) => result,
        Err(_) => Err(format!("no reply within {deadline:?}")),
    }
}

async fn measured(addr: &str, transport: &Transport, timeout_ms: i32) -> Result<Sample, String> {
    let start = Instant::now();
    let tcp = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("TCP connect: {e}"))?;
    // As every ZooKeeper client does: requests are small and must not wait for Nagle.
    tcp.set_nodelay(true)
        .map_err(|e| format!("TCP_NODELAY: {e}"))?;
    match transport {
        Transport::Plain => {
            let transport = start.elapsed();
            zookeeper(tcp, timeout_ms).await?;
            Ok(Sample {
                total: start.elapsed(),
                transport,
            })
        }
        Transport::Tls(connector, name) => {
            let tls = connector
                .connect(name.clone(), tcp)
                .await
                .map_err(|e| format!("TLS handshake: {e}"))?;
            let transport = start.elapsed();
            zookeeper(tls, timeout_ms).await?;
            Ok(Sample {
                total: start.elapsed(),
                transport,
            })
        }
    }
}

/// ConnectRequest → ConnectResponse → closeSession → its reply, then an orderly shutdown
/// (TLS close_notify, TCP FIN).
async fn zookeeper<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    timeout_ms: i32,
) -> Result<(), String> {
    let request = ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 0,
        timeout: timeout_ms,
        session_id: 0,
        passwd: Some(vec![0; 16]),
        read_only: Some(false),
    };
    write(&mut stream, &encode_frame(|buf| request.encode(buf))).await?;
    let payload = read_frame(&mut stream).await?;
    let response: ConnectResponse =
        decode_from(&payload).map_err(|e| format!("malformed ConnectResponse: {e}"))?;
    if response.is_expired() {
        return Err("the server refused the session (ConnectResponse with timeout 0)".into());
    }
    let close = encode_frame(|buf| encode_request(CLOSE_XID, &Request::CloseSession, buf));
    write(&mut stream, &close).await?;
    loop {
        let payload = read_frame(&mut stream).await?;
        let reply = decode_reply(&payload, |xid| {
            (xid == CLOSE_XID).then_some(OpCode::CloseSession)
        })
        .map_err(|e| format!("malformed reply: {e}"))?;
        match reply {
            Reply::Ok(header, _) if header.xid == CLOSE_XID => break,
            Reply::Err(header) if header.xid == CLOSE_XID => {
                return Err(format!("closeSession failed with error {}", header.err));
            }
            // A notification cannot come before any watch was set; anything else is skipped.
            _ => {}
        }
    }
    // The server closes too; a reset at this point does not make the session a failure.
    let _ = stream.shutdown().await;
    Ok(())
}

async fn write<S: AsyncWrite + Unpin>(stream: &mut S, bytes: &[u8]) -> Result<(), String> {
    stream
        .write_all(bytes)
        .await
        .map_err(|e| format!("write: {e}"))?;
    stream.flush().await.map_err(|e| format!("write: {e}"))
}

async fn read_frame<S: AsyncRead + Unpin>(stream: &mut S) -> Result<Vec<u8>, String> {
    let mut prefix = [0u8; 4];
    stream
        .read_exact(&mut prefix)
        .await
        .map_err(|e| format!("read: {e}"))?;
    let len = frame_len(prefix, MAX_REPLY).map_err(|e| format!("reply: {e}"))?;
    let mut payload = vec![0u8; len];
    stream
        .read_exact(&mut payload)
        .await
        .map_err(|e| format!("read: {e}"))?;
    Ok(payload)
}

/// A connector that shares `config` (the handshakes still run in full: see
/// [`super::tls::client_config`]).
pub fn connector(config: Arc<tokio_rustls::rustls::ClientConfig>) -> TlsConnector {
    TlsConnector::from(config)
}
