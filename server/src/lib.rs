//! A ZooKeeper 3.8-compatible coordination server that runs inside any process.
//!
//! Start one on a free port in milliseconds, point any ZooKeeper client at
//! [`Server::connect_string`], and shut it down when the test ends:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let server = shepherd_server::Server::builder().start().await?;
//! println!("ZooKeeper at {}", server.connect_string());
//! server.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! The crate has two halves. [`core`] is deterministic: the znode tree, sessions, watches and
//! the application of requests, with time passed in. The shell ([`ServerBuilder`], the running
//! [`Server`] and its two faces, [`Controls`] and [`Members`]) is a thin tokio layer of sockets, framing, a clock and
//! four-letter words around it. Besides its TCP listener, a server serves any byte stream handed
//! to [`Server::serve_io`], so that wire tests can run over `tokio::io::duplex`.

pub mod config;
mod shell;
pub use shell::tls;
pub use shepherd_zk_core as core;
pub use shepherd_zk_storage as storage;

pub use config::{Config, Durability, FourLetterWhitelist};
/// The memory of a test-only broken mode ([`Fault::StaleRead`]).
#[doc(hidden)]
pub use shell::StaleReads;
pub use shell::{
    ConnStats, ControlError, Controls, Fault, FaultId, FaultRule, FaultTimes, MAX_MEMBERS,
    MemberState, Members, Server, ServerBuilder, ServerStats,
};
