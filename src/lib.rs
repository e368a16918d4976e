//! Shepherd: a ZooKeeper-compatible coordination server you can embed in any process, and a
//! library of distributed lock recipes.
//!
//! This facade re-exports the workspace's public crates so that users depend on one name:
//! [`protocol`] (the sans-IO wire codec) and [`server`] (the embeddable server).

pub use shepherd_protocol as protocol;
pub use shepherd_server as server;
pub use shepherd_server::{Server, ServerBuilder, ServerHandle};
