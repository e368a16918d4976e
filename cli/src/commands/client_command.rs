//! [`ClientCommand`]: every client command with its options, and [`main`], which runs one in a
//! session of its own to an exit code. Apart from `mod.rs` so that `shell` can run the same
//! commands line by line without depending on the module that starts the shell.

use std::process::ExitCode;

use clap::Subcommand;
use shepherd_client::Client;

use super::connection::Conn;
use super::error::{AtPath, CliError};
use super::output::Out;
use super::{access, dump, load, locks, read, watch, write};
use crate::runtime::{self, Threads};

/// A client command and its options.
#[derive(Subcommand, Debug)]
pub enum ClientCommand {
    /// List a node's children.
    Ls(With<read::LsArgs>),
    /// Draw a subtree.
    Tree(With<read::TreeArgs>),
    /// Print a node's data.
    Get(With<read::GetArgs>),
    /// Print a node's stat.
    Stat(With<read::StatArgs>),
    /// Create a node: persistent, ephemeral (-e, lives as long as this command: see --hold),
    /// sequential (-s), container (-c) or TTL (-t).
    Create(With<write::CreateArgs>),
    /// Replace a node's data.
    Set(With<write::SetArgs>),
    /// Delete a node, or a subtree with -r.
    Delete(With<write::DeleteArgs>),
    /// Print a node's ACL.
    #[command(name = "getacl")]
    GetAcl(With<access::GetAclArgs>),
    /// Replace a node's ACL.
    #[command(name = "setacl")]
    SetAcl(With<access::SetAclArgs>),
    /// Add a credential to this command's session and print its identities. A credential
    /// lasts as long as its session: to use one, give `--auth scheme:auth` to the command
    /// that needs it.
    #[command(name = "addauth")]
    AddAuth(With<access::AddAuthArgs>),
    /// Print a node's events (its subtree's with -R) until Ctrl-C.
    Watch(With<watch::WatchArgs>),
    /// Write a subtree as JSON lines (path, data, stat, ACL, ephemeral flag), parents first.
    Dump(With<dump::DumpArgs>),
    /// Create the nodes of a dump (from `shepherd dump`), parents first.
    Load(With<load::LoadArgs>),
    /// Show the lock nodes under a path: per lock, the holder and the waiters in order, with
    /// their recipe and owning session.
    Locks(With<locks::LocksArgs>),
}

/// A command's own arguments, with the options every client command shares.
#[derive(clap::Args, Debug)]
pub struct With<A: clap::Args> {
    #[command(flatten)]
    args: A,
    #[command(flatten)]
    conn: Conn,
}

impl ClientCommand {
    /// The shared options.
    fn conn(&self) -> &Conn {
        match self {
            ClientCommand::Ls(c) => &c.conn,
            ClientCommand::Tree(c) => &c.conn,
            ClientCommand::Get(c) => &c.conn,
            ClientCommand::Stat(c) => &c.conn,
            ClientCommand::Create(c) => &c.conn,
            ClientCommand::Set(c) => &c.conn,
            ClientCommand::Delete(c) => &c.conn,
            ClientCommand::GetAcl(c) => &c.conn,
            ClientCommand::SetAcl(c) => &c.conn,
            ClientCommand::AddAuth(c) => &c.conn,
            ClientCommand::Watch(c) => &c.conn,
            ClientCommand::Dump(c) => &c.conn,
            ClientCommand::Load(c) => &c.conn,
            ClientCommand::Locks(c) => &c.conn,
        }
    }

    /// Whether the command waits for a signal once done (`create --hold`).
    pub(super) fn holds(&self) -> bool {
        matches!(self, ClientCommand::Create(c) if c.args.hold)
    }

    /// Runs the command in an open session.
    pub(super) async fn run(&self, client: &Client, out: &mut Out) -> Result<(), CliError> {
        match self {
            ClientCommand::Ls(c) => read::ls(client, &c.args, out).await,
            ClientCommand::Tree(c) => read::tree(client, &c.args, out).await,
            ClientCommand::Get(c) => read::get(client, &c.args, out).await,
            ClientCommand::Stat(c) => read::stat(client, &c.args, out).await,
            ClientCommand::Create(c) => write::create(client, &c.args, out).await,
            ClientCommand::Set(c) => write::set(client, &c.args, out).await,
            ClientCommand::Delete(c) => write::delete(client, &c.args, out).await,
            ClientCommand::GetAcl(c) => access::getacl(client, &c.args, out).await,
            ClientCommand::SetAcl(c) => access::setacl(client, &c.args, out).await,
            ClientCommand::AddAuth(c) => access::addauth(client, &c.args, out).await,
            ClientCommand::Watch(c) => watch::watch(client, &c.args, out).await,
            ClientCommand::Dump(c) => dump::dump(client, &c.args, out).await,
            ClientCommand::Load(c) => load::load(client, &c.args, out).await,
            ClientCommand::Locks(c) => locks::locks(client, &c.args, out).await,
        }
    }
}

/// Runs a client command to its exit code, printing its error (if any) on stderr.
pub fn main(command: &ClientCommand) -> ExitCode {
    // One thread: a command is a handful of requests, and a runtime of one starts fastest.
    let Some(runtime) = runtime::start_or_report(Threads::Current, "the runtime") else {
        return ExitCode::FAILURE;
    };
    let mut out = Out::new(command.conn().json);
    let mut hint = None;
    let result = runtime.block_on(async {
        let client = command.conn().connect().await?;
        let result = command.run(&client, &mut out).await;
        if let Err(error) = &result {
            hint = explain(&client, command, error).await;
        }
        // Close whatever happened, so that ephemerals go now rather than at session expiry;
        // the command's own error, if any, is the one worth reporting.
        let closed = client.close().await.at("");
        result.and(closed)
    });
    let result = result.and_then(|()| out.flush());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            if !matches!(error, CliError::ClosedOutput) {
                eprintln!("error: {error}");
            }
            if let Some(hint) = hint {
                eprintln!("hint: {hint}");
            }
            error.exit_code()
        }
    }
}

/// A second line for an error whose bare name misleads: `Unimplemented` for a TTL node on a
/// server without extended types, and `NoNode` when it is the connect string's chroot that is
/// missing, not the node. Asks the server at most once more; `None` when nothing is to add.
async fn explain(client: &Client, command: &ClientCommand, error: &CliError) -> Option<String> {
    let CliError::Keeper {
        error: shepherd_client::Error::Keeper(code),
        ..
    } = error
    else {
        return None;
    };
    match (code, command) {
        (shepherd_client::ErrorCode::Unimplemented, ClientCommand::Create(c))
            if c.args.ttl.is_some() =>
        {
            Some(
                "this server has TTL nodes off: ZooKeeper turns them on with \
                 zookeeper.extendedTypesEnabled=true (a -D system property), Shepherd with \
                 extendedTypesEnabled=true in zoo.cfg or `shepherd serve --set`"
                    .to_owned(),
            )
        }
        (shepherd_client::ErrorCode::NoNode, _) => {
            let chroot = client.chroot()?;
            // Under a chroot, "/" is the chroot node itself.
            match client.exists("/").await {
                Ok(None) => Some(format!(
                    "the chroot {chroot} of --server does not exist: create it first \
                     (shepherd create {chroot} --server HOST:PORT)"
                )),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    #[derive(Parser)]
    struct Shepherd {
        #[command(subcommand)]
        command: ClientCommand,
    }

    #[test]
    fn every_command_parses_with_the_shared_options() {
        Shepherd::command().debug_assert();
        let parsed = Shepherd::try_parse_from([
            "shepherd",
            "create",
            "-e",
            "-s",
            "/a",
            "x",
            "--server",
            "h:1/app",
            "--auth",
            "digest:u:p",
            "--json",
        ])
        .unwrap();
        let conn = parsed.command.conn();
        assert_eq!(conn.server, "h:1/app");
        assert_eq!(conn.auth, ["digest:u:p"]);
        assert!(conn.json);
        let parsed = Shepherd::try_parse_from(["shepherd", "ls", "/"]).unwrap();
        assert_eq!(parsed.command.conn().server, "127.0.0.1:2181");
        assert!(Shepherd::try_parse_from(["shepherd", "delete", "-r", "-v", "1", "/a"]).is_err());
    }
}
