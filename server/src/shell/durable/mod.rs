//! Durability with a data directory: what a durable server holds (`store.rs`), the log thread
//! (`journal.rs`), the gate that holds replies until the disk has their writes (`gate.rs`),
//! snapshots, recovery, the lifecycle that ties them to the shared state (`lifecycle.rs`) and
//! restart.

pub(crate) mod journal;
pub(crate) mod lifecycle;
pub(crate) mod recovery;
pub(crate) mod restart;
pub(crate) mod snapshot;
pub(crate) mod store;
