//! Shepherd: a ZooKeeper-compatible coordination server you can embed in any process, and a
//! library of distributed lock recipes.
//!
//! This facade re-exports the workspace's public crates so that users depend on one name.

pub use shepherd_protocol as protocol;
