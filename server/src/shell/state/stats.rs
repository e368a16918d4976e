//! Counters the shell keeps about traffic: packets in and out, request latency, connections
//! closed for not taking what they were sent, and per connection figures for `cons` and
//! `stat`.
//!
//! They are plain atomics, updated without any lock, and only ever read for reporting; nothing
//! decides anything from them.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use shepherd_protocol::OpCode;

use crate::shell::state::latency::LatencySummary;

/// Server-wide counters (`srvr`, `mntr`).
#[derive(Debug, Default)]
pub struct ServerStats {
    /// Frames received.
    pub packets_received: AtomicU64,
    /// Frames sent.
    pub packets_sent: AtomicU64,
    /// Connections closed because the bytes queued for them would have passed the outbound
    /// limit (`ServerBuilder::max_outbound_bytes`).
    pub closed_outbound_limit: AtomicU64,
    /// Connections closed because a write to them made no progress for their session timeout
    /// (10 s before the handshake).
    pub closed_write_stalled: AtomicU64,
    latency_count: AtomicU64,
    latency_total_us: AtomicU64,
    latency_min_us: AtomicU64,
    latency_max_us: AtomicU64,
    /// ZooKeeper's `readlatency`: requests that are not transactions (pings included).
    pub(crate) read_latency: LatencySummary,
    /// ZooKeeper's `updatelatency`: transactions (docs/protocol.md §3.3).
    pub(crate) update_latency: LatencySummary,
}

impl ServerStats {
    /// Records one frame's processing time; `op` is the request's opcode, `None` for a
    /// handshake, which ZooKeeper's read and update summaries leave out.
    pub fn record_latency(&self, op: Option<OpCode>, us: u64) {
        match op {
            Some(op) if op.is_write() => self.update_latency.record(us),
            Some(_) => self.read_latency.record(us),
            None => {}
        }
        if self.latency_count.fetch_add(1, Relaxed) == 0 {
            self.latency_min_us.store(us, Relaxed);
        } else {
            self.latency_min_us.fetch_min(us, Relaxed);
        }
        self.latency_total_us.fetch_add(us, Relaxed);
        self.latency_max_us.fetch_max(us, Relaxed);
    }

    /// (min, avg, max) in ms, as `srvr` prints them.
    pub fn latency_ms(&self) -> (u64, f64, u64) {
        let count = self.latency_count.load(Relaxed);
        if count == 0 {
            return (0, 0.0, 0);
        }
        let avg = self.latency_total_us.load(Relaxed) as f64 / count as f64 / 1000.0;
        (
            self.latency_min_us.load(Relaxed) / 1000,
            avg,
            self.latency_max_us.load(Relaxed) / 1000,
        )
    }

    /// `srst`.
    pub fn reset(&self) {
        for counter in [
            &self.packets_received,
            &self.packets_sent,
            &self.closed_outbound_limit,
            &self.closed_write_stalled,
            &self.latency_count,
            &self.latency_total_us,
            &self.latency_min_us,
            &self.latency_max_us,
        ] {
            counter.store(0, Relaxed);
        }
        self.read_latency.reset();
        self.update_latency.reset();
    }
}

/// Per-connection counters (`cons`).
#[derive(Debug)]
pub struct ConnStats {
    /// The peer.
    pub peer: SocketAddr,
    /// Frames received.
    pub received: AtomicU64,
    /// Frames sent.
    pub sent: AtomicU64,
    /// Frames queued but not yet written.
    pub queued: AtomicU64,
    /// The last opcode, for `lop`.
    pub last_op: AtomicU64,
    /// When the connection was established (wall ms).
    pub established_ms: i64,
}

impl ConnStats {
    /// Fresh counters.
    pub fn new(peer: SocketAddr, established_ms: i64) -> ConnStats {
        ConnStats {
            peer,
            received: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            queued: AtomicU64::new(0),
            last_op: AtomicU64::new(u64::MAX),
            established_ms,
        }
    }
}
