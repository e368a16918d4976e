//! The client commands of the `shepherd` binary (`ls`, `tree`, `get`, `stat`, `create`, `set`,
//! `delete`, `getacl`, `setacl`, `addauth`, `watch`, `dump`, `load`, `locks`), against any
//! ZooKeeper through `shepherd-client`.
//!
//! Invariants: one command is one session ([`connection`]): connect, a few requests (many in
//! flight for the ones that walk a tree), close; nothing is retried. Output goes to stdout, as
//! text for people or JSON with `--json`; errors go to stderr as `error: <JavaName>: <path>`.
//! Exit codes: 0 success, 1 a ZooKeeper error (or no ZooKeeper to talk to), 2 a usage error
//! (clap's own, or a bad ACL, credential, file or dump line).

mod access;
mod acl;
mod client_command;
mod connection;
pub mod datadir;
mod dump;
mod error;
mod load;
mod locks;
mod output;
mod read;
mod security;
pub mod shell;
pub mod tls;
mod wait;
mod walk;
mod watch;
mod write;
mod znode_path;

use std::process::ExitCode;

use crate::runtime::{self, Threads};

pub use client_command::{ClientCommand, main};
pub use connection::Conn;

/// Runs `shepherd shell` to its exit code.
pub fn shell(args: &shell::ShellArgs) -> ExitCode {
    // One worker: the session's pings go on while the user types.
    let Some(runtime) = runtime::start_or_report(Threads::Workers(Some(1)), "the runtime") else {
        return ExitCode::FAILURE;
    };
    match shell::main(args, &runtime) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            error.exit_code()
        }
    }
}
