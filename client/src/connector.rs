//! How the client opens the byte stream of each connection: the [`Connector`] trait, its
//! default [`TcpConnector`], and closures as connectors.
//!
//! The connection task asks its connector for a fresh stream on every attempt, the first
//! connection and every reconnect alike, passing the `host:port` it is trying (hosts are taken
//! from the connect string in shuffled order, then round-robin). Whatever comes back carries the
//! same protocol: the handshake, then length-prefixed frames.
//!
//! Invariants: the connector only opens streams; it never sees a frame. The limit of
//! [`crate::ClientBuilder::connect_timeout`] covers the connector's future and the handshake
//! together, so a connector that hangs costs one attempt, not the session.

use std::future::Future;
use std::io;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// Opens the stream for one connection attempt to one host.
///
/// Implemented by [`TcpConnector`] (the default) and by every closure
/// `Fn(&str) -> impl Future<Output = io::Result<S>>`, so a test can hand the client one end of
/// a [`tokio::io::duplex`] pipe instead of a socket:
///
/// ```no_run
/// # async fn demo() -> Result<(), shepherd_client::Error> {
/// use shepherd_client::Client;
/// let client = Client::builder()
///     .connect_with("peer:2181", |host: &str| {
///         let host = host.to_owned();
///         async move { tokio::net::TcpStream::connect(host).await }
///     })
///     .await?;
/// # Ok(()) }
/// ```
///
/// **Errors.** An `Err` fails that attempt only: the first connection then tries the next host
/// (and reports the last error once every host failed once, as [`crate::Error::Io`]); a
/// reconnect keeps cycling through the hosts with backoff until the session ends.
///
/// **Cancellation.** The returned future may be dropped at any await point, when the connect
/// timeout fires or the client is closed meanwhile; it must not leave anything behind that
/// needs cleaning up beyond dropping it.
///
/// **Ordering.** Calls are sequential: the task never asks for a second stream while a first
/// one is pending or in use, and drops the previous stream before asking again.
pub trait Connector: Send + Sync + 'static {
    /// The stream the client reads replies from and writes requests to.
    type Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static;

    /// Opens a stream to `host`, a `host:port` from the connect string.
    fn connect(&self, host: &str) -> impl Future<Output = io::Result<Self::Stream>> + Send;
}

/// Plain TCP with `TCP_NODELAY` set, as every ZooKeeper client does: the default connector.
#[derive(Debug, Clone, Copy, Default)]
pub struct TcpConnector;

impl Connector for TcpConnector {
    type Stream = TcpStream;

    fn connect(&self, host: &str) -> impl Future<Output = io::Result<TcpStream>> + Send {
        let host = host.to_owned();
        async move {
            let stream = TcpStream::connect(host).await?;
            // Requests are small and latency-bound; Nagle would hold them back.
            stream.set_nodelay(true)?;
            Ok(stream)
        }
    }
}

impl<F, Fut, S> Connector for F
where
    F: Fn(&str) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = io::Result<S>> + Send,
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = S;

    fn connect(&self, host: &str) -> impl Future<Output = io::Result<S>> + Send {
        self(host)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use shepherd_protocol::{
        Codec, ConnectRequest, ConnectResponse, DEFAULT_MAX_BUFFER, ReplyHeader, Request, Response,
        Stat, StatResponse, decode_from, decode_request, encode_frame, encode_reply, frame_len,
        xid,
    };
    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

    use super::*;
    use crate::{Client, SessionState};

    const SESSION: i64 = 0x5eed;

    async fn read_frame(peer: &mut DuplexStream) -> io::Result<Vec<u8>> {
        let mut prefix = [0; 4];
        peer.read_exact(&mut prefix).await?;
        let len = frame_len(prefix, DEFAULT_MAX_BUFFER).map_err(io::Error::other)?;
        let mut payload = vec![0; len];
        peer.read_exact(&mut payload).await?;
        Ok(payload)
    }

    async fn reply(peer: &mut DuplexStream, xid: i32, body: Option<&Response>) -> io::Result<()> {
        let header = ReplyHeader {
            xid,
            zxid: 9,
            err: 0,
        };
        let frame = encode_frame(|buf| encode_reply(&header, body, buf));
        peer.write_all(&frame).await
    }

    /// A server reduced to a script: accept the handshake, answer `exists` with a stat of
    /// version 3, pings with pings, and closeSession by ending. Returns what the client sent in
    /// its handshake and its requests other than pings, in order.
    async fn scripted_peer(mut peer: DuplexStream) -> io::Result<(ConnectRequest, Vec<Request>)> {
        let connect = decode_from::<ConnectRequest>(&read_frame(&mut peer).await?)
            .map_err(io::Error::other)?;
        let accepted = ConnectResponse {
            protocol_version: 0,
            timeout: 6000,
            session_id: SESSION,
            passwd: Some(vec![7; 16]),
            read_only: connect.read_only.map(|_| false),
        };
        peer.write_all(&encode_frame(|buf| accepted.encode(buf)))
            .await?;
        let mut seen = Vec::new();
        loop {
            let (header, request) =
                decode_request(&read_frame(&mut peer).await?).map_err(io::Error::other)?;
            let request = request.map_err(io::Error::other)?;
            match &request {
                Request::Ping => reply(&mut peer, xid::PING, Some(&Response::Ping)).await?,
                Request::Exists(_) => {
                    let stat = Stat {
                        version: 3,
                        ..Stat::default()
                    };
                    let body = Response::Exists(StatResponse { stat });
                    reply(&mut peer, header.xid, Some(&body)).await?;
                }
                Request::CloseSession => {
                    reply(&mut peer, header.xid, Some(&Response::CloseSession)).await?;
                    seen.push(request);
                    return Ok((connect, seen));
                }
                other => return Err(io::Error::other(format!("unscripted {other:?}"))),
            }
            if request != Request::Ping {
                seen.push(request);
            }
        }
    }

    #[tokio::test]
    async fn handshake_and_requests_over_a_duplex_pipe() {
        let (client_end, server_end) = tokio::io::duplex(4096);
        let peer = tokio::spawn(scripted_peer(server_end));
        // One stream for one connection: a second request for a stream would be a reconnect,
        // which this script does not expect.
        let stream = Mutex::new(Some(client_end));
        let connector = move |host: &str| {
            assert_eq!(host, "scripted:2181");
            let next = stream.lock().unwrap().take();
            async move { next.ok_or_else(|| io::Error::other("reconnect not scripted")) }
        };
        let client = Client::builder()
            .session_timeout(Duration::from_secs(6))
            .connect_with("scripted", connector)
            .await
            .unwrap();
        assert_eq!(client.session_id(), SESSION);
        assert_eq!(client.session_password(), [7; 16]);
        let status = client.status();
        assert_eq!(status.state, SessionState::Connected);
        assert_eq!(status.host.as_deref(), Some("scripted:2181"));
        assert_eq!(status.timeout, Duration::from_secs(6));

        let stat = client.exists("/x").await.unwrap();
        assert_eq!(stat.map(|s| s.version), Some(3));
        client.close().await.unwrap();
        let mut status = client.status_watch();
        let ended = status
            .wait_for(|s| s.state.is_terminal())
            .await
            .unwrap()
            .state;
        assert_eq!(ended, SessionState::Closed);

        let (connect, requests) = peer.await.unwrap().unwrap();
        assert_eq!(connect.session_id, 0, "a new session is asked for");
        assert_eq!(connect.timeout, 6000);
        assert_eq!(connect.passwd, Some(vec![0; 16]));
        assert_eq!(connect.read_only, Some(false));
        let ops: Vec<_> = requests.iter().map(Request::op_code).collect();
        assert_eq!(
            ops,
            [
                shepherd_protocol::OpCode::Exists,
                shepherd_protocol::OpCode::CloseSession
            ]
        );
    }
}
