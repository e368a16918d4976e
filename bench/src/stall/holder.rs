//! The client whose state is large: one raw connection that pipelines `exists` calls with a
//! watch on paths that do not exist (each answered NoNode, each leaving a data watch on its own
//! path), the cheapest way a client makes a server hold memory for it, and that then closes, or
//! stays while a four-letter word lists what it holds.
//!
//! Raw frames rather than [`shepherd_client::Client`]: a client library keeps a waiter per
//! watch, which at three million would be the benchmark's own memory, not the server's.

use std::time::Duration;

use shepherd_protocol::{
    ConnectRequest, PathWatchRequest, Request, encode_frame, encode_request, frame_len, xid,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use crate::error::{Error, Result};

/// Requests written before the writer waits for the replies to catch up: enough to keep the
/// server busy, few enough that neither side buffers much.
const WINDOW: usize = 4096;

/// The holder's session timeout, ms: long, so that it outlives its own slow start.
const TIMEOUT_MS: i32 = 30_000;

/// An open session holding `watches` data watches.
pub struct Holder {
    read: BufReader<OwnedReadHalf>,
    write: BufWriter<OwnedWriteHalf>,
}

fn io(what: &str) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        what: what.to_owned(),
        source,
    }
}

impl Holder {
    /// Opens a session on `connect` and sets `watches` data watches under `prefix`.
    ///
    /// # Errors
    /// The connection fails, the session is refused, or a reply is not the NoNode expected.
    pub async fn arm(connect: &str, prefix: &str, watches: usize) -> Result<Holder> {
        let stream = TcpStream::connect(connect)
            .await
            .map_err(io("connect the holder"))?;
        stream.set_nodelay(true).map_err(io("set TCP_NODELAY"))?;
        let (read, write) = stream.into_split();
        let mut holder = Holder {
            read: BufReader::with_capacity(1 << 16, read),
            write: BufWriter::with_capacity(1 << 16, write),
        };
        let connect = ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: 0,
            timeout: TIMEOUT_MS,
            session_id: 0,
            passwd: Some(vec![0; 16]),
            read_only: Some(false),
        };
        let frame = encode_frame(|buf| shepherd_protocol::Codec::encode(&connect, buf));
        holder.send(&frame).await?;
        holder
            .write
            .flush()
            .await
            .map_err(io("send the handshake"))?;
        let reply = holder.frame().await?;
        if reply.len() < 20 || reply[4..8] == [0; 4] {
            return Err(Error::Refused(
                "the holder's session was refused".to_owned(),
            ));
        }
        let mut sent = 0;
        let mut answered = 0;
        while answered < watches {
            while sent < watches && sent - answered < WINDOW {
                let request = Request::Exists(PathWatchRequest {
                    path: format!("{prefix}/w{sent}"),
                    watch: true,
                });
                let xid = i32::try_from(sent + 1).unwrap_or(i32::MAX);
                let frame = encode_frame(|buf| encode_request(xid, &request, buf));
                holder.send(&frame).await?;
                sent += 1;
            }
            holder.write.flush().await.map_err(io("send the watches"))?;
            // Half a window of replies, then top the window up again.
            let until = (answered + WINDOW / 2).min(watches);
            while answered < until {
                let reply = holder.frame().await?;
                let header_xid = reply
                    .get(..4)
                    .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
                if header_xid == Some(xid::NOTIFICATION) {
                    continue;
                }
                answered += 1;
            }
        }
        Ok(holder)
    }

    /// Keeps the session alive (a ping every second) until `stop` resolves, then closes the
    /// socket without a closeSession, as a client that dies does.
    ///
    /// # Errors
    /// The connection fails.
    pub async fn hold_until(mut self, stop: impl std::future::Future<Output = ()>) -> Result<()> {
        let mut stop = std::pin::pin!(stop);
        let ping = encode_frame(|buf| encode_request(xid::PING, &Request::Ping, buf));
        let mut sink = vec![0u8; 1 << 16];
        loop {
            tokio::select! {
                () = &mut stop => return Ok(()),
                () = tokio::time::sleep(Duration::from_secs(1)) => {
                    self.send(&ping).await?;
                    self.write.flush().await.map_err(io("ping"))?;
                }
                // Replies to pings: read and dropped.
                read = self.read.read(&mut sink) => {
                    if read.map_err(io("read the holder's replies"))? == 0 {
                        return Err(Error::Refused("the server closed the holder".to_owned()));
                    }
                }
            }
        }
    }

    async fn send(&mut self, frame: &[u8]) -> Result<()> {
        self.write
            .write_all(frame)
            .await
            .map_err(io("send a frame"))
    }

    async fn frame(&mut self) -> Result<Vec<u8>> {
        let mut prefix = [0u8; 4];
        self.read
            .read_exact(&mut prefix)
            .await
            .map_err(io("read a reply"))?;
        let len = frame_len(prefix, 64 << 20)
            .map_err(|e| Error::Refused(format!("a reply's length: {e}")))?;
        let mut body = vec![0u8; len];
        self.read
            .read_exact(&mut body)
            .await
            .map_err(io("read a reply"))?;
        Ok(body)
    }
}
