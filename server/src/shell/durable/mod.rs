//! Durability with a data directory: the log thread, the gate, snapshots, recovery and restart.

pub(crate) mod gate;
pub(crate) mod journal;
pub(crate) mod lifecycle;
pub(crate) mod recovery;
pub(crate) mod restart;
pub(crate) mod snapshot;
pub(crate) mod store;
