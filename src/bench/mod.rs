//! `shepherd bench …`: measurements of the lock recipes against a live server.

pub mod herd;

use clap::Subcommand;

/// The benchmarks `shepherd bench` runs.
#[derive(Subcommand, Debug)]
pub enum Bench {
    /// The herd effect: notifications and getChildren calls per lock hand-off, for every lock
    /// recipe, as the number of contenders grows.
    Herd(herd::HerdArgs),
}
