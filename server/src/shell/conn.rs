//! One task per connection: it reads frames, hands them to the core, and writes what the core
//! queued for this connection, in queue order.
//!
//! Rules enforced here rather than in the core, because they are about sockets:
//! * a frame length outside `0..=jute.maxbuffer` closes the connection with no reply (§1.3);
//! * a four-letter word is recognized only as the first four bytes, answered as raw text, and
//!   the connection closed (§14.1); the peer's half-close does not stop the answer;
//! * a connection silent for its session timeout (10 s before the handshake) is closed; the
//!   session lives on until its own expiry (§13.1);
//! * while a write to a slow reader is pending, no new request of its own is read: a slow
//!   reader slows only itself (events for it queue up, as in ZooKeeper).

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use shepherd_protocol::{Frame, FrameCodec};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::codec::Framed;
use tokio_util::sync::CancellationToken;

use super::{Outbound, Shared, admin};
use crate::core::{ConnId, ConnInfo};
use crate::shell::stats::ConnStats;

/// How long a connection may stay silent before its handshake (ZooKeeper: 10 s).
const HANDSHAKE_IDLE: Duration = Duration::from_secs(10);

pub(super) async fn run(
    shared: Arc<Shared>,
    id: ConnId,
    socket: TcpStream,
    mut rx: mpsc::UnboundedReceiver<Outbound>,
    stats: Arc<ConnStats>,
    shutdown: CancellationToken,
) {
    let peer = stats.peer;
    shared
        .core
        .lock()
        .open_connection(id, ConnInfo { addr: peer.ip() });
    let mut framed = Framed::new(socket, FrameCodec::server(shared.config.max_buffer));
    let mut connected = false;
    let mut idle_deadline = Instant::now() + HANDSHAKE_IDLE;

    let result: std::io::Result<()> = async {
        loop {
            tokio::select! {
                biased;
                _ = shutdown.cancelled() => return Ok(()),
                out = rx.recv() => {
                    let Some(out) = out else { return Ok(()) };
                    // A peer that stops reading blocks this write, and with it the reading of
                    // its own next request: a slow reader slows only itself. Shutdown still
                    // gets through.
                    let open = tokio::select! {
                        open = write_queued(&mut framed, &mut rx, out, &stats, &shared) => open?,
                        _ = shutdown.cancelled() => false,
                    };
                    if !open {
                        return Ok(());
                    }
                }
                frame = framed.next() => {
                    let Some(frame) = frame else { return Ok(()) };
                    match frame? {
                        Frame::FourLetterWord(word) => {
                            let text = admin::answer(&shared, word);
                            let socket = framed.get_mut();
                            socket.write_all(text.as_bytes()).await?;
                            socket.shutdown().await?;
                            return Ok(());
                        }
                        Frame::Payload(payload) => {
                            stats.received.fetch_add(1, Relaxed);
                            shared.stats.packets_received.fetch_add(1, Relaxed);
                            if payload.len() >= 8 {
                                let op = i32::from_be_bytes([payload[4], payload[5], payload[6], payload[7]]);
                                stats.last_op.store(op as u32 as u64, Relaxed);
                            }
                            let started = std::time::Instant::now();
                            if connected {
                                shared.with_core(|core, now| core.request(id, &payload, now));
                            } else {
                                connected = true;
                                shared.with_core(|core, now| core.connect(id, &payload, now));
                                // A new session may expire before anything the ticker waits for.
                                shared.wake_ticker();
                            }
                            shared.stats.record_latency(started.elapsed().as_micros() as u64);
                            let timeout = {
                                let core = shared.core.lock();
                                core.connection_session(id).and_then(|s| core.session_timeout(s))
                            };
                            idle_deadline = Instant::now() + timeout
                                .map(|ms| Duration::from_millis(ms.max(1) as u64))
                                .unwrap_or(HANDSHAKE_IDLE);
                        }
                    }
                }
                _ = tokio::time::sleep_until(idle_deadline) => {
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

/// Writes `first` and everything else already queued, then flushes. Returns false when a
/// `Close` was reached (everything before it has been flushed).
async fn write_queued(
    framed: &mut Framed<TcpStream, FrameCodec>,
    rx: &mut mpsc::UnboundedReceiver<Outbound>,
    first: Outbound,
    stats: &ConnStats,
    shared: &Shared,
) -> std::io::Result<bool> {
    let mut next = Some(first);
    let mut open = true;
    while let Some(out) = next.take() {
        match out {
            Outbound::Frame(payload) => {
                feed(framed, payload, stats, shared).await?;
                next = rx.try_recv().ok();
            }
            Outbound::Close => {
                open = false;
                break;
            }
        }
    }
    SinkExt::<Bytes>::flush(framed).await?;
    if !open {
        framed.get_mut().shutdown().await?;
    }
    Ok(open)
}

async fn feed(
    framed: &mut Framed<TcpStream, FrameCodec>,
    payload: Bytes,
    stats: &ConnStats,
    shared: &Shared,
) -> std::io::Result<()> {
    stats.queued.fetch_sub(1, Relaxed);
    stats.sent.fetch_add(1, Relaxed);
    shared.stats.packets_sent.fetch_add(1, Relaxed);
    framed.feed(payload).await
}
