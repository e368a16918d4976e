//! The one test kit of the Shepherd workspace: everything a test needs besides the code under
//! test, written once.
//!
//! * [`servers`]: the servers a test body runs against (the embedded Shepherd server always,
//!   real ZooKeeper too when `SHEPHERD_REAL_ZK=host:port` is set), and how to end a session on
//!   either ([`TestServer::expire`]).
//! * [`unique`]: a path no other test or earlier run uses.
//! * [`WAIT`], [`within`], [`try_within`], [`wait_state`]: every wait is bounded and waits for an
//!   event, never for time to pass.
//! * [`connect`] and friends: shepherd-client sessions and the child-listing waits built on them.
//! * [`Proxy`]: a loopback TCP proxy that can cut, hold, blackhole or pause connections, or cut
//!   one right after a chosen request reached the server.
//! * [`locks`]: the lock recipes' one enum of every kind ([`locks::LockKind`]), the any-lock
//!   and any-guard beside it, and taking any kind in a line.
//! * [`panic_message`]: what a failed task said, for suites that report each body's failure.
//! * [`Peer`]: a raw wire peer speaking hand-built frames (through `shepherd-protocol`'s
//!   records) over a socket or any in-memory stream.
//! * [`huge_acl_create`]: requests hostile clients send, shared by the hostile-client tests and
//!   benchmark.
//! * [`TlsFront`]: a TLS listener with the test certificates before a plaintext server, for
//!   testing a client's TLS against any server.
//! * [`spawn_serve`], [`listening_addr`]: `shepherd serve` as a child process, and the address
//!   it announces.
//! * [`all_words_server`], [`secured_embedded`]: an embedded server with every four-letter
//!   word, and one with TLS and a SASL user.
//!
//! This crate is never published; it is a dev-dependency of the workspace's test suites, and
//! the support `shepherd-verify` (the oracle, the proof runs) builds on. It panics freely: a
//! failed setup step is a failed test.

mod client;
pub mod ensemble;
mod expiry;
mod four_letter;
mod frame;
mod hostile;
pub mod locks;
mod panic_message;
mod paths;
mod peer;
mod proxy;
mod requests;
mod serve_child;
mod servers;
mod tls_front;
mod wait;

pub use client::{
    SESSION_TIMEOUT, children, connect, connect_with, ephemerals, settle, try_connect_with,
    wait_children,
};
pub use expiry::{expire_by_take_over, take_over_and_close};
pub use four_letter::four_letter_word;
pub use hostile::{HUGE_ACL_ENTRIES, huge_acl_create};
pub use panic_message::panic_message;
pub use paths::unique;
pub use peer::{Peer, hello, reply_header};
pub use proxy::{CutAfter, Proxy};
pub use requests::{create, exists, get_data, set_data};
pub use serve_child::{listening_addr, spawn_serve, spawn_serve_draining};
pub use servers::{
    TestServer, all_words_server, embedded, embedded_builder, real_zookeeper,
    real_zookeeper_server, secured_embedded, servers,
};
pub use tls_front::TlsFront;
pub use wait::{Hang, WAIT, bounded, try_within, wait_state, within};
