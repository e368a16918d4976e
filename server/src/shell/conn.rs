//! One task per connection: it reads frames, hands them to the core, and writes what the core
//! queued for this connection, in queue order.
//!
//! The task runs over any byte stream (`AsyncRead + AsyncWrite`): a TCP socket from the
//! listener, or an in-memory pipe handed to `ServerHandle::serve_io`. Nothing here depends on
//! which; the per-IP limit and the peer's address are settled at registration, before the task
//! starts. The task ends when the peer closes, when the server shuts down, or when the
//! connection is killed, and it always unregisters itself on the way out.
//!
//! Rules enforced here rather than in the core, because they are about the stream:
//! * a frame length outside `0..=jute.maxbuffer` closes the connection with no reply (docs/protocol.md §1.3);
//! * a four-letter word is recognized only as the first four bytes, answered as raw text, and
//!   the connection closed (docs/protocol.md §14.1); the peer's half-close does not stop the answer;
//! * a connection silent for its session timeout (10 s before the handshake) is closed; the
//!   session lives on until its own expiry (docs/protocol.md §13.1);
//! * while a write to a slow reader is pending, no new request of its own is read: a slow
//!   reader slows only itself (events for it queue up, as in ZooKeeper).

use std::collections::VecDeque;
use std::io::IoSlice;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use futures_util::StreamExt;
use shepherd_protocol::{ConnectRequest, Frame, FrameCodec, decode_from};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tokio_util::codec::Framed;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::admin;
use super::faults::apply_fault;
use super::router::{Outbound, Shared};
use super::stats::{ConnStats, request_op};
use crate::core::{ConnId, ConnInfo, SessionId};

/// How long a connection may stay silent before its handshake (ZooKeeper: 10 s).
const HANDSHAKE_IDLE: Duration = Duration::from_secs(10);

/// Registers a connection over `io` from `peer` and spawns its task on `tasks`. Refused (false,
/// and `io` dropped at once) when `per_ip_limit` (0 for none) connections from `peer`'s address
/// are already open. Must be called within a tokio runtime.
pub(super) fn spawn<S>(
    shared: &Arc<Shared>,
    tasks: &TaskTracker,
    shutdown: &CancellationToken,
    io: S,
    peer: SocketAddr,
    per_ip_limit: usize,
) -> bool
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel();
    let kill = shutdown.child_token();
    let Some((id, stats)) = shared.register(peer, per_ip_limit, tx, kill.clone()) else {
        return false;
    };
    tasks.spawn(run(shared.clone(), id, io, rx, stats, kill));
    true
}

/// The connection's task: reads and applies requests, writes what is queued for it.
async fn run<S>(
    shared: Arc<Shared>,
    id: ConnId,
    io: S,
    mut rx: mpsc::UnboundedReceiver<Outbound>,
    stats: Arc<ConnStats>,
    // Cancelled on shutdown and by the close_connection control.
    kill: CancellationToken,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let peer = stats.peer;
    shared.with_core(|core, _| core.open_connection(id, ConnInfo { addr: peer.ip() }));
    let mut framed = Framed::new(io, FrameCodec::server(shared.config.max_buffer));
    let mut connected = false;
    // The silence allowed: the handshake limit, then the session's timeout, which is fixed for
    // the life of this connection (a reattach with a new timeout comes on a new connection).
    let mut idle = HANDSHAKE_IDLE;
    let mut idle_deadline = Instant::now() + idle;
    // A delayed reply (Fault::Delay) at the head of the queue: nothing is written before this.
    let mut paused_until: Option<Instant> = None;
    // A fault closed the connection: read nothing more, only flush up to the queued Close.
    let mut draining = false;
    let mut freeze = shared.frozen.watch();

    let result: std::io::Result<()> = async {
        loop {
            // A frozen session's connection neither reads nor writes until thawed.
            freeze.borrow_and_update();
            let frozen = if shared.frozen.any() {
                let session = shared.query(|core| core.connection_session(id));
                session.filter(|s| shared.frozen.contains(*s))
            } else {
                None
            };
            if let Some(session) = frozen {
                if !wait_thawed(&shared, session, &mut freeze, &kill).await {
                    return Ok(());
                }
                idle_deadline = Instant::now() + idle;
                continue;
            }
            tokio::select! {
                biased;
                _ = kill.cancelled() => return Ok(()),
                // A freeze or thaw somewhere: check again at the top.
                _ = freeze.changed() => {}
                _ = sleep_until_some(paused_until), if paused_until.is_some() => {
                    paused_until = None;
                }
                out = rx.recv(), if paused_until.is_none() => {
                    let Some(out) = out else { return Ok(()) };
                    // A peer that stops reading blocks this write, and with it the reading of
                    // its own next request: a slow reader slows only itself. Shutdown still
                    // gets through.
                    let written = tokio::select! {
                        written = write_queued(&mut framed, &mut rx, out, &stats, &shared) => written?,
                        _ = kill.cancelled() => Written::Closed,
                    };
                    match written {
                        Written::Open => {}
                        Written::Closed => return Ok(()),
                        Written::Paused(until) => paused_until = Some(until),
                    }
                }
                frame = framed.next(), if !draining => {
                    let Some(frame) = frame else { return Ok(()) };
                    match frame? {
                        Frame::FourLetterWord(word) => {
                            let text = admin::answer(&shared, word);
                            let io = framed.get_mut();
                            io.write_all(text.as_bytes()).await?;
                            io.shutdown().await?;
                            return Ok(());
                        }
                        Frame::Payload(payload) => {
                            stats.received.fetch_add(1, Relaxed);
                            shared.stats.packets_received.fetch_add(1, Relaxed);
                            if payload.len() >= 8 {
                                let op = i32::from_be_bytes([payload[4], payload[5], payload[6], payload[7]]);
                                stats.last_op.store(op as u32 as u64, Relaxed);
                            }
                            // A frame of a frozen session (a reconnect's handshake included) is
                            // held, and nothing behind it read, until the thaw.
                            if shared.frozen.any() {
                                let session = if connected {
                                    shared.query(|core| core.connection_session(id))
                                } else {
                                    decode_from::<ConnectRequest>(&payload).ok().map(|r| r.session_id)
                                };
                                if let Some(session) = session
                                    && shared.frozen.contains(session)
                                    && !wait_thawed(&shared, session, &mut freeze, &kill).await
                                {
                                    return Ok(());
                                }
                            }
                            let started = std::time::Instant::now();
                            let op = if connected { request_op(&payload) } else { None };
                            if connected {
                                // Only fault rules need the session; spare the hot path a
                                // second turn of the core lock when there are none.
                                let session = if shared.faults.any() {
                                    shared.query(|core| core.connection_session(id))
                                } else {
                                    None
                                };
                                match shared.faults.matching(session, &payload) {
                                    None => shared.apply(|core, now| core.request(id, &payload, now)),
                                    Some(fault) => draining = apply_fault(&shared, id, &payload, fault),
                                }
                            } else {
                                connected = true;
                                // A new session's deadline wakes the ticker through `with_core`.
                                shared.apply(|core, now| core.connect(id, &payload, now));
                                idle = idle_timeout(&shared, id);
                            }
                            shared.stats.record_latency(op, started.elapsed().as_micros() as u64);
                            idle_deadline = Instant::now() + idle;
                        }
                    }
                }
                _ = tokio::time::sleep_until(idle_deadline), if !draining => {
                    tracing::debug!(%peer, "closing idle connection");
                    return Ok(());
                }
            }
        }
    }
    .await;
    if let Err(error) = result {
        // Oversized frames land here too: ZooKeeper closes without a reply, and so do we.
        tracing::debug!(%peer, %error, "connection closed");
    }
    shared.unregister(id);
}

/// How long the connection may stay silent: its session's timeout, or the handshake limit.
fn idle_timeout(shared: &Shared, id: ConnId) -> Duration {
    let timeout = shared.query(|core| {
        core.connection_session(id)
            .and_then(|s| core.session_timeout(s))
    });
    timeout
        .map(|ms| Duration::from_millis(ms.max(1) as u64))
        .unwrap_or(HANDSHAKE_IDLE)
}

async fn sleep_until_some(until: Option<Instant>) {
    match until {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Waits until `session` is thawed. False when the connection is killed (or the server shut
/// down) first.
async fn wait_thawed(
    shared: &Shared,
    session: SessionId,
    freeze: &mut watch::Receiver<u64>,
    kill: &CancellationToken,
) -> bool {
    loop {
        freeze.borrow_and_update();
        if !shared.frozen.contains(session) {
            return true;
        }
        tokio::select! {
            _ = kill.cancelled() => return false,
            changed = freeze.changed() => if changed.is_err() { return false },
        }
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

/// Writes `first` and everything else already queued, then flushes; stops at a `Close` or at
/// a delay marker that is still in the future.
///
/// Frames go to the stream directly rather than through `Framed`'s sink, whose encoder would
/// copy every payload into its write buffer once more: a herd's getChildren replies are tens of
/// kilobytes each, and the core has already built each one in a buffer of its own. Only the
/// read half of `framed` is used, so its (empty) write buffer cannot hold anything back.
async fn write_queued<S: AsyncRead + AsyncWrite + Unpin>(
    framed: &mut Framed<S, FrameCodec>,
    rx: &mut mpsc::UnboundedReceiver<Outbound>,
    first: Outbound,
    stats: &ConnStats,
    shared: &Shared,
) -> std::io::Result<Written> {
    let io = framed.get_mut();
    let mut pending = Pending::default();
    let mut next = Some(first);
    let mut outcome = Written::Open;
    while let Some(out) = next.take() {
        match out {
            Outbound::Frame(payload) => {
                stats.queued.fetch_sub(1, Relaxed);
                stats.sent.fetch_add(1, Relaxed);
                shared.stats.packets_sent.fetch_add(1, Relaxed);
                pending.push(payload)?;
                if pending.len >= Pending::HIGH_WATER {
                    pending.write_to(io).await?;
                }
                next = rx.try_recv().ok();
            }
            Outbound::Delay(until) => {
                if until > Instant::now() {
                    outcome = Written::Paused(until);
                    break;
                }
                next = rx.try_recv().ok();
            }
            Outbound::Close => {
                outcome = Written::Closed;
                break;
            }
        }
    }
    pending.write_to(io).await?;
    io.flush().await?;
    if matches!(outcome, Written::Closed) {
        io.shutdown().await?;
    }
    Ok(outcome)
}

/// Length-prefixed frames on their way to the stream, written with `writev` where it has one: small frames (and
/// every length prefix) are copied together, large payloads are sent from their own buffers.
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
    /// for the signed 32-bit length is refused, as tokio-util's codec refused it before.
    fn push(&mut self, payload: Bytes) -> std::io::Result<()> {
        let len = i32::try_from(payload.len()).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "frame too large")
        })?;
        self.small.extend_from_slice(&len.to_be_bytes());
        self.len += 4 + payload.len();
        if payload.len() < Self::COPY_BELOW {
            self.small.extend_from_slice(&payload);
        } else {
            self.chunks.push_back(self.small.split().freeze());
            self.chunks.push_back(payload);
        }
        Ok(())
    }

    /// Writes everything held.
    async fn write_to<W: AsyncWrite + Unpin>(&mut self, io: &mut W) -> std::io::Result<()> {
        if !self.small.is_empty() {
            self.chunks.push_back(self.small.split().freeze());
        }
        while !self.chunks.is_empty() {
            let slices: Vec<IoSlice<'_>> = self
                .chunks
                .iter()
                .filter(|c| !c.is_empty())
                .take(Self::MAX_SLICES)
                .map(|c| IoSlice::new(c))
                .collect();
            let mut written = if slices.is_empty() {
                0
            } else {
                match io.write_vectored(&slices).await? {
                    0 => return Err(std::io::ErrorKind::WriteZero.into()),
                    n => n,
                }
            };
            drop(slices);
            while let Some(front) = self.chunks.front_mut() {
                if front.len() > written {
                    front.advance(written);
                    break;
                }
                written -= front.len();
                self.chunks.pop_front();
            }
        }
        self.len = 0;
        Ok(())
    }
}
