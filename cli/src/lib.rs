//! What the `shepherd` command shares with the `shepherd-bench` command: where log lines go and
//! in what shape ([`logging`]), progress bars on a terminal ([`progress`]), the tokio runtimes
//! they run on ([`runtime`]), and where the `shepherd` binary is ([`binary`]). The commands
//! themselves are the package's binary.

pub mod binary;
pub mod logging;
pub mod progress;
pub mod runtime;
