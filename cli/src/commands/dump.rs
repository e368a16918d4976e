//! `shepherd dump PATH`: a subtree as JSON lines, one node a line, parents first, for `load`,
//! for diffing two servers, or for reading.
//!
//! Invariants: the lines are in pre-order with sorted siblings (so `load` can create them in
//! that order); `/` itself and ZooKeeper's `/zookeeper` subtree are left out, since neither can
//! be created; a node deleted during the dump is left out; data is base64 unless `--utf8` is
//! given and the data is valid UTF-8 (`encoding` says which). What a dump cannot see: a
//! container or TTL node reads as persistent (ZooKeeper masks the kind in the stat it sends,
//! `ephemeralOwner` 0, and no request reveals it), so `kind` and `ttl`, which `load` honours,
//! are only in lines a person or a program wrote; digest ids read without ADMIN permission are
//! masked by the server. A node ZooKeeper
//! refuses to list or read is left out, counted, and reported at the end (exit 1): the dump
//! holds everything that could be read.

use clap::Args;
use futures_util::{StreamExt, stream};
use serde::{Deserialize, Serialize};
use shepherd_client::Client;

use super::acl::AclJson;
use super::error::{AtPath, CliError};
use super::output::{Data, Out, StatJson};
use super::walk::{IN_FLIGHT, Node, Unreadable, is_system, walk};

/// `shepherd dump PATH`.
#[derive(Args, Debug)]
pub struct DumpArgs {
    /// The root of the subtree to dump.
    #[arg(default_value = "/", value_parser = super::znode_path::parse)]
    pub path: String,
    /// Write data that is valid UTF-8 as text rather than base64.
    #[arg(long)]
    pub utf8: bool,
}

/// One line of a dump.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DumpLine {
    /// The node's path.
    pub path: String,
    /// Its data and how it is encoded.
    #[serde(flatten)]
    pub data: Data,
    /// Its stat when dumped (not restored by `load`: versions and times are the server's).
    pub stat: StatJson,
    /// Its ACL.
    pub acl: Vec<AclJson>,
    /// Whether a session owned it (`load` skips these, or makes them persistent).
    pub ephemeral: bool,
    /// A container or TTL node (absent: persistent); never written by `dump`, which cannot
    /// see it, but honoured by `load`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<NodeKind>,
    /// A TTL node's time to live, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
}

/// The kinds of persistent node a dump line can ask `load` for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    /// Removed by the server once its last child is gone.
    Container,
    /// Removed once childless and unmodified for `ttl` milliseconds.
    Ttl,
}

/// Writes the subtree's lines (always JSON, whatever `--json` says).
pub async fn dump(client: &Client, args: &DumpArgs, out: &mut Out) -> Result<(), CliError> {
    let skip_system = client.chroot().is_none();
    let nodes = walk(client, &args.path, skip_system).await?;
    // Neither `/` nor (without a chroot) `/zookeeper` is dumped, even as the walk's own root:
    // every server has them, so `load` could only fail on them.
    let dumped = |n: &&Node| n.path != "/" && !(skip_system && is_system(&n.path));
    let mut unreadable = Unreadable::default();
    for node in nodes.iter().filter(dumped) {
        if let Some(code) = node.refused {
            unreadable.add(code, &node.path);
        }
    }
    let mut lines = stream::iter(nodes.iter().filter(dumped).filter(|n| n.refused.is_none()))
        .map(|node| async move {
            let (data, acl) = tokio::join!(client.get_data(&node.path), client.get_acl(&node.path));
            (node, data, acl)
        })
        .buffered(IN_FLIGHT);
    while let Some((node, data, acl)) = lines.next().await {
        let ((data, stat), (acl, _)) = match (data, acl) {
            (Ok(data), Ok(acl)) => (data, acl),
            // Deleted since the walk: it is no longer part of the tree.
            (Err(e), _) | (_, Err(e)) if e.is_no_node() => continue,
            (Err(shepherd_client::Error::Keeper(code)), _)
            | (_, Err(shepherd_client::Error::Keeper(code))) => {
                unreadable.add(code, &node.path);
                continue;
            }
            (Err(e), _) | (_, Err(e)) => return Err(e).at(&node.path),
        };
        out.json_line(&DumpLine {
            path: node.path.clone(),
            data: Data::encode(&data, args.utf8),
            stat: StatJson::from(&stat),
            acl: acl.iter().map(AclJson::from).collect(),
            ephemeral: stat.ephemeral_owner != 0,
            kind: None,
            ttl: None,
        })?;
    }
    unreadable.finish()
}
