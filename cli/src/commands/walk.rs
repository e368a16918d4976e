//! [`walk`]: every node of a subtree with its children, read with many getChildren requests in
//! flight at once, for `tree`, `dump`, `delete -r` and `locks`.
//!
//! Invariants: the result is in pre-order with siblings sorted by name (a parent before its
//! children, as `load` needs them); a node deleted while the walk runs is left out, not an
//! error; a node below the root that ZooKeeper refuses to list (`NoAuth`) is kept, with its
//! refusal and no children, so that one unreadable node never blanks a whole command (each
//! command shows what it could read and [`Unreadable`] counts the rest); ZooKeeper's own
//! `/zookeeper` subtree is left out when asked (it can be neither dumped nor deleted); the walk
//! stops with an error past [`MAX_NODES`], so that its memory is bounded whatever the server
//! holds.

use futures_util::{StreamExt, stream};
use shepherd_client::Client;

use shepherd_client::ErrorCode;

use super::error::{AtPath, CliError};

/// The most nodes one walk reads.
pub const MAX_NODES: usize = 1_000_000;

/// Requests in flight at once: enough to hide the round trip, few enough to stay polite.
pub const IN_FLIGHT: usize = 64;

/// One node of a walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Its path.
    pub path: String,
    /// Its children's names, sorted (none when it could not be listed).
    pub children: Vec<String>,
    /// Why ZooKeeper refused to list it (`NoAuth`), if it did.
    pub refused: Option<ErrorCode>,
}

/// The nodes a command could not read: counted as it goes, reported once at its end as a
/// failure (exit 1) after everything readable was shown.
#[derive(Debug, Default)]
pub struct Unreadable {
    count: usize,
    first: Option<(ErrorCode, String)>,
}

impl Unreadable {
    /// Counts one node that ZooKeeper refused with `code`.
    pub fn add(&mut self, code: ErrorCode, path: &str) {
        self.count += 1;
        self.first.get_or_insert_with(|| (code, path.to_owned()));
    }

    /// Ok when every node was read; otherwise the error that ends the command.
    pub fn finish(self) -> Result<(), CliError> {
        match self.first {
            None => Ok(()),
            Some((code, path)) => Err(CliError::Partial {
                unreadable: self.count,
                first: CliError::Keeper {
                    error: shepherd_client::Error::Keeper(code),
                    path,
                }
                .to_string(),
            }),
        }
    }
}

/// `dir/name` (with `/` as the root).
pub fn join(dir: &str, name: &str) -> String {
    if dir == "/" {
        format!("/{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// Whether `path` is ZooKeeper's own `/zookeeper` or below it.
pub fn is_system(path: &str) -> bool {
    path == "/zookeeper" || path.starts_with("/zookeeper/")
}

/// Every node of the subtree at `root` (itself included), in pre-order with sorted siblings;
/// with `skip_system`, nothing under `/zookeeper`.
///
/// # Errors
/// `NoNode` (and any other failure) for `root` itself; below it, a failure of the session or
/// connection (a node ZooKeeper refuses is returned with [`Node::refused`] instead); a
/// [`CliError::Usage`] past [`MAX_NODES`] nodes.
pub async fn walk(client: &Client, root: &str, skip_system: bool) -> Result<Vec<Node>, CliError> {
    let mut children = client.get_children(root).await.at(root)?;
    children.sort();
    let mut nodes = vec![Node {
        path: root.to_owned(),
        children,
        refused: None,
    }];
    // Breadth first, a level at a time, many requests in flight; sorted into pre-order after.
    let mut level: Vec<String> = child_paths(&nodes[0], skip_system);
    while !level.is_empty() {
        if nodes.len() + level.len() > MAX_NODES {
            return Err(CliError::Usage(format!(
                "{root} has more than {MAX_NODES} nodes; walk a smaller subtree"
            )));
        }
        let read: Vec<(String, Result<Vec<String>, shepherd_client::Error>)> = stream::iter(level)
            .map(|path| async move {
                let children = client.get_children(&path).await;
                (path, children)
            })
            .buffered(IN_FLIGHT)
            .collect()
            .await;
        let mut next = Vec::new();
        for (path, children) in read {
            let (mut children, refused) = match children {
                Ok(children) => (children, None),
                Err(error) if error.is_no_node() => continue,
                // The server's answer for this node alone: keep it, marked, and go on.
                Err(shepherd_client::Error::Keeper(code)) => (Vec::new(), Some(code)),
                Err(error) => return Err(error).at(&path),
            };
            children.sort();
            let node = Node {
                path,
                children,
                refused,
            };
            next.extend(child_paths(&node, skip_system));
            nodes.push(node);
        }
        level = next;
    }
    nodes.sort_by(|a, b| a.path.split('/').cmp(b.path.split('/')));
    Ok(nodes)
}

/// The paths of a node's children, less `/zookeeper` when skipped.
fn child_paths(node: &Node, skip_system: bool) -> Vec<String> {
    node.children
        .iter()
        .map(|name| join(&node.path, name))
        .filter(|path| !(skip_system && is_system(path)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join_and_sort_into_pre_order() {
        assert_eq!(join("/", "a"), "/a");
        assert_eq!(join("/a", "b"), "/a/b");
        let mut paths = vec![
            "/a-x",
            "/a/b",
            "/",
            "/a",
            "/zookeeper/quota",
            "/a/b/c",
            "/b",
        ];
        paths.sort_by(|a, b| a.split('/').cmp(b.split('/')));
        assert_eq!(
            paths,
            [
                "/",
                "/a",
                "/a/b",
                "/a/b/c",
                "/a-x",
                "/b",
                "/zookeeper/quota"
            ]
        );
        assert!(is_system("/zookeeper") && is_system("/zookeeper/config"));
        assert!(!is_system("/zookeeperx"));
    }
}
