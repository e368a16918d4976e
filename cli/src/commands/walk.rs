//! [`walk`]: every node of a subtree with its children, read with many getChildren requests in
//! flight at once, for `tree`, `dump`, `delete -r` and `locks`.
//!
//! Invariants: the result is in pre-order with siblings sorted by name (a parent before its
//! children, as `load` needs them); a node deleted while the walk runs is left out, not an
//! error; ZooKeeper's own `/zookeeper` subtree is left out when asked (it can be neither
//! dumped nor deleted); the walk stops with an error past [`MAX_NODES`], so that its memory
//! is bounded whatever the server holds.

use futures_util::{StreamExt, stream};
use shepherd_client::Client;

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
    /// Its children's names, sorted.
    pub children: Vec<String>,
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
/// `NoNode` (and any other failure) for `root` itself; any failure but `NoNode` below it; a
/// [`CliError::Usage`] past [`MAX_NODES`] nodes.
pub async fn walk(client: &Client, root: &str, skip_system: bool) -> Result<Vec<Node>, CliError> {
    let mut children = client.get_children(root).await.at(root)?;
    children.sort();
    let mut nodes = vec![Node {
        path: root.to_owned(),
        children,
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
            let mut children = match children {
                Ok(children) => children,
                Err(error) if error.is_no_node() => continue,
                Err(error) => return Err(error).at(&path),
            };
            children.sort();
            let node = Node { path, children };
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
