//! A connection's reading half: frames in, the core called, replies routed onto the queue the
//! writer drains.
//!
//! Invariants: requests are applied in the order they were read, under the core lock, so
//! their replies are queued in that order. The requests of one read that arrived whole are
//! applied together under one turn of the lock (at most [`MAX_BURST`], and never more than
//! the outbound limit has room for), which spares the lock, the log hand-over and the gate a
//! turn per request; test controls (faults, frozen sessions) take the one-at-a-time path, so
//! that each request is checked against them. Reading pauses (and the idle timer with it) while
//! the session is frozen, while [`MAX_QUEUED_FRAMES`] frames wait to be written, or while half
//! the connection's outbound limit is charged (queued, or held for the disk: a burst stops
//! within itself there, and its rest is applied, in order, once the connection catches up), and
//! goes on while a write is pending otherwise. Cancellation: the task drops this future when the
//! connection ends; between two frames it holds no partial state.

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use bytes::BytesMut;
use shepherd_protocol::{ConnectRequest, Frame, OpCode, RequestHeader, decode_from};
use tokio::io::AsyncRead;
use tokio::time::Instant;

use crate::shell::net::conn::faulted::apply_fault;
use crate::shell::net::conn::frames::Frames;
use crate::shell::net::conn::link::{Conn, End, Link, wait_thawed};
use crate::shell::net::limits::{HANDSHAKE_IDLE, MAX_QUEUED_FRAMES};
use crate::shell::route::backlog::MAX_HELD_BYTES;
use crate::shell::route::outbound::Outbound;

/// The most requests applied under one turn of the core lock: long enough to amortise the
/// turn over a pipelined burst, short enough that other connections wait for the lock a few
/// hundred microseconds at most.
const MAX_BURST: usize = 64;

/// A request read and not yet applied, with its opcode: read once, at the frame's arrival, for
/// `lop`, the latency figures by kind, and nothing else (the core decodes the whole request).
type Pending = (BytesMut, Option<OpCode>);

/// Counts a request frame in the connection's and the server's statistics, and returns it with
/// its opcode, if known.
fn count_frame(conn: &Conn, payload: BytesMut) -> Pending {
    conn.stats.received.fetch_add(1, Relaxed);
    conn.shared.stats.packets_received.fetch_add(1, Relaxed);
    let op = RequestHeader::peek(&payload).and_then(|header| {
        conn.stats
            .last_op
            .store(header.op_type as u32 as u64, Relaxed);
        OpCode::try_from(header.op_type).ok()
    });
    (payload, op)
}

/// Whether the connection is too far behind to read more of its requests: too many frames, or
/// half its outbound limit in bytes, wait to be written (with a data directory, from the moment
/// they are routed, while they wait for the disk too).
fn backed_up(conn: &Conn) -> bool {
    conn.stats.queued.load(Relaxed) >= MAX_QUEUED_FRAMES || conn.queue.meter().half_full()
}

/// Applies the requests of `burst` in order under one turn of the core lock, and stops after
/// the one that backs the connection up ([`backed_up`]): the rest stay in `burst`, to be
/// applied, in order, once the connection has caught up. Slowed, not closed: a pipelined burst
/// of large reads would otherwise pass the outbound limit within one turn. The buffer is given
/// back once empty, so an idle connection holds none.
fn apply_burst(conn: &Conn, burst: &mut VecDeque<Pending>) {
    let shared = &conn.shared;
    shared.with_core(|core, router| {
        let now = shared.clock.now();
        while let Some((payload, op)) = burst.pop_front() {
            let started = std::time::Instant::now();
            router.route(core.request(conn.id, &payload, now));
            shared
                .stats
                .record_latency(op, started.elapsed().as_micros() as u64);
            if backed_up(conn) {
                break;
            }
        }
    });
    if burst.is_empty() {
        *burst = VecDeque::new();
    }
}

/// Whether a read error is the peer's bad input (a length outside the limit, the stream ending
/// inside a frame), owed an orderly close, rather than the stream's own failure.
fn refused(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof
    )
}

/// Queues a `Close` behind everything routed to the connection so far, through the durability
/// gate with a data directory: the writer writes what the requests already read are owed
/// (once on disk), then shuts its side of the stream down.
fn close_behind_replies(conn: &Conn) {
    conn.shared
        .with_core(|_, router| router.route_outbound([(conn.id, Outbound::Close)]));
}

/// Reads and applies frames until the connection should end. On the peer's end of stream, or
/// once a fault has closed the connection, it stops reading and never returns: the writer
/// finishes what is queued.
pub(crate) async fn read_loop<R: AsyncRead + Unpin>(
    conn: &Conn,
    link: &Link,
    frames: &mut Frames<R>,
) -> io::Result<End> {
    let shared = &conn.shared;
    let id = conn.id;
    let stats = &conn.stats;
    let mut connected = false;
    // The silence allowed: the handshake limit, then the session's timeout.
    let mut idle = HANDSHAKE_IDLE;
    let mut idle_deadline = Instant::now() + idle;
    // One timer for the connection's life, moved only when it fires: every frame pushes the
    // deadline later, and a new sleep per read would cost a timer-wheel insert and removal
    // each time. Firing early is harmless; it is re-armed at the deadline then due.
    let idle_timer = tokio::time::sleep_until(idle_deadline);
    tokio::pin!(idle_timer);
    let mut freeze = shared.frozen.watch();
    // A frame read while gathering a burst that could not join it (a four-letter word, a
    // broken frame): it is handled first on the next turn.
    let mut carried: Option<io::Result<Frame>> = None;
    // Requests read in a burst and not yet applied: the connection backed up within it.
    let mut rest = VecDeque::new();
    loop {
        // A held connection (frozen session, partitioned member) reads nothing until thawed.
        freeze.borrow_and_update();
        if conn.held(link) {
            if !wait_thawed(conn, link.session(), &mut freeze, &conn.kill).await {
                return Ok(End::Killed);
            }
            idle_deadline = Instant::now() + idle;
            continue;
        }
        // Too much waits for the disk, server-wide: read nothing more until the log catches up
        // (`route/backlog.rs`). Its silence meanwhile is ours, so the idle timer starts again.
        if let Some(backlog) = shared.router().backlog()
            && backlog.full()
        {
            // Boxed: rare, and it would otherwise size every connection's task.
            if !Box::pin(backlog.room(&conn.kill)).await {
                return Ok(End::Killed);
            }
            idle_deadline = Instant::now() + idle;
            continue;
        }
        // Too much waits to be written: read nothing more of this peer's until it takes some.
        // Its silence meanwhile is ours, so the idle timer starts again afterwards.
        if backed_up(conn) {
            // Boxed: rare, and it would otherwise size every connection's task.
            let mut drained = Box::pin(link.drained.notified());
            drained.as_mut().enable();
            if backed_up(conn) {
                drained.await;
            }
            idle_deadline = Instant::now() + idle;
            continue;
        }
        // What a burst left when the connection backed up goes before anything read after it.
        if !rest.is_empty() {
            apply_burst(conn, &mut rest);
            idle_deadline = Instant::now() + idle;
            continue;
        }
        let frame = match carried.take() {
            Some(frame) => Some(frame),
            None => tokio::select! {
                // A freeze or thaw somewhere: check again at the top.
                _ = freeze.changed() => continue,
                () = &mut idle_timer => {
                    if Instant::now() >= idle_deadline {
                        return Ok(End::Idle);
                    }
                    idle_timer.as_mut().reset(idle_deadline);
                    continue;
                }
                frame = frames.next() => frame,
            },
        };
        let payload = match frame {
            // The peer closed its sending half: what was read is answered, then the stream
            // is closed.
            None => {
                close_behind_replies(conn);
                return std::future::pending().await;
            }
            Some(Ok(Frame::FourLetterWord(word))) => return Ok(End::FourLetterWord(word)),
            Some(Ok(Frame::Payload(payload))) => payload,
            // A length outside the limit, or the stream ending inside a frame: ZooKeeper
            // answers nothing more, but what was read before is answered, and the stream shut
            // down rather than reset, so those replies reach the peer.
            Some(Err(error)) if refused(&error) => {
                tracing::debug!(peer = %stats.peer, %error,
                    "bad input: closing after the replies owed");
                close_behind_replies(conn);
                // Boxed: rare, and it would otherwise size every connection's task.
                Box::pin(frames.drain()).await;
                return std::future::pending().await;
            }
            Some(Err(error)) => return Err(error),
        };
        let (payload, op) = count_frame(conn, payload);
        if connected && !shared.frozen.any() && !shared.faults.any() {
            // The common path: this request and those that arrived whole behind it, under
            // one turn of the core lock.
            let room = MAX_QUEUED_FRAMES.saturating_sub(stats.queued.load(Relaxed));
            // Past half the disk backlog's bound, one request at a time: a burst of large
            // replies must not overshoot the bound by a burst.
            let burst = match shared.router().backlog() {
                Some(backlog) if backlog.bytes() >= MAX_HELD_BYTES / 2 => 1,
                _ => MAX_BURST,
            };
            let most = burst.min(usize::try_from(room).unwrap_or(MAX_BURST)).max(1);
            rest.push_back((payload, op));
            while rest.len() < most {
                match frames.buffered() {
                    Some(Ok(Frame::Payload(next))) => rest.push_back(count_frame(conn, next)),
                    Some(other) => {
                        carried = Some(other);
                        break;
                    }
                    None => break,
                }
            }
            apply_burst(conn, &mut rest);
            idle_deadline = Instant::now() + idle;
            continue;
        }
        // A frame of a frozen session (a reconnect's handshake included) is held, and nothing
        // behind it read, until the thaw.
        if shared.frozen.any() {
            let session = if connected {
                link.session()
            } else {
                decode_from::<ConnectRequest>(&payload)
                    .ok()
                    .map(|r| r.session_id)
            };
            if shared.frozen.holds(conn.member, session)
                && !wait_thawed(conn, session, &mut freeze, &conn.kill).await
            {
                return Ok(End::Killed);
            }
        }
        let started = std::time::Instant::now();
        // A handshake is no request: its latency is not one of an opcode's.
        let op = if connected { op } else { None };
        let mut draining = false;
        if connected {
            // Only fault rules need the session; spare the hot path a second turn of the core
            // lock when there are none.
            let session = if shared.faults.any() {
                link.session()
            } else {
                None
            };
            match shared.faults.matching(session, &payload) {
                None => shared.apply(|core, now| core.request(id, &payload, now)),
                Some(fault) => draining = apply_fault(shared, id, &payload, fault),
            }
        } else {
            // A LOOKING ensemble member answers a handshake as ZooKeeper's server that is not
            // running does: it closes the connection (`ZooKeeperServer not running`), and the
            // client tries the next member.
            if !shared.members.serves(conn.member) {
                tracing::debug!(peer = %stats.peer, "looking: refusing a handshake");
                return Ok(End::Killed);
            }
            connected = true;
            // A new session's deadline wakes the ticker through `with_core`.
            shared.apply(|core, now| core.connect(id, &payload, now));
            let (session, timeout) = shared.query(|core| {
                let session = core.connection_session(id);
                (session, session.and_then(|s| core.session_timeout(s)))
            });
            if let Some(session) = session {
                link.session.store(session, Relaxed);
            }
            if let Some(ms) = timeout {
                idle = Duration::from_millis(ms.max(1) as u64);
                link.stall_ms.store(idle.as_millis() as u64, Relaxed);
                // The session's timeout may be shorter than the handshake's limit: the timer
                // only ever moves later by itself.
                idle_timer.as_mut().reset(Instant::now() + idle);
            }
        }
        shared
            .stats
            .record_latency(op, started.elapsed().as_micros() as u64);
        if draining {
            // A fault closed the connection: read nothing more; the writer flushes up to the
            // queued Close.
            return std::future::pending().await;
        }
        idle_deadline = Instant::now() + idle;
    }
}
