//! The state every task of a server holds, and the routing of the core's output.

pub(crate) mod clock;
pub(crate) mod latency;
pub(crate) mod shared;
pub(crate) mod stats;
pub(crate) mod sweeper;
pub(crate) mod ticker;
