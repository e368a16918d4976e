//! The read commands: `ls`, `tree`, `get` and `stat`.
//!
//! Invariant: each sends one request (`tree` one per node, many in flight) and changes
//! nothing on the server.

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
    pub path: String,
    /// Print the node's stat after its children.
    #[arg(long, short = 's')]
    pub stat: bool,
}

/// `shepherd tree PATH`.
#[derive(Args, Debug)]
pub struct TreeArgs {
    /// The root of the subtree to show.
    #[arg(default_value = "/")]
    pub path: String,
}

/// `shepherd get PATH`.
#[derive(Args, Debug)]
pub struct GetArgs {
    /// The node to read.
    pub path: String,
    /// Print the node's stat after its data.
    #[arg(long, short = 's')]
    pub stat: bool,
}

/// `shepherd stat PATH`.
#[derive(Args, Debug)]
pub struct StatArgs {
    /// The node whose stat to print.
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
}

/// Draws the subtree (`/zookeeper` included), or prints one JSON line per node.
pub async fn tree(client: &Client, args: &TreeArgs, out: &mut Out) -> Result<(), CliError> {
    let nodes = walk(client, &args.path, false).await?;
    if out.json {
        for node in &nodes {
            out.json_line(&TreeJson {
                path: &node.path,
                children: &node.children,
            })?;
        }
        return Ok(());
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
        out.line(format!("{}{branch}{}", drawn.prefix, drawn.name))?;
        let prefix = format!("{}{indent}", drawn.prefix);
        push_children(&mut stack, &by_path, &drawn.path, &prefix);
    }
    Ok(())
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
