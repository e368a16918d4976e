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
//! The write path reads in one direction: socket (`net/listener.rs`) → frame
//! (`net/conn/reader.rs`) → core (`state/shared.rs`) → log (`durable/journal.rs`) → gate
//! (`durable/gate.rs`) → connection (`net/conn/outbox.rs`, `net/conn/writer.rs`).
//!
//! The folders group the files by subsystem. Between files there is no import circle: each file
//! uses only files that do not, directly or through others, use it back (`.ci/module-cycles.py`
//! fails CI otherwise). Between folders uses go both ways (the shared state owns a gate, fault
//! rules and outboxes; the durable lifecycle works on the shared state), so the folders read
//! roughly bottom up:
//! * `state/`: what every task holds (`shared.rs`), the messages of the write path
//!   (`outbound.rs`), the clock, the traffic counters and the ticker;
//! * `durable/`: with a data directory, the log thread, the gate, snapshots, recovery, the
//!   lifecycle that ties them to the shared state, and restart;
//! * `net/`: listeners, connections and TLS;
//! * `controls/`: fault rules, frozen sessions and the handle's test controls;
//! * `ensemble/`: an in-process ensemble's member endpoints and their controls;
//! * `observe/`: the four-letter words and the reports behind them; `http/` serves them with
//!   the AdminServer, `/metrics` and the HTTP test controls;
//! * on top, [`builder`] starts a server and [`handle`] is what its owner holds.

mod builder;
mod controls;
mod durable;
mod ensemble;
mod handle;
#[cfg(feature = "http")]
mod http;
mod net;
mod observe;
mod state;

pub use net::tls;

pub use builder::{MAX_MEMBERS, Server, ServerBuilder};
pub use controls::faults::{Fault, FaultId, FaultRule, FaultTimes, StaleReads};
pub use controls::methods::ControlError;
pub use ensemble::member::MemberState;
pub use handle::ServerHandle;
pub use state::stats::{ConnStats, ServerStats};
