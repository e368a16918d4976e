//! What the `shepherd` command shares with the `shepherd-bench` command: where log lines go and
//! in what shape ([`logging`]), and progress bars on a terminal ([`progress`]). The commands
//! themselves are the package's binary.

pub mod logging;
pub mod progress;
