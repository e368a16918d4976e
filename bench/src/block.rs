//! The runtime of a subcommand whose whole measurement is one future: started, run to the end,
//! and its error printed under the subcommand's name.

use std::future::Future;
use std::process::ExitCode;

use shepherd_cli::runtime::{self, Threads};

use crate::error::Result;

/// Runs `measurement` on a new client runtime of `threads`. On any error (the runtime cannot
/// start, or the measurement fails) prints `NAME: ERROR` and gives the exit code.
pub fn run<T>(
    name: &str,
    threads: Threads,
    measurement: impl Future<Output = Result<T>>,
) -> std::result::Result<T, ExitCode> {
    let runtime = runtime::start(threads).map_err(|error| {
        eprintln!("{name}: cannot start the client runtime: {error}");
        ExitCode::FAILURE
    })?;
    runtime.block_on(measurement).map_err(|error| {
        eprintln!("{name}: {error}");
        ExitCode::FAILURE
    })
}
