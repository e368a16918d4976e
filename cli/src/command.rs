//! The command line itself: what `shepherd` accepts ([`Cli`]) and the dispatch to `serve`, the
//! client commands, `tls` and `datadir`. The library owns it, not the binary, so that every
//! way of starting the command (the binary, the Python package's console script) parses and
//! runs the same code.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::commands;
use crate::logging;
use crate::serve::{ServeArgs, serve};

#[derive(Parser)]
#[command(
    name = "shepherd",
    version,
    about = "A ZooKeeper-compatible coordination server"
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) log: logging::LogOptions,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run a standalone ZooKeeper-compatible server: in memory, or durable with --data-dir.
    Serve(ServeArgs),
    /// TLS helpers: `shepherd tls make-test-certs DIR` writes throw-away test certificates.
    Tls {
        #[command(subcommand)]
        tls: commands::tls::TlsCommand,
    },
    /// Data directory tools: `check DIR` says whether a server would start from it and why
    /// not; `repair DIR --truncate-after ZXID` cuts a damaged log, keeping a copy of what goes.
    Datadir {
        #[command(subcommand)]
        datadir: commands::datadir::DatadirCommand,
    },
    /// An interactive session with zkCli's command names, history and Tab completion of paths
    /// (what `zkCli.sh` gives without a command).
    Shell(commands::shell::ShellArgs),
    #[command(flatten)]
    Client(Box<commands::ClientCommand>),
}

/// Runs the `shepherd` command with `args` (the program's name first, as `std::env::args_os`
/// gives them) and returns its exit code: the binary and the Python package's console script
/// both call this, so they are one command.
///
/// A usage error prints clap's message and returns 2; `--help` and `--version` print and
/// return 0. Never exits the process itself.
pub fn run<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
        }
    };
    let default_level = match cli.command {
        Command::Serve(_) => "info",
        // A client command prints its own errors; the client's logs would only repeat them.
        Command::Client(_) | Command::Shell(_) => "error",
        Command::Tls { .. } | Command::Datadir { .. } => "warn",
    };
    logging::init(cli.log.format, default_level);
    match cli.command {
        Command::Serve(args) => serve(args),
        Command::Client(command) => commands::main(&command),
        Command::Shell(args) => commands::shell(&args),
        Command::Tls { tls } => commands::tls::main(&tls),
        Command::Datadir { datadir } => commands::datadir::main(&datadir),
    }
}
