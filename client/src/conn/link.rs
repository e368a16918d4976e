//! One connection to one server, over whatever stream the [`crate::Connector`] opened: the
//! handshake, the requests written but not yet answered, and the bytes not yet written.
//!
//! Invariants: a [`Link`] exists only after a ConnectResponse was read; every frame sent with a
//! non-auth, non-ping xid has a [`Pending`] entry pushed in send order, so replies can be
//! checked against the front of the queue (strict FIFO, as Java); auth replies have their own
//! FIFO because the Java server answers them on receipt, ahead of earlier requests. Frames are
//! written in the order they were sent, whole, by the connection task itself
//! ([`Outgoing::write_some`]): no writer task, so a request costs no hand-over between tasks, and
//! what several callers sent between two writes leaves in one `write`. Dropping a link drops
//! both halves of the stream and so closes it.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use shepherd_protocol::{
    Codec, ConnectRequest, ConnectResponse, Frame, FrameCodec, OpCode, Request, Response,
    decode_from, encode_request,
};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::codec::{FramedRead, FramedWrite};

use super::watch_registry::WatchReg;
use crate::error::Error;

/// Who waits for a reply.
#[derive(Debug)]
pub(crate) enum PendingKind {
    /// A caller, possibly with a watch to register when the reply is in.
    User {
        /// The server path, for the watch.
        path: String,
        watch: Option<WatchReg>,
        reply: oneshot::Sender<Result<Response, Error>>,
    },
    /// setWatches and removeWatches sent by the client itself.
    Internal,
    /// closeSession: its reply ends the session.
    Close,
}

/// A request sent on this link whose reply has not arrived.
#[derive(Debug)]
pub(crate) struct Pending {
    pub(crate) xid: i32,
    pub(crate) op: OpCode,
    pub(crate) kind: PendingKind,
}

/// An established connection over a stream of type `S`.
#[derive(Debug)]
pub(crate) struct Link<S> {
    pub(crate) host: String,
    pub(crate) reader: FramedRead<ReadHalf<S>, FrameCodec>,
    /// The writing half, and what was sent but not yet written.
    pub(crate) out: Outgoing<S>,
    pub(crate) pending: VecDeque<Pending>,
    /// Callers of add_auth, or `None` for credentials re-sent after a handshake.
    pub(crate) auth_pending: VecDeque<Option<oneshot::Sender<Result<(), Error>>>>,
    pub(crate) last_send: Instant,
    pub(crate) last_recv: Instant,
    /// Whether closeSession was sent.
    pub(crate) closing: bool,
}

impl<S> Link<S> {
    /// Queues one request frame; it is written by [`Outgoing::write_some`], in send order.
    pub(crate) fn send(&mut self, xid: i32, request: &Request) {
        self.out.push(xid, request);
        self.last_send = Instant::now();
    }

    /// Sends a request whose reply goes through the FIFO.
    pub(crate) fn send_pending(&mut self, xid: i32, request: &Request, kind: PendingKind) {
        self.send(xid, request);
        self.pending.push_back(Pending {
            xid,
            op: request.op_code(),
            kind,
        });
    }

    /// Fails every request still waiting on this link, which is going away.
    pub(crate) fn fail_in_flight(mut self, err: &Error) {
        for pending in self.pending.drain(..) {
            if let PendingKind::User { reply, .. } = pending.kind {
                let _ = reply.send(Err(err.for_waiter()));
            }
        }
        for waiter in self.auth_pending.drain(..).flatten() {
            let _ = waiter.send(Err(err.for_waiter()));
        }
    }
}

/// The room the outgoing buffer keeps between bursts; a larger one (a big create or multi)
/// is given back once written.
const KEPT_ROOM: usize = 4096;

/// A link's writing half and the frames sent on it but not yet written, apart from the rest of
/// the link so that the connection task can write while it waits to read.
#[derive(Debug)]
pub(crate) struct Outgoing<S> {
    writer: WriteHalf<S>,
    /// Frames with their length prefixes; `unsent[..written]` is already on the stream.
    unsent: Vec<u8>,
    written: usize,
    /// Something was written since the stream was last flushed. A plain socket needs no
    /// flush, but a TLS stream may keep the last records it encrypted until flushed.
    dirty: bool,
}

impl<S> Outgoing<S> {
    fn push(&mut self, xid: i32, request: &Request) {
        let start = self.unsent.len();
        self.unsent.extend_from_slice(&[0; 4]);
        encode_request(xid, request, &mut self.unsent);
        // Past i32::MAX the prefix would lie; the server refuses anything past jute.maxbuffer
        // (1 MiB by default) long before, so the saturated prefix only makes it close sooner.
        let len = i32::try_from(self.unsent.len() - start - 4).unwrap_or(i32::MAX);
        self.unsent[start..start + 4].copy_from_slice(&len.to_be_bytes());
    }

    /// Whether anything sent has yet to reach the stream: frames not written, or written and
    /// not flushed.
    pub(crate) fn unfinished(&self) -> bool {
        self.written < self.unsent.len() || self.dirty
    }
}

impl<S: AsyncWrite> Outgoing<S> {
    /// One step towards the stream: as much of what was sent as it takes in one `write`, and,
    /// once everything is written, a flush (in the same step, so that a burst costs its
    /// caller's loop one turn, not two).
    ///
    /// # Errors
    /// The stream's; a stream that takes nothing is `WriteZero`.
    ///
    /// # Cancellation
    /// Safe: a `write` that did not complete wrote nothing, and a flush may be started again
    /// (what was written is counted before it starts); nothing is lost or repeated.
    pub(crate) async fn write_some(&mut self) -> io::Result<()> {
        if self.written < self.unsent.len() {
            let n = self.writer.write(&self.unsent[self.written..]).await?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            self.written += n;
            self.dirty = true;
            if self.written < self.unsent.len() {
                if self.written > KEPT_ROOM && self.written >= self.unsent.len() / 2 {
                    // A socket that never quite drains while callers keep sending would
                    // otherwise keep every byte ever written: drop the written half (each byte
                    // is moved at most once per halving, so the copying stays in proportion to
                    // what is sent).
                    self.unsent.drain(..self.written);
                    self.written = 0;
                }
                return Ok(());
            }
            self.unsent.clear();
            self.written = 0;
            if self.unsent.capacity() > KEPT_ROOM {
                self.unsent.shrink_to(KEPT_ROOM);
            }
        }
        self.writer.flush().await?;
        self.dirty = false;
        Ok(())
    }

    /// Writes and flushes everything sent so far.
    ///
    /// # Errors
    /// As [`Outgoing::write_some`].
    pub(crate) async fn flush(&mut self) -> io::Result<()> {
        while self.unfinished() {
            self.write_some().await?;
        }
        Ok(())
    }
}

/// The next payload frame from the server, read before the connection's reader task exists
/// (the handshake, the SASL exchange). A four-letter word is a protocol error; the end of the
/// stream is an I/O error naming `during`.
pub(crate) async fn next_payload<R>(
    reader: &mut FramedRead<R, FrameCodec>,
    during: &str,
) -> Result<bytes::BytesMut, Error>
where
    R: AsyncRead + Unpin,
{
    match reader.next().await {
        Some(Ok(Frame::Payload(payload))) => Ok(payload),
        Some(Ok(Frame::FourLetterWord(_))) => {
            Err(Error::Protocol("four-letter word from a server".into()))
        }
        Some(Err(e)) => Err(e.into()),
        None => Err(Error::Io(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("server closed the connection during {during}"),
        ))),
    }
}

/// Opens the stream with `open` (the connector's attempt for `host`), sends the
/// ConnectRequest and reads the ConnectResponse, all within `timeout`.
pub(crate) async fn handshake<S>(
    host: String,
    open: impl Future<Output = io::Result<S>>,
    request: ConnectRequest,
    timeout: Duration,
    max_frame: usize,
) -> Result<(Link<S>, ConnectResponse), Error>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let attempt = async {
        let (read, write) = tokio::io::split(open.await?);
        let mut reader = FramedRead::new(read, FrameCodec::client(max_frame));
        let mut writer = FramedWrite::new(write, FrameCodec::client(max_frame));
        writer.send(request.to_bytes()).await?;
        let payload = next_payload(&mut reader, "the handshake").await?;
        let response = decode_from::<ConnectResponse>(&payload)?;
        if response.protocol_version != 0 {
            return Err(Error::Protocol(format!(
                "protocol version {}",
                response.protocol_version
            )));
        }
        Ok((reader, writer, response))
    };
    let (reader, writer, response) = tokio::time::timeout(timeout, attempt)
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "handshake timed out"))??;
    let now = Instant::now();
    let link = Link {
        host,
        reader,
        // The handshake's frame was flushed: the codec holds nothing more.
        out: Outgoing {
            writer: writer.into_inner(),
            unsent: Vec::new(),
            written: 0,
            dirty: false,
        },
        pending: VecDeque::new(),
        auth_pending: VecDeque::new(),
        last_send: now,
        last_recv: now,
        closing: false,
    };
    Ok((link, response))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use shepherd_protocol::SetDataRequest;
    use tokio::io::AsyncReadExt;

    use super::*;

    /// A peer that takes a little less than it is sent, round after round, never lets the
    /// buffer drain: what was written must still be dropped, or the buffer holds every byte
    /// ever sent.
    #[tokio::test]
    async fn written_bytes_are_dropped_while_the_stream_never_drains() {
        let (near, mut far) = tokio::io::duplex(4096);
        let (_read, writer) = tokio::io::split(near);
        let mut out = Outgoing {
            writer,
            unsent: Vec::new(),
            written: 0,
            dirty: false,
        };
        let request = Request::SetData(SetDataRequest {
            path: "/n".into(),
            data: Some(vec![7; 1000]),
            version: -1,
        });
        let mut sink = vec![0; 1900];
        let mut sent = 0;
        let rounds = async {
            for _ in 0..2000 {
                let before = out.unsent.len();
                out.push(1, &request);
                out.push(2, &request);
                sent += out.unsent.len() - before;
                // At least one byte goes: the peer read some in the round before.
                out.write_some().await.unwrap();
                let n = far.read(&mut sink).await.unwrap();
                assert!(n > 0);
            }
        };
        tokio::time::timeout(Duration::from_secs(10), rounds)
            .await
            .expect("no write or read blocks");
        let unwritten = out.unsent.len() - out.written;
        // About 200 KB is legitimately unwritten (the peer took 1,900 of every ~2,050 bytes);
        // the 4 MB sent must not all be held.
        assert!(sent > 4_000_000, "{sent} bytes sent");
        assert!(
            out.unsent.len() <= (2 * unwritten).max(2 * KEPT_ROOM),
            "{} bytes held for {unwritten} unwritten",
            out.unsent.len()
        );
    }
}
