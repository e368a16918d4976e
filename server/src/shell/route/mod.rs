//! The write path: how what the core produces reaches a connection's writer, with a data
//! directory only once the disk has the writes it may reveal.
//!
//! A request read by `net/conn/reader.rs` is applied under the core lock
//! (`state/shared.rs`, `Shared::with_core`); the core's actions become messages
//! ([`outbound`], the one conversion), which the [`router`] charges to their connections'
//! outbound limits ([`outbox`]) and, with a data directory, stages in the [`gate`]. Still under
//! the core lock the call's log entries are handed to the log thread (`durable/store.rs`), and
//! the gate tags the staged messages with the last zxid handed. When the log thread has fsynced
//! up to a zxid, the durable lifecycle (`durable/lifecycle.rs`) tells the router, the gate lets
//! go of what waited for it, and the outbox queues it for the writer (`net/conn/writer.rs`).
//! What waits for the disk is counted in the [`backlog`], whose bound stops every reader.
//!
//! Invariants, each kept in the file named: one total order per connection (the router routes
//! under the core lock; the gate releases in FIFO order), nothing observable before its fsync
//! (the gate), and bounded bytes per connection (the outbox) and per server (the backlog).
//! Nothing here reads the core or the clock: this folder depends only on the core's `Action`,
//! the connection counters and tokio's primitives.

pub(crate) mod backlog;
pub(crate) mod gate;
pub(crate) mod outbound;
pub(crate) mod outbox;
pub(crate) mod router;
