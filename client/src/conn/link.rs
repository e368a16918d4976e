//! One connection to one server, over whatever stream the [`crate::Connector`] opened: the
//! handshake, the writer task, and the queues of requests awaiting replies on that connection.
//!
//! Invariants: a [`Link`] exists only after a ConnectResponse was read; every frame sent with a
//! non-auth, non-ping xid has a [`Pending`] entry pushed in send order, so replies can be
//! checked against the front of the queue (strict FIFO, as Java); auth replies have their own
//! FIFO because the Java server answers them on receipt, ahead of earlier requests. Dropping a
//! link aborts its writer, which drops the last half of the stream and so closes it.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use shepherd_protocol::{
    Codec, ConnectRequest, ConnectResponse, Frame, FrameCodec, OpCode, Request, Response,
    decode_from, encode_request,
};
use tokio::io::{AsyncRead, AsyncWrite, ReadHalf, WriteHalf};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
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
    pub(crate) writer: JoinHandle<io::Result<()>>,
    out: mpsc::UnboundedSender<Vec<u8>>,
    pub(crate) pending: VecDeque<Pending>,
    /// Callers of add_auth, or `None` for credentials re-sent after a handshake.
    pub(crate) auth_pending: VecDeque<Option<oneshot::Sender<Result<(), Error>>>>,
    pub(crate) last_send: Instant,
    pub(crate) last_recv: Instant,
    /// Whether closeSession was sent.
    pub(crate) closing: bool,
}

impl<S> Link<S> {
    /// Queues one request frame for the writer. A dead writer shows up as its task ending.
    pub(crate) fn send(&mut self, xid: i32, request: &Request) {
        // Room for a header and a typical create or setData: most frames need no regrowth.
        let mut payload = Vec::with_capacity(128);
        encode_request(xid, request, &mut payload);
        let _ = self.out.send(payload);
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

impl<S> Drop for Link<S> {
    fn drop(&mut self) {
        self.writer.abort();
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
    let (out, rx) = mpsc::unbounded_channel();
    let now = Instant::now();
    let link = Link {
        host,
        reader,
        writer: tokio::spawn(write_frames(writer, rx)),
        out,
        pending: VecDeque::new(),
        auth_pending: VecDeque::new(),
        last_send: now,
        last_recv: now,
        closing: false,
    };
    Ok((link, response))
}

/// Most frames the writer gathers into one flush.
const MAX_BATCH: usize = 256;

/// The writer task: batches whatever is queued into one flush.
///
/// Before flushing a batch that is not full it yields once, so that the callers woken by the
/// replies just read (each about to send its next request) run first and their requests join
/// this flush: one `writev` for many requests instead of one each. The yield costs one trip
/// through the scheduler's queue, not a timer: nothing waits when nothing else is ready.
async fn write_frames<S: AsyncWrite>(
    mut sink: FramedWrite<WriteHalf<S>, FrameCodec>,
    mut frames: mpsc::UnboundedReceiver<Vec<u8>>,
) -> io::Result<()> {
    while let Some(frame) = frames.recv().await {
        sink.feed(frame).await?;
        let mut batched = 1;
        let mut yielded = false;
        while batched < MAX_BATCH {
            match frames.try_recv() {
                Ok(frame) => {
                    sink.feed(frame).await?;
                    batched += 1;
                }
                Err(_) if !yielded => {
                    yielded = true;
                    tokio::task::yield_now().await;
                }
                Err(_) => break,
            }
        }
        SinkExt::<Vec<u8>>::flush(&mut sink).await?;
    }
    Ok(())
}
