//! The write commands: `create` (every mode), `set` and `delete` (recursive with `-r`).
//!
//! Invariants: a command changes only what it names (and, for `create --parents`, the missing
//! ancestors; for `delete -r`, the subtree); an ephemeral node lives as long as the command's
//! session, so `create -e` without `--hold` creates a node that is gone when the command
//! returns (useful in scripts only to test that it can be created).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use futures_util::{StreamExt, stream};
use serde::Serialize;
use shepherd_client::{Client, CreateMode, CreateOptions};

use super::acl::parse_acl;
use super::error::{AtPath, CliError};
use super::output::{Out, write_result};
use super::walk::{IN_FLIGHT, walk};

/// Where a write command's data comes from.
#[derive(Args, Debug)]
pub struct DataSource {
    /// The data, as text (empty if neither this nor --file is given).
    pub data: Option<String>,
    /// Read the data from this file instead (`-` for stdin), byte for byte.
    #[arg(long, short = 'f', value_name = "FILE", conflicts_with = "data")]
    pub file: Option<PathBuf>,
}

impl DataSource {
    /// The bytes to write.
    ///
    /// # Errors
    /// [`CliError::Usage`] when the file cannot be read.
    pub fn bytes(&self) -> Result<Vec<u8>, CliError> {
        match (&self.data, &self.file) {
            (Some(text), _) => Ok(text.clone().into_bytes()),
            (None, Some(file)) if file.as_os_str() == "-" => {
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)
                    .map_err(|e| CliError::Usage(format!("cannot read stdin: {e}")))?;
                Ok(bytes)
            }
            (None, Some(file)) => std::fs::read(file)
                .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", file.display()))),
            (None, None) => Ok(Vec::new()),
        }
    }
}

/// `shepherd create PATH [DATA]`.
#[derive(Args, Debug)]
pub struct CreateArgs {
    /// The node to create (the sequence suffix is appended with -s).
    pub path: String,
    #[command(flatten)]
    pub data: DataSource,
    /// Ephemeral: deleted when this command's session ends, i.e. when the command exits
    /// (keep it with --hold).
    #[arg(long, short = 'e', conflicts_with_all = ["container", "ttl"])]
    pub ephemeral: bool,
    /// Sequential: the server appends a 10-digit counter to the name.
    #[arg(long, short = 's')]
    pub sequential: bool,
    /// A container: removed by the server once its last child is gone.
    #[arg(long, short = 'c', conflicts_with_all = ["sequential", "ttl"])]
    pub container: bool,
    /// A TTL node: removed once childless and unmodified for this many milliseconds (the
    /// server must have extended types enabled).
    #[arg(long, short = 't', value_name = "MS")]
    pub ttl: Option<u64>,
    /// The ACL, as `scheme:id:perms[,…]` (default world:anyone:cdrwa).
    #[arg(long, value_name = "ACL")]
    pub acl: Option<String>,
    /// Create missing ancestors first, as persistent nodes.
    #[arg(long, short = 'p')]
    pub parents: bool,
    /// Keep the session (and so an ephemeral node) until Ctrl-C or SIGTERM.
    #[arg(long)]
    pub hold: bool,
}

impl CreateArgs {
    /// The create mode the flags ask for.
    fn mode(&self) -> CreateMode {
        match (self.ephemeral, self.sequential, self.container, self.ttl) {
            (true, true, ..) => CreateMode::EphemeralSequential,
            (true, false, ..) => CreateMode::Ephemeral,
            (_, _, true, _) => CreateMode::Container,
            (_, true, _, Some(_)) => CreateMode::PersistentSequentialWithTTL,
            (_, false, _, Some(_)) => CreateMode::PersistentWithTTL,
            (_, true, _, None) => CreateMode::PersistentSequential,
            _ => CreateMode::Persistent,
        }
    }
}

/// Creates the node and prints its path (`Created /a0000000001`).
pub async fn create(client: &Client, args: &CreateArgs, out: &mut Out) -> Result<(), CliError> {
    super::znode_path::check(&args.path, args.sequential).map_err(CliError::Usage)?;
    let data = args.data.bytes()?;
    let mut options = CreateOptions::new(args.mode());
    if let Some(acl) = &args.acl {
        options = options.with_acl(parse_acl(acl).map_err(CliError::Usage)?);
    }
    if let Some(ttl) = args.ttl {
        options = options.with_ttl(Duration::from_millis(ttl));
    }
    if args.parents {
        create_ancestors(client, &args.path).await?;
    }
    let (path, stat) = client
        .create(&args.path, &data, &options)
        .await
        .at(&args.path)?;
    // With --hold, the handlers go in before the `Created` line: whoever waits for that line
    // may signal at once, and the signal must end the session cleanly, not kill the process.
    let stop = args.hold.then(super::wait::stop_signal).transpose()?;
    if out.json {
        write_result(out, &path, &stat, false)?;
    } else {
        out.line(format!("Created {path}"))?;
    }
    if let Some(stop) = stop {
        out.flush()?;
        eprintln!("holding the session; Ctrl-C to end it");
        super::wait::hold(client, stop).await?;
    }
    Ok(())
}

/// Creates every missing ancestor of `path` as a persistent node, top down.
async fn create_ancestors(client: &Client, path: &str) -> Result<(), CliError> {
    let mut ancestor = String::new();
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    for part in parts.iter().take(parts.len().saturating_sub(1)) {
        ancestor.push('/');
        ancestor.push_str(part);
        match client
            .create(&ancestor, b"", &CreateOptions::persistent())
            .await
        {
            Err(error) if !error.is_node_exists() => return Err(error).at(&ancestor),
            _ => {}
        }
    }
    Ok(())
}

/// `shepherd set PATH [DATA]`.
#[derive(Args, Debug)]
pub struct SetArgs {
    /// The node to write.
    #[arg(value_parser = super::znode_path::parse)]
    pub path: String,
    #[command(flatten)]
    pub data: DataSource,
    /// Write only if the data version is this one (BadVersion otherwise).
    #[arg(long, short = 'v', allow_negative_numbers = true)]
    pub version: Option<i32>,
    /// Print the new stat.
    #[arg(long, short = 's')]
    pub stat: bool,
}

/// Replaces the data; prints nothing unless asked (`-s`, `--json`).
pub async fn set(client: &Client, args: &SetArgs, out: &mut Out) -> Result<(), CliError> {
    let data = args.data.bytes()?;
    let stat = client
        .set_data(&args.path, &data, args.version)
        .await
        .at(&args.path)?;
    write_result(out, &args.path, &stat, args.stat)
}

/// `shepherd delete PATH`.
#[derive(Args, Debug)]
pub struct DeleteArgs {
    /// The node to delete.
    #[arg(value_parser = super::znode_path::parse)]
    pub path: String,
    /// Delete only if the data version is this one (BadVersion otherwise).
    #[arg(
        long,
        short = 'v',
        allow_negative_numbers = true,
        conflicts_with = "recursive"
    )]
    pub version: Option<i32>,
    /// Delete the whole subtree, children first (never `/zookeeper`, nor `/` itself).
    #[arg(long, short = 'r')]
    pub recursive: bool,
}

#[derive(Serialize)]
struct Deleted<'a> {
    path: &'a str,
    deleted: usize,
}

/// Deletes the node (or its subtree); prints nothing, or the count as JSON.
pub async fn delete(client: &Client, args: &DeleteArgs, out: &mut Out) -> Result<(), CliError> {
    let deleted = if args.recursive {
        delete_tree(client, &args.path).await?
    } else {
        client
            .delete(&args.path, args.version)
            .await
            .at(&args.path)?;
        1
    };
    if out.json {
        out.json_line(&Deleted {
            path: &args.path,
            deleted,
        })?;
    }
    Ok(())
}

/// Deletes a subtree, deepest level first, many deletes in flight; returns how many nodes it
/// deleted. A node already gone is not an error; one that gained a child meanwhile is
/// (`NotEmpty`).
async fn delete_tree(client: &Client, root: &str) -> Result<usize, CliError> {
    let skip_system = client.chroot().is_none();
    let nodes = walk(client, root, skip_system).await?;
    // A subtree that cannot be listed whole cannot be deleted whole: refuse before deleting.
    if let Some(node) = nodes.iter().find(|node| node.refused.is_some()) {
        let code = node.refused.expect("found by it");
        return Err(shepherd_client::Error::Keeper(code)).at(&node.path);
    }
    let mut paths: Vec<String> = nodes
        .into_iter()
        .map(|node| node.path)
        .filter(|path| path != "/")
        .collect();
    // Deepest first; within a depth any order, since none is another's parent.
    paths.sort_by_key(|path| std::cmp::Reverse(path.matches('/').count()));
    let mut deleted = 0;
    let mut start = 0;
    while start < paths.len() {
        let depth = paths[start].matches('/').count();
        let end = paths[start..]
            .iter()
            .position(|p| p.matches('/').count() != depth)
            .map_or(paths.len(), |n| start + n);
        let results: Vec<(&String, Result<(), shepherd_client::Error>)> =
            stream::iter(&paths[start..end])
                .map(|path| async move { (path, client.delete(path, None).await) })
                .buffered(IN_FLIGHT)
                .collect()
                .await;
        for (path, result) in results {
            match result {
                Ok(()) => deleted += 1,
                Err(error) if error.is_no_node() => {}
                Err(error) => return Err(error).at(path),
            }
        }
        start = end;
    }
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        create: CreateArgs,
    }

    fn mode(args: &[&str]) -> CreateMode {
        let mut argv = vec!["create", "/x"];
        argv.extend_from_slice(args);
        Wrap::try_parse_from(argv).unwrap().create.mode()
    }

    #[test]
    fn flags_pick_every_create_mode() {
        assert_eq!(mode(&[]), CreateMode::Persistent);
        assert_eq!(mode(&["-e"]), CreateMode::Ephemeral);
        assert_eq!(mode(&["-e", "-s"]), CreateMode::EphemeralSequential);
        assert_eq!(mode(&["-s"]), CreateMode::PersistentSequential);
        assert_eq!(mode(&["-c"]), CreateMode::Container);
        assert_eq!(mode(&["-t", "500"]), CreateMode::PersistentWithTTL);
        assert_eq!(
            mode(&["-s", "--ttl", "500"]),
            CreateMode::PersistentSequentialWithTTL
        );
        for bad in [&["-e", "-c"][..], &["-c", "-s"], &["-e", "-t", "5"]] {
            let mut argv = vec!["create", "/x"];
            argv.extend_from_slice(bad);
            assert!(Wrap::try_parse_from(argv).is_err(), "{bad:?}");
        }
    }
}
