//! `shepherd bench …`: measurements against a live server: the herd effect of the lock
//! recipes, throughput and latency under load, and memory per node and per session.

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
    /// Throughput and latency: N sessions, W requests in flight each, through create, set,
    /// get and delete over K nodes; closed loop, or open loop at a fixed rate.
    Load(load::LoadArgs),
    /// Memory per znode and per idle session, from the server process's resident set size.
    Scale(scale::ScaleArgs),
}
