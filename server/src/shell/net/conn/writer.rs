//! A connection's writing half: what the router queued for the connection, written in queue
//! order, batched into `writev` calls, each bounded by the connection's stall limit.
//!
//! Invariants: frames are written whole and in the order they were queued; every byte handed
//! to the stream is taken off the connection's outbound meter; a single write call that makes
//! no progress for the stall limit (the session timeout, 10 s before the handshake) ends the
//! connection, unless it is held (session frozen, member partitioned). Cancellation: the task drops this future when the
//! connection ends, and the stream with it; a frame half written is never resumed.

use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::time::Instant;

use crate::shell::net::conn::link::{Conn, End, Link, wait_thawed};
use crate::shell::route::outbound::Outbound;
use crate::shell::route::outbox::{FRAME_OVERHEAD, Taken, wire_len};

/// Writes what is queued until a `Close` (the reader queues one behind what it owed at the
/// peer's end of stream) or a stall. Between bursts it holds no buffer: the batch is dropped whenever the queue is
/// found empty, and the bytes on their way out live in the (boxed) writing of one burst only,
/// so the connection's task is not sized for the deepest write while it sleeps.
pub(crate) async fn write_loop<W: AsyncWrite + Unpin>(
    conn: &Conn,
    link: &Link,
    io: &mut W,
) -> io::Result<End> {
    let shared = &conn.shared;
    let mut freeze = shared.frozen.watch();
    let mut batch = VecDeque::new();
    loop {
        while batch.is_empty() {
            match conn.queue.take(&mut batch) {
                Taken::Some => break,
                // The router dropped the queue: the connection is being forgotten.
                Taken::Closed => return Ok(End::Closed),
                Taken::Empty => {}
            }
            // Idle: give the buffers back before sleeping.
            batch = VecDeque::new();
            conn.queue.ready().await;
        }
        // A held connection writes nothing until thawed; what comes meanwhile stays queued.
        if conn.held(link) && !wait_thawed(conn, link.session(), &mut freeze, &conn.kill).await {
            return Ok(End::Killed);
        }
        let written = Box::pin(write_queued(conn, link, io, &mut batch)).await;
        link.drained.notify_waiters();
        match written {
            Ok(Written::Open) => {}
            Ok(Written::Closed) => return Ok(End::Closed),
            Ok(Written::Paused(until)) => tokio::time::sleep_until(until).await,
            Err(error) if error.kind() == io::ErrorKind::TimedOut => return Ok(End::Stalled),
            Err(error) => return Err(error),
        }
    }
}

/// Writes a four-letter word's answer and shuts the stream down; false if a write made no
/// progress for `stall`.
pub(crate) async fn write_text<W: AsyncWrite + Unpin>(
    io: &mut W,
    mut text: &[u8],
    stall: Duration,
) -> io::Result<bool> {
    while !text.is_empty() {
        match tokio::time::timeout(stall, io.write(text)).await {
            Err(_) => return Ok(false),
            Ok(Ok(0)) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(Ok(n)) => text = &text[n..],
            Ok(Err(error)) => return Err(error),
        }
    }
    match tokio::time::timeout(stall, io.shutdown()).await {
        Err(_) => Ok(false),
        Ok(done) => done.map(|()| true),
    }
}

/// How a batch of writes ended.
enum Written {
    /// Everything queued is written and flushed.
    Open,
    /// A `Close` was reached (everything before it flushed, the stream shut down).
    Closed,
    /// A delay marker was reached (everything before it flushed).
    Paused(Instant),
}

/// Writes `batch` and everything queued meanwhile, then flushes; stops at a `Close` or at a
/// delay marker that is still in the future, leaving what follows it in `batch`.
///
/// Frames go to the stream directly rather than through a codec's sink, whose encoder would
/// copy every payload into its write buffer once more: a herd's getChildren replies are tens of
/// kilobytes each, and the core has already built each one in a buffer of its own. Small
/// frames are copied together into one buffer, so a burst of replies is one `writev`.
async fn write_queued<W: AsyncWrite + Unpin>(
    conn: &Conn,
    link: &Link,
    io: &mut W,
    batch: &mut VecDeque<Outbound>,
) -> io::Result<Written> {
    let pending = &mut Pending::default();
    let mut outcome = Written::Open;
    loop {
        let Some(out) = batch.pop_front() else {
            // Whatever was queued while this batch was encoded or written goes in this round.
            match conn.queue.take(batch) {
                Taken::Some => continue,
                Taken::Empty | Taken::Closed => break,
            }
        };
        match out {
            Outbound::Frame(payload) => {
                conn.stats.queued.fetch_sub(1, Relaxed);
                conn.queue.meter().release(FRAME_OVERHEAD);
                conn.stats.sent.fetch_add(1, Relaxed);
                conn.shared.stats.packets_sent.fetch_add(1, Relaxed);
                pending.push(payload)?;
                if pending.len >= Pending::HIGH_WATER {
                    write_pending(conn, link, io, pending).await?;
                }
            }
            Outbound::Delay(until) => {
                if until > Instant::now() {
                    outcome = Written::Paused(until);
                    break;
                }
            }
            // An abort never reaches the queue (the outbox kills instead); were it to, it
            // closes all the same.
            Outbound::Close | Outbound::Abort => {
                outcome = Written::Closed;
                break;
            }
        }
    }
    write_pending(conn, link, io, pending).await?;
    stalling(conn, link, io.flush()).await?;
    if matches!(outcome, Written::Closed) {
        stalling(conn, link, io.shutdown()).await?;
    }
    Ok(outcome)
}

/// Writes everything `pending` holds and takes it off the outbound meter.
async fn write_pending<W: AsyncWrite + Unpin>(
    conn: &Conn,
    link: &Link,
    io: &mut W,
    pending: &mut Pending,
) -> io::Result<()> {
    pending.seal();
    while !pending.chunks.is_empty() {
        let slices: Vec<IoSlice<'_>> = pending
            .chunks
            .iter()
            .filter(|c| !c.is_empty())
            .take(Pending::MAX_SLICES)
            .map(|c| IoSlice::new(c))
            .collect();
        let written = if slices.is_empty() {
            0
        } else {
            match stalling(conn, link, io.write_vectored(&slices)).await? {
                0 => return Err(io::ErrorKind::WriteZero.into()),
                n => n,
            }
        };
        drop(slices);
        pending.advance(written);
        conn.queue.meter().release(written);
        link.drained.notify_waiters();
    }
    Ok(())
}

/// Runs one write call, failing with `TimedOut` if it makes no progress for the connection's
/// stall limit; while the session is frozen the call may wait as long as the freeze lasts.
async fn stalling<T>(
    conn: &Conn,
    link: &Link,
    call: impl Future<Output = io::Result<T>>,
) -> io::Result<T> {
    let mut call = std::pin::pin!(call);
    loop {
        match tokio::time::timeout(link.stall(), call.as_mut()).await {
            Ok(done) => return done,
            Err(_) => {
                if !conn.held(link) {
                    return Err(io::ErrorKind::TimedOut.into());
                }
            }
        }
    }
}

/// Length-prefixed frames on their way to the stream, written with `writev` where it has one:
/// small frames (and every length prefix) are copied together, large payloads are sent from
/// their own buffers.
#[derive(Default)]
struct Pending {
    /// What is ready to go, in order.
    chunks: VecDeque<Bytes>,
    /// Small frames and prefixes not yet cut into a chunk.
    small: BytesMut,
    /// Bytes held, `small` included.
    len: usize,
}

impl Pending {
    /// Payloads at least this long are not copied.
    const COPY_BELOW: usize = 4096;
    /// Write once this much is held, rather than gather an unbounded queue first.
    const HIGH_WATER: usize = 256 * 1024;
    /// The most slices passed to one `writev` (Linux allows 1024).
    const MAX_SLICES: usize = 64;

    /// Queues one frame: its 4-byte big-endian length, then the payload. A payload too long
    /// for the signed 32-bit length is refused.
    fn push(&mut self, payload: Bytes) -> io::Result<()> {
        let len = i32::try_from(payload.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame too large"))?;
        self.small.extend_from_slice(&len.to_be_bytes());
        self.len += wire_len(payload.len());
        if payload.len() < Self::COPY_BELOW {
            self.small.extend_from_slice(&payload);
        } else {
            self.chunks.push_back(self.small.split().freeze());
            self.chunks.push_back(payload);
        }
        Ok(())
    }

    /// Cuts what `small` holds into a chunk, so that `chunks` holds everything.
    fn seal(&mut self) {
        if !self.small.is_empty() {
            self.chunks.push_back(self.small.split().freeze());
        }
    }

    /// Drops `written` bytes from the front.
    fn advance(&mut self, mut written: usize) {
        self.len = self.len.saturating_sub(written);
        while let Some(front) = self.chunks.front_mut() {
            if front.len() > written {
                front.advance(written);
                break;
            }
            written -= front.len();
            self.chunks.pop_front();
        }
    }
}
