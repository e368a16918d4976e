//! The read commands: `ls`, `tree`, `get` and `stat`.
//!
//! Invariant: each sends one request (`tree` and `ls -R` one per node, many in flight) and
//! changes nothing on the server. A node ZooKeeper refuses to list is shown, marked with the
//! refusal, and the walk goes on; the command then ends with exit 1 and the count.

use std::collections::HashMap;

use clap::Args;
use serde::Serialize;
use shepherd_client::Client;

use super::error::{AtPath, CliError};
use super::output::{Data, Out, StatJson, write_stat};
use super::walk::{self, walk};

/// `shepherd ls PATH`.
#[derive(Args, Debug)]
pub struct LsArgs {
    /// The node whose children to list.
    #[arg(value_parser = super::znode_path::parse)]
    pub path: String,
    /// Print the node's stat after its children.
    #[arg(long, short = 's', conflicts_with = "recursive")]
    pub stat: bool,
    /// Every path of the subtree, the node itself first, one a line (zkCli's `ls -R`).
    #[arg(long, short = 'R')]
    pub recursive: bool,
}

/// `shepherd tree PATH`.
#[derive(Args, Debug)]
pub struct TreeArgs {
    /// The root of the subtree to show.
    #[arg(default_value = "/", value_parser = super::znode_path::parse)]
    pub path: String,
}

/// `shepherd get PATH`.
#[derive(Args, Debug)]
pub struct GetArgs {
    /// The node to read.
    #[arg(value_parser = super::znode_path::parse)]
    pub path: String,
    /// Print the node's stat after its data.
    #[arg(long, short = 's')]
    pub stat: bool,
}

/// `shepherd stat PATH`.
#[derive(Args, Debug)]
pub struct StatArgs {
    /// The node whose stat to print.
    #[arg(value_parser = super::znode_path::parse)]
    pub path: String,
}

#[derive(Serialize)]
struct LsJson<'a> {
    path: &'a str,
    children: &'a [String],
    stat: StatJson,
}

/// Lists the children, sorted, one a line.
pub async fn ls(client: &Client, args: &LsArgs, out: &mut Out) -> Result<(), CliError> {
    if args.recursive {
        return ls_recursive(client, &args.path, out).await;
    }
    let (mut children, stat) = client
        .get_children_with_stat(&args.path)
        .await
        .at(&args.path)?;
    children.sort();
    if out.json {
        return out.json_line(&LsJson {
            path: &args.path,
            children: &children,
            stat: StatJson::from(&stat),
        });
    }
    for child in &children {
        out.line(child)?;
    }
    if args.stat {
        write_stat(out, &stat)?;
    }
    Ok(())
}

#[derive(Serialize)]
struct TreeJson<'a> {
    path: &'a str,
    children: &'a [String],
    /// ZooKeeper's refusal to list the node (`NoAuth`); absent when it was listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'static str>,
}

impl<'a> From<&'a walk::Node> for TreeJson<'a> {
    fn from(node: &'a walk::Node) -> Self {
        TreeJson {
            path: &node.path,
            children: &node.children,
            error: node.refused.map(|code| code.name()),
        }
    }
}

/// The mark after a node that could not be listed: `  [NoAuth: not listed]`.
fn refusal_mark(node: Option<&walk::Node>) -> String {
    match node.and_then(|n| n.refused) {
        Some(code) => format!("  [{}: not listed]", code.name()),
        None => String::new(),
    }
}

/// Counts the walk's refused nodes; the command's end result.
fn unreadable(nodes: &[walk::Node]) -> walk::Unreadable {
    let mut unreadable = walk::Unreadable::default();
    for node in nodes {
        if let Some(code) = node.refused {
            unreadable.add(code, &node.path);
        }
    }
    unreadable
}

/// `ls -R`: every path of the subtree in pre-order, refused ones marked, or a JSON line each.
async fn ls_recursive(client: &Client, root: &str, out: &mut Out) -> Result<(), CliError> {
    let nodes = walk(client, root, false).await?;
    for node in &nodes {
        if out.json {
            out.json_line(&TreeJson::from(node))?;
        } else {
            out.line(format!("{}{}", node.path, refusal_mark(Some(node))))?;
        }
    }
    unreadable(&nodes).finish()
}

/// Draws the subtree (`/zookeeper` included), or prints one JSON line per node.
pub async fn tree(client: &Client, args: &TreeArgs, out: &mut Out) -> Result<(), CliError> {
    let nodes = walk(client, &args.path, false).await?;
    if out.json {
        for node in &nodes {
            out.json_line(&TreeJson::from(node))?;
        }
        return unreadable(&nodes).finish();
    }
    let by_path: HashMap<&str, &walk::Node> = nodes.iter().map(|n| (n.path.as_str(), n)).collect();
    out.line(&args.path)?;
    // Depth first with an explicit stack (no recursion: a deep tree must not overflow ours).
    let mut stack: Vec<Drawn> = Vec::new();
    push_children(&mut stack, &by_path, &args.path, "");
    while let Some(drawn) = stack.pop() {
        let (branch, indent) = if drawn.last {
            ("└── ", "    ")
        } else {
            ("├── ", "│   ")
        };
        let mark = refusal_mark(by_path.get(drawn.path.as_str()).copied());
        out.line(format!("{}{branch}{}{mark}", drawn.prefix, drawn.name))?;
        let prefix = format!("{}{indent}", drawn.prefix);
        push_children(&mut stack, &by_path, &drawn.path, &prefix);
    }
    unreadable(&nodes).finish()
}

/// A node still to draw: its path and name, the prefix drawn before it, and whether it is its
/// parent's last child.
struct Drawn {
    path: String,
    name: String,
    prefix: String,
    last: bool,
}

/// Pushes the children of `path` so that the first is popped first.
fn push_children(
    stack: &mut Vec<Drawn>,
    by_path: &HashMap<&str, &walk::Node>,
    path: &str,
    prefix: &str,
) {
    // A child deleted during the walk is not in the map: it is drawn as a leaf.
    if let Some(node) = by_path.get(path) {
        let count = node.children.len();
        for (i, name) in node.children.iter().enumerate().rev() {
            stack.push(Drawn {
                path: walk::join(path, name),
                name: name.clone(),
                prefix: prefix.to_owned(),
                last: i + 1 == count,
            });
        }
    }
}

#[derive(Serialize)]
struct NodeJson<'a> {
    path: &'a str,
    #[serde(flatten)]
    data: Data,
    stat: StatJson,
}

/// Prints the data as it is (then a newline), or as JSON (UTF-8 when it is, else base64).
pub async fn get(client: &Client, args: &GetArgs, out: &mut Out) -> Result<(), CliError> {
    let (data, stat) = client.get_data(&args.path).await.at(&args.path)?;
    if out.json {
        return out.json_line(&NodeJson {
            path: &args.path,
            data: Data::encode(&data, true),
            stat: StatJson::from(&stat),
        });
    }
    out.bytes(&data)?;
    out.line("")?;
    if args.stat {
        write_stat(out, &stat)?;
    }
    Ok(())
}

#[derive(Serialize)]
struct StatOnly<'a> {
    path: &'a str,
    stat: StatJson,
}

/// Prints the stat as zkCli does; `NoNode` for a missing node.
pub async fn stat(client: &Client, args: &StatArgs, out: &mut Out) -> Result<(), CliError> {
    let stat = client
        .exists(&args.path)
        .await
        .at(&args.path)?
        .ok_or_else(|| CliError::Keeper {
            error: shepherd_client::Error::Keeper(shepherd_client::ErrorCode::NoNode),
            path: args.path.clone(),
        })?;
    if out.json {
        out.json_line(&StatOnly {
            path: &args.path,
            stat: StatJson::from(&stat),
        })
    } else {
        write_stat(out, &stat)
    }
}
