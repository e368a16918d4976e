//! The `shepherd` command ([`run`]: `serve`, the client commands, `tls`, `datadir`), and what the
//! `shepherd-bench` command shares with it: where log lines go and in what shape
//! ([`logging`]), progress bars on a terminal ([`progress`]), the tokio runtimes they run on
//! ([`runtime`]), where the `shepherd` binary is ([`binary`]), and how a started
//! `shepherd serve --ready-json` says where it listens ([`ready`]). The binary is one call to
//! [`run`], so any other launcher of the command (the Python package) runs the same code.

pub mod binary;
mod command;
mod commands;
pub mod logging;
pub mod progress;
pub mod ready;
pub mod runtime;
mod serve;
mod shutdown;

pub use command::run;
