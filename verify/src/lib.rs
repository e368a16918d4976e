//! Shepherd's verification: the runs that judge the server against what a coordination service
//! must guarantee, apart from the test support they use (`shepherd-testkit`), so that no other
//! crate's test build compiles them.
//!
//! * [`oracle`]: the differential oracle against real ZooKeeper, run by the `oracle` binary.
//! * [`proof`]: workloads against a server under a nemesis, their recorded histories and the
//!   checkers that judge them, run by the `proof` binary and by this crate's tests.
//!
//! The `curator_fleet` binary is the Rust side of the lock interoperability run against
//! Apache Curator (`.ci/curator.sh`).
//!
//! This crate is never published. It panics freely: a failed setup step is a failed run.

pub mod oracle;
pub mod proof;
