//! The async shell around the deterministic core: listener, connections, clock and routing.
//!
//! Shape: the caller owns the listener (or lets the builder bind one) and the shutdown token;
//! one task accepts ([`listener`]), one task per connection reads and writes its stream
//! ([`conn`]), and one task ticks the core at its next deadline ([`ticker`]). All of them share
//! the state in [`router`], a handle whose methods are synchronous: a lock is taken, the core is
//! called, the resulting actions are pushed onto the connections' outbound queues, and the lock
//! is released, never across an `.await`.
//!
//! Ordering invariant: actions are routed while the core lock is held, so every connection's
//! queue receives events and replies in the core's single total order (docs/protocol.md §9.6).
//!
//! Durability, with a data directory ([`durable`]): every core call's log entries go to the
//! log thread ([`journal`]) under the core lock, and what the call routed waits in the
//! [`gate`] until they are on disk; [`snapshot`] takes snapshots in slices beside it, and
//! [`recovery`] rebuilds the core from disk at start and at a [`restart`].
//!
//! An in-process ensemble is n client endpoints over the one shared state: [`member`] owns
//! their listeners and leadership, [`ensemble`] the handle's member controls.
//!
//! The rest: [`builder`] starts a server, [`handle`] is what its owner holds, [`controls`] the
//! handle's test controls, [`faults`] and [`freeze`] the state those controls set, [`admin`]
//! the four-letter words, [`clock`] the core's time, and [`stats`] the traffic counters.

mod admin;
mod builder;
mod clock;
mod conn;
mod controls;
mod durable;
mod ensemble;
mod faults;
mod freeze;
mod gate;
mod handle;
mod http;
mod journal;
mod latency;
mod listener;
mod member;
mod recovery;
mod report;
mod restart;
mod router;
mod snapshot;
mod stats;
mod ticker;
pub mod tls;

pub use builder::{MAX_MEMBERS, Server, ServerBuilder};
pub use controls::ControlError;
pub use faults::{Fault, FaultId, FaultRule, FaultTimes};
pub use handle::ServerHandle;
pub use member::MemberState;
pub use stats::{ConnStats, ServerStats};
