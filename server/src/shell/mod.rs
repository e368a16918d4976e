//! The async shell around the deterministic core: listeners, connections, the clock, routing,
//! durability, observation and the test controls, a folder each.
//!
//! Shape: the caller owns the listener (or lets the builder bind one) and the shutdown token;
//! one task accepts (`net/listener.rs`), one task per connection reads and writes its stream
//! (`net/conn/`), and one task ticks the core at its next deadline (`state/ticker.rs`). All of
//! them share the state in `state/shared.rs`, a handle whose methods are synchronous: a lock is
//! taken, the core is called, the resulting actions are pushed onto the connections' outbound
//! queues, and the lock is released, never across an `.await`.
//!
//! Ordering invariant: actions are routed while the core lock is held, so every connection's
//! queue receives events and replies in the core's single total order (docs/protocol.md §9.6).
//!
//! The write path reads in one direction and lives in one folder, `route/`: socket
//! (`net/listener.rs`) → frame (`net/conn/reader.rs`) → core, under its lock
//! (`state/shared.rs`) → messages, routed and charged (`route/`) → log, handed over by
//! `durable/store.rs` → on disk, told back by `durable/lifecycle.rs` → gate (`route/gate.rs`)
//! → connection (`route/outbox.rs`, `net/conn/writer.rs`). docs/architecture.md draws it.
//!
//! The folders group the files by subsystem. Between files there is no import circle: each file
//! uses only files that do not, directly or through others, use it back (`.ci/module-cycles.py`
//! fails CI otherwise). The folders read roughly bottom up:
//! * `route/`: the write path: the messages (`outbound.rs`), the connection table and its
//!   routing (`router.rs`), the per-connection queues (`outbox.rs`), the durability gate and
//!   the disk backlog; it depends on nothing else of the shell but the connection counters;
//! * `state/`: what every task holds (`shared.rs`), the clock, the traffic counters, the
//!   ticker and the sweeper;
//! * `durable/`: with a data directory, the log thread, snapshots, recovery, and the lifecycle
//!   that ties them to the shared state;
//! * `net/`: listeners, connections and TLS;
//! * `controls/`: fault rules and frozen sessions;
//! * `ensemble/`: an in-process ensemble's member endpoints and their leadership;
//! * `observe/`: the four-letter words and the reports behind them; `http/` serves them with
//!   the AdminServer, `/metrics` and the HTTP test controls;
//! * on top, [`builder`] starts a server and [`handle`] is what its owner holds: the running
//!   [`Server`] and its two faces, [`Controls`] and [`Members`].

mod builder;
mod controls;
mod durable;
mod ensemble;
mod handle;
#[cfg(feature = "http")]
mod http;
mod net;
mod observe;
mod route;
mod state;

pub use net::tls;

pub use builder::{MAX_MEMBERS, ServerBuilder};
pub use controls::faults::{Fault, FaultId, FaultRule, FaultTimes, StaleReads};
pub use ensemble::member::MemberState;
pub use handle::{ControlError, Controls, Members, Server};
pub use state::stats::{ConnStats, ServerStats};
