//! `shepherd bench …`: measurements against a live server: the herd effect of the lock
//! recipes, throughput and latency under load, and memory per node and per session.

pub mod connect;
pub mod herd;
pub mod load;
pub mod scale;
pub mod soak;
pub mod target;

use clap::Subcommand;

/// The benchmarks `shepherd bench` runs.
#[derive(Subcommand, Debug)]
pub enum Bench {
    /// The herd effect: notifications and getChildren calls per lock hand-off, for every lock
    /// recipe, as the number of contenders grows.
    Herd(herd::HerdArgs),
    /// The cost of a new session on a fresh connection, over plain TCP and TLS 1.3 (with and
    /// without a client certificate): connects per second and latency, one at a time and in
    /// parallel.
    Connect(connect::ConnectArgs),
    /// Throughput and latency: N sessions, W requests in flight each, through create, set,
    /// get and delete over K nodes; closed loop, or open loop at a fixed rate.
    Load(load::LoadArgs),
    /// Memory per znode and per idle session, from the server process's resident set size.
    Scale(scale::ScaleArgs),
}
