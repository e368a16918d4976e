//! The state every task of a server holds: the core behind its lock (`shared.rs`), the clock,
//! the traffic counters and latencies, the ticker that wakes the core at its deadlines and the
//! sweeper of gone connections' watches.

pub(crate) mod clock;
pub(crate) mod latency;
pub(crate) mod shared;
pub(crate) mod stats;
pub(crate) mod sweeper;
pub(crate) mod ticker;
