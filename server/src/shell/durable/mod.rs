//! Durability with a data directory: what a durable server holds (`store.rs`), the log thread
//! (`journal.rs`), snapshots, recovery, and the lifecycle that ties them to the shared state
//! (`lifecycle.rs`). The gate that holds replies until the disk has their writes is the write
//! path's (`route/gate.rs`); the restart is the handle's (`handle/restart.rs`).

pub(crate) mod journal;
pub(crate) mod lifecycle;
pub(crate) mod recovery;
pub(crate) mod snapshot;
pub(crate) mod store;
