//! One task per connection: a reader that reads frames and hands them to the core, and a writer
//! that writes what the core queued for the connection, in queue order, running side by side within
//! it (one task costs less than two and needs no channel between them).
//!
//! The task runs over any byte stream (`AsyncRead + AsyncWrite`): a TCP socket from the listener,
//! or an in-memory pipe handed to `Server::serve_io`. Nothing here depends on which; the
//! per-IP limit and the peer's address are settled at registration, before the task starts. The
//! task ends when the peer closes, when the server shuts down, or when the connection is killed,
//! and it always unregisters itself on the way out.
//!
//! Rules enforced here rather than in the core, because they are about the stream:
//! * a frame length outside `0..=jute.maxbuffer` closes the connection with no reply to it
//!   (docs/protocol.md §1.3), after the replies owed to the requests before it, shutting the
//!   write side and dropping what the peer still sends for a while ([`reader`], [`frames`]);
//! * a four-letter word is recognized only as the first four bytes, answered as raw text, and the
//!   connection closed (docs/protocol.md §14.1); with a data directory the answer waits until
//!   what it shows is on disk (`Shared::durable_view`); the peer's half-close does not stop the answer,
//!   but a peer that does not take it within [`HANDSHAKE_IDLE`] of no progress, or
//!   [`FOUR_LETTER_DEADLINE`] in all, is dropped, and shutdown never waits for it;
//! * a connection silent for its session timeout (10 s before the handshake) is closed; the session
//!   lives on until its own expiry (docs/protocol.md §13.1);
//! * reading goes on while a write is pending, so a client taking a large reply slowly still has
//!   its pings read and keeps its session; requests are read only while fewer than
//!   `MAX_QUEUED_FRAMES` (`net/limits.rs`) frames wait to be written to the connection, so a client
//!   that floods requests without reading the replies stops being read, not served without bound;
//! * the bytes waiting to be written to a connection (with a data directory, from the moment
//!   they are routed, while they wait for the disk too) are capped (`Config::outbound_limit`,
//!   [`outbox`]): the connection is not read while half the cap waits, and one that would pass
//!   the cap all the same (other sessions' events) is closed;
//! * a write that makes no progress for the session's timeout (10 s before the handshake) closes
//!   the connection: a peer that stopped reading is dropped, as ZooKeeper's connection expirer
//!   drops one that does no I/O for as long;
//! * a close that owes the peer nothing (its session expired or was taken over) drops the
//!   connection at once, mid-write included ([`outbox`]).
//!
//! Footprint: an idle connection holds no read buffer ([`frames`]), no write buffer and no queue
//! allocation ([`outbox`], [`writer`]); what it keeps is its task (this module's futures, kept
//! small by boxing the rare waits, a held connection's and a full queue's, and the writing of each
//! burst), its queue's few words, its counters and the runtime's registration of its socket.
//! docs/bench/scale.md ("Per session") has the figures.

mod broken;
mod faulted;
mod frames;
pub(crate) mod link;
mod reader;
mod writer;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};

use shepherd_protocol::{FrameCodec, Id};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::core::ConnInfo;
use crate::shell::net::limits::{FOUR_LETTER_DEADLINE, HANDSHAKE_IDLE};
use crate::shell::observe::admin;
use crate::shell::route::outbox::Outbox;
use crate::shell::state::shared::Shared;
use frames::Frames;
use link::{Conn, End, Link, wait_thawed};

/// Registers a connection over `io` from `peer` and spawns its task on `tasks`. Refused (false,
/// and `io` dropped at once) when `per_ip_limit` (0 for none) connections from `peer`'s address
/// are already open. `member` is the ensemble member whose endpoint it came in on (1 for a
/// single server). Must be called within a tokio runtime.
pub(crate) fn spawn<S>(
    shared: &Arc<Shared>,
    tasks: &TaskTracker,
    shutdown: &CancellationToken,
    io: S,
    (peer, member): (SocketAddr, u64),
    per_ip_limit: usize,
) -> bool
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Some(conn) = register(shared, shutdown, (peer, member), per_ip_limit) else {
        return false;
    };
    let task = run(conn, io, false);
    #[cfg(test)]
    tests::TASK_BYTES.store(std::mem::size_of_val(&task), Relaxed);
    tasks.spawn(task);
    true
}

/// [`spawn`] for a connection whose stream comes out of `upgrade`, awaited first inside the
/// connection's task (a TLS handshake, `net/tls`): registered (and counted against
/// `per_ip_limit`) at once, then served over the stream `upgrade` yields with the identities
/// it yields added before the first frame is read. `upgrade` yielding `None`, or the
/// connection being killed first, ends the task. `upgrade` bounds its own time.
pub(crate) fn spawn_upgraded<F, S>(
    shared: &Arc<Shared>,
    tasks: &TaskTracker,
    shutdown: &CancellationToken,
    upgrade: F,
    (peer, member): (SocketAddr, u64),
    per_ip_limit: usize,
) -> bool
where
    F: Future<Output = Option<(S, Vec<Id>)>> + Send + 'static,
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Some(conn) = register(shared, shutdown, (peer, member), per_ip_limit) else {
        return false;
    };
    tasks.spawn(async move {
        let upgraded = tokio::select! {
            biased;
            _ = conn.kill.cancelled() => None,
            upgraded = upgrade => upgraded,
        };
        let Some((io, ids)) = upgraded else {
            conn.shared.unregister(conn.id);
            return;
        };
        let (id, addr, member) = (conn.id, conn.stats.peer.ip(), member_byte(conn.member));
        conn.shared.with_core(|core, _| {
            core.open_connection(id, ConnInfo { addr, member });
            core.add_transport_identities(id, &ids);
        });
        run(conn, io, true).await;
    });
    true
}

/// Registers a connection; `None` past the per-IP limit.
fn register(
    shared: &Arc<Shared>,
    shutdown: &CancellationToken,
    (peer, member): (SocketAddr, u64),
    per_ip_limit: usize,
) -> Option<Conn> {
    let kill = shutdown.child_token();
    let (outbox, queue) = Outbox::new(shared.config.outbound_limit(), kill.clone());
    let (id, stats) = shared.register(peer, member, per_ip_limit, outbox, kill.clone())?;
    Some(Conn {
        shared: shared.clone(),
        id,
        stats,
        queue,
        kill,
        shutdown: shutdown.clone(),
        member,
    })
}

/// A member id as the core takes it: ids are `1..=MAX_MEMBERS` (254), one byte.
fn member_byte(member: u64) -> u8 {
    u8::try_from(member).unwrap_or(u8::MAX)
}

/// The connection's task: reads and applies requests while it writes what is queued for it.
/// `opened`: the core already knows the connection (`spawn_upgraded`).
async fn run<S>(conn: Conn, io: S, opened: bool)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let (shared, id) = (&conn.shared, conn.id);
    let peer = conn.stats.peer;
    if !opened {
        let info = ConnInfo {
            addr: peer.ip(),
            member: member_byte(conn.member),
        };
        shared.with_core(|core, _| core.open_connection(id, info));
    }
    let (read, mut write) = tokio::io::split(io);
    let mut frames = Frames::new(read, FrameCodec::server(shared.config.max_buffer));
    let link = Link {
        stall_ms: AtomicU64::new(HANDSHAKE_IDLE.as_millis() as u64),
        session: AtomicI64::new(0),
        drained: Notify::new(),
    };
    let ended = tokio::select! {
        biased;
        _ = conn.kill.cancelled() => Ok(End::Killed),
        end = reader::read_loop(&conn, &link, &mut frames) => end,
        end = writer::write_loop(&conn, &link, &mut write) => end,
    };
    let end = match ended {
        Ok(end) => end,
        Err(error) => {
            tracing::debug!(%peer, %error, "connection closed");
            End::Closed
        }
    };
    // After bad input the replies owed are written and the write side shut down; what the
    // peer still sends is read and dropped a little longer (`frames.rs`), so that closing does
    // not reset the stream under replies the peer has not read yet.
    if matches!(end, End::Closed) && frames.draining() {
        tokio::select! {
            biased;
            _ = conn.kill.cancelled() => {}
            () = Box::pin(frames.drain()) => {}
        }
    }
    match end {
        End::FourLetterWord(word) => {
            // Shown only once what it shows is on disk; never if the log failed.
            let text = tokio::select! {
                biased;
                _ = conn.kill.cancelled() => None,
                text = Box::pin(async {
                    let text = admin::answer_off_workers(shared, conn.member, word).await;
                    shared.durable_view(text).await
                }) => text,
            };
            let answered = match text {
                None => Ok(false),
                Some(text) => tokio::select! {
                    biased;
                    _ = conn.kill.cancelled() => Ok(false),
                    done = tokio::time::timeout(
                        FOUR_LETTER_DEADLINE,
                        writer::write_text(&mut write, text.as_bytes(), HANDSHAKE_IDLE),
                    ) => done.unwrap_or(Ok(false)),
                },
            };
            if !matches!(answered, Ok(true)) {
                tracing::debug!(%peer, "four-letter word's answer not taken; dropped");
            }
        }
        End::Killed => {
            if conn.queue.meter().overflowed() {
                shared.stats.closed_outbound_limit.fetch_add(1, Relaxed);
                tracing::info!(%peer, limit = shared.config.outbound_limit(),
                    "closing a connection whose unwritten replies passed the outbound limit");
            }
            // A frozen connection is behind a partition: the close reaches the peer only when
            // it heals (or the server shuts down).
            if !conn.shutdown.is_cancelled() && conn.held(&link) {
                let mut freeze = shared.frozen.watch();
                wait_thawed(&conn, link.session(), &mut freeze, &conn.shutdown).await;
            }
        }
        End::Stalled => {
            shared.stats.closed_write_stalled.fetch_add(1, Relaxed);
            tracing::info!(%peer, "closing a connection whose writes made no progress");
        }
        End::Idle => tracing::debug!(%peer, "closing idle connection"),
        End::Closed => {}
    }
    drop((frames, write));
    shared.unregister(id);
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;
    use crate::Server;

    /// The size of the last connection task's future, recorded by [`spawn`].
    pub(crate) static TASK_BYTES: AtomicUsize = AtomicUsize::new(0);

    /// The connection task's future is allocated for every connection and lives as long as it:
    /// it stays small (each byte here is ten kilobytes for ten thousand idle sessions).
    #[tokio::test]
    async fn a_connection_task_stays_small() {
        let server = Server::builder().start().await.expect("server starts");
        let (_peer, io) = tokio::io::duplex(64);
        server.serve_io(io);
        let bytes = TASK_BYTES.load(Relaxed);
        eprintln!("connection task future: {bytes} bytes");
        // 1 272 bytes in a release build of this commit (1 704 before the rarely used waits
        // were boxed); a test build's layout may differ a little.
        assert!(bytes > 0 && bytes <= 1536, "{bytes} bytes");
        server.shutdown().await;
    }
}
