//! A connection's outbound queue, as the router fills it: what the core sends the connection,
//! metered in bytes, and the two ways a connection is dropped without waiting for its queue.
//!
//! Invariants:
//! * the bytes queued for one connection (or held for the disk) and not yet written never
//!   exceed its limit: the frame that would cross it is not queued, and the connection is
//!   killed instead (ZooKeeper closes a connection it cannot write to; this closes one that has
//!   stopped taking what it asked for before it holds the server's memory hostage). Its reader
//!   stops at half the limit ([`Meter::half_full`]), so only what it cannot hold back (events
//!   of other sessions' writes, one request's replies) ever reaches the limit;
//! * a close that owes the peer nothing (a session expired or taken over by another connection,
//!   a frame that could not be read) kills the connection at once, even in the middle of a
//!   write, rather than queue behind what the peer is not reading. A close that follows a frame
//!   for the same connection in the same batch (closeSession's reply, an auth failure's) is
//!   queued after it, so that the frame is written first;
//! * an empty queue holds no allocation, and the writer takes everything queued in one turn of
//!   the lock ([`Queue::take`]): replies that arrive together are written together, and an idle
//!   connection costs the queue's few words, not a channel's block of slots.
//!
//! The router calls [`Outbox::push`] under the core lock: it never blocks and never allocates
//! beyond the queue's own growth. With a data directory it calls [`Outbox::charge`] when a
//! message is routed and [`Outbox::push_charged`] when the durability gate lets it go, so the
//! limit also bounds what waits for the disk (`gate.rs`).

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::shell::route::outbound::Outbound;
use crate::shell::state::stats::ConnStats;

/// The length prefix every frame carries on the wire.
const PREFIX: usize = 4;

/// What a queued frame holds besides its bytes, as the meter counts it: the buffer's handle,
/// its slot in the queue, the allocator's rounding. Without it a flood of tiny notifications
/// (33 bytes each for "/") would hold three times what the meter says.
pub(crate) const FRAME_OVERHEAD: usize = 64;

/// The room a queue takes on its first message: a pipelined window's replies without regrowing.
const FIRST_ROOM: usize = 16;

/// The byte meter of a connection's queue: the outbox adds, the writer takes away what it has
/// written.
#[derive(Debug)]
pub(crate) struct Meter {
    /// Bytes queued or being written: length prefixes included, and [`FRAME_OVERHEAD`] for
    /// every frame still queued.
    bytes: AtomicUsize,
    /// The most `bytes` may reach.
    limit: usize,
    /// Set when a frame was refused at the limit (and the connection killed for it).
    overflowed: AtomicBool,
}

impl Meter {
    pub(crate) fn new(limit: usize) -> Meter {
        Meter {
            bytes: AtomicUsize::new(0),
            limit,
            overflowed: AtomicBool::new(false),
        }
    }

    /// Takes `bytes` off the count: bytes written to the stream, or a frame's
    /// [`FRAME_OVERHEAD`] once it has left the queue.
    pub(crate) fn release(&self, bytes: usize) {
        // Saturating: a frame refused at the limit was never added.
        let _ = self
            .bytes
            .fetch_update(Relaxed, Relaxed, |b| Some(b.saturating_sub(bytes)));
    }

    /// Bytes queued or being written.
    #[cfg(test)]
    pub(crate) fn queued(&self) -> usize {
        self.bytes.load(Relaxed)
    }

    /// Whether half the limit or more is charged (queued, being written, or, with a data
    /// directory, waiting for the disk): the connection's requests are not read meanwhile, so
    /// that a client pipelining large reads is slowed, not closed at the limit.
    pub(crate) fn half_full(&self) -> bool {
        self.bytes.load(Relaxed) >= self.limit / 2
    }

    /// Whether the connection was killed for crossing its limit.
    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed.load(Relaxed)
    }
}

/// The bytes a frame of `payload_len` takes on the wire.
pub(crate) fn wire_len(payload_len: usize) -> usize {
    payload_len.saturating_add(PREFIX)
}

/// What a queued frame of `payload_len` counts against the limit.
fn cost(payload_len: usize) -> usize {
    wire_len(payload_len).saturating_add(FRAME_OVERHEAD)
}

/// One connection's queue, shared by its [`Outbox`] (the router's end) and its writer.
#[derive(Debug)]
pub(crate) struct Queue {
    meter: Meter,
    messages: Mutex<Messages>,
    /// Notified when the queue goes from empty to not, and when the outbox is dropped.
    ready: Notify,
}

#[derive(Debug, Default)]
struct Messages {
    queued: VecDeque<Outbound>,
    /// The outbox is gone: the router has forgotten the connection.
    closed: bool,
}

/// What [`Queue::take`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Taken {
    /// Messages were moved into the batch.
    Some,
    /// Nothing is queued.
    Empty,
    /// Nothing is queued and nothing more will be: the router dropped the outbox.
    Closed,
}

impl Queue {
    pub(crate) fn meter(&self) -> &Meter {
        &self.meter
    }

    /// Moves everything queued to the back of `batch`, in order, in one turn of the lock. When
    /// `batch` is empty the two buffers are swapped, so the queue takes over the batch's room.
    pub(crate) fn take(&self, batch: &mut VecDeque<Outbound>) -> Taken {
        let mut messages = self.messages.lock();
        if messages.queued.is_empty() {
            return if messages.closed {
                Taken::Closed
            } else {
                Taken::Empty
            };
        }
        if batch.is_empty() {
            std::mem::swap(batch, &mut messages.queued);
        } else {
            batch.append(&mut messages.queued);
        }
        Taken::Some
    }

    /// Resolves once a message may have been queued since the last [`Queue::take`] that found
    /// none (or the outbox was dropped). Cancellation safe; may resolve spuriously.
    pub(crate) async fn ready(&self) {
        self.ready.notified().await;
    }
}

/// The sending side of one connection's queue, held by the router.
pub(crate) struct Outbox {
    queue: Arc<Queue>,
    kill: CancellationToken,
}

impl Outbox {
    /// An outbox whose frames may hold `limit` bytes unwritten, and the queue its connection
    /// task drains.
    pub(crate) fn new(limit: usize, kill: CancellationToken) -> (Outbox, Arc<Queue>) {
        let queue = Arc::new(Queue {
            meter: Meter::new(limit),
            messages: Mutex::default(),
            ready: Notify::new(),
        });
        (
            Outbox {
                queue: queue.clone(),
                kill,
            },
            queue,
        )
    }

    /// Queues `message`, or kills the connection: for an [`Outbound::Abort`], or for a frame
    /// that would take the queued bytes past the limit (the frame is dropped, and so is every
    /// later one: the connection is going). A queued frame counts in `stats.queued`. Never
    /// blocks.
    pub(crate) fn push(&self, message: Outbound, stats: &ConnStats) {
        if self.charge(&message, stats) {
            self.push_charged(message);
        }
    }

    /// Counts `message` against the limit and in `stats.queued` before it is queued: with a
    /// data directory a frame is charged when it is routed, while it may still wait for the
    /// disk, so that what waits counts as much as what is queued. False, and the connection
    /// killed, when a frame would take the count past the limit; false also once the
    /// connection is going. Anything but a frame is free.
    pub(crate) fn charge(&self, message: &Outbound, stats: &ConnStats) -> bool {
        if self.kill.is_cancelled() {
            return false;
        }
        let Outbound::Frame(payload) = message else {
            return true;
        };
        let meter = &self.queue.meter;
        let len = cost(payload.len());
        let before = meter.bytes.fetch_add(len, Relaxed);
        if before.saturating_add(len) > meter.limit {
            meter.bytes.fetch_sub(len, Relaxed);
            meter.overflowed.store(true, Relaxed);
            self.kill.cancel();
            return false;
        }
        stats.queued.fetch_add(1, Relaxed);
        true
    }

    /// Queues a message already [charged](Outbox::charge), or kills the connection for an
    /// [`Outbound::Abort`]. Never blocks.
    pub(crate) fn push_charged(&self, message: Outbound) {
        if self.kill.is_cancelled() {
            return;
        }
        if let Outbound::Abort = message {
            self.kill.cancel();
            return;
        }
        let was_empty = {
            let mut messages = self.queue.messages.lock();
            let was_empty = messages.queued.is_empty();
            if messages.queued.capacity() == 0 {
                messages.queued.reserve(FIRST_ROOM);
            }
            messages.queued.push_back(message);
            was_empty
        };
        // The writer sleeps only on an empty queue, so only the first message wakes it: the
        // rest of a burst rides along at no cost.
        if was_empty {
            self.queue.ready.notify_one();
        }
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        self.queue.messages.lock().closed = true;
        self.queue.ready.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, SocketAddr};

    use bytes::Bytes;

    use super::*;

    fn outbox(limit: usize) -> (Outbox, Arc<Queue>) {
        Outbox::new(limit, CancellationToken::new())
    }

    fn stats() -> ConnStats {
        ConnStats::new(SocketAddr::from((Ipv4Addr::LOCALHOST, 1)), 0)
    }

    /// A frame whose charge is 100 bytes.
    fn frame() -> Outbound {
        Outbound::Frame(Bytes::from_static(&[0; 100 - PREFIX - FRAME_OVERHEAD]))
    }

    #[test]
    fn the_queue_never_holds_more_than_the_limit() {
        let (outbox, queue) = outbox(1000);
        let meter = queue.meter();
        let stats = stats();
        for _ in 0..10_000 {
            outbox.push(frame(), &stats);
        }
        // Ten frames fit; the eleventh kills the connection, and nothing more is queued.
        assert!(outbox.kill.is_cancelled());
        assert!(meter.overflowed());
        assert_eq!(meter.queued(), 1000);
        assert_eq!(stats.queued.load(Relaxed), 10);
        let mut batch = VecDeque::new();
        assert_eq!(queue.take(&mut batch), Taken::Some);
        let held: usize = batch
            .iter()
            .map(|m| match m {
                Outbound::Frame(p) => cost(p.len()),
                _ => 0,
            })
            .sum();
        assert_eq!(held, 1000);
    }

    #[test]
    fn released_bytes_make_room_again() {
        let (outbox, queue) = outbox(200);
        let meter = queue.meter();
        let stats = stats();
        outbox.push(frame(), &stats);
        outbox.push(frame(), &stats);
        meter.release(100);
        outbox.push(frame(), &stats);
        assert!(!outbox.kill.is_cancelled());
        assert_eq!(meter.queued(), 200);
    }

    #[test]
    fn an_abort_kills_at_once_and_queues_nothing() {
        let (outbox, queue) = outbox(100);
        outbox.push(Outbound::Abort, &stats());
        assert!(outbox.kill.is_cancelled());
        assert_eq!(
            queue.take(&mut VecDeque::new()),
            Taken::Empty,
            "nothing queued after an abort"
        );
    }

    #[test]
    fn the_writer_takes_a_burst_whole_and_hears_of_the_outbox_going() {
        let (outbox, queue) = outbox(10_000);
        let stats = stats();
        for _ in 0..5 {
            outbox.push(frame(), &stats);
        }
        outbox.push(Outbound::Close, &stats);
        let mut batch = VecDeque::new();
        assert_eq!(queue.take(&mut batch), Taken::Some);
        assert_eq!(batch.len(), 6);
        assert!(matches!(batch.back(), Some(Outbound::Close)));
        assert_eq!(queue.take(&mut batch), Taken::Empty);
        drop(outbox);
        assert_eq!(queue.take(&mut VecDeque::new()), Taken::Closed);
    }
}
