//! What the tests know about each [`LockKind`] beyond what the crate says: where its nodes
//! are and how to spot them, and a taking shorthand. Building and acquiring any kind is the
//! crate's own [`LockKind::build`].

use std::sync::Arc;

use shepherd_client::Client;
use shepherd_recipes::{AnyGuard, Lock, LockKind, LockStats};

/// Test-only knowledge of a lock kind.
pub trait KindExt: Copy + std::fmt::Debug {
    /// The folders holding this kind's lock nodes on `path`.
    fn dirs(self, path: &str) -> Vec<String>;

    /// A string in the path of this kind's (first) lock node and of no folder or other node
    /// it creates first.
    fn node_marker(self) -> &'static str;

    /// Takes the lock on `path`, counting into `stats`, waiting as long as it takes; panics
    /// on error.
    async fn take(self, c: &Client, path: &str, stats: &Arc<LockStats>) -> AnyGuard;
}

impl KindExt for LockKind {
    fn dirs(self, path: &str) -> Vec<String> {
        match self {
            LockKind::SemaphoreMutex => vec![format!("{path}/leases"), format!("{path}/locks")],
            LockKind::MultiLock => vec![format!("{path}/a"), format!("{path}/b")],
            _ => vec![path.to_owned()],
        }
    }

    fn node_marker(self) -> &'static str {
        match self {
            LockKind::Ephemeral => "/lock",
            LockKind::Sequential(_) | LockKind::Mutex | LockKind::MultiLock => "-lock-",
            LockKind::WriteLock => "/x-",
            LockKind::SharedRead(_) => "-read-",
            LockKind::SharedWrite(_) => "-write-",
            LockKind::SemaphoreMutex => "-lease-",
            LockKind::RwRead => "__READ__",
            LockKind::RwWrite => "__WRIT__",
        }
    }

    async fn take(self, c: &Client, path: &str, stats: &Arc<LockStats>) -> AnyGuard {
        self.build(c, path)
            .with_stats(stats.clone())
            .acquire()
            .await
            .unwrap_or_else(|e| panic!("{self:?}: acquire: {e}"))
    }
}

/// The ephemeral nodes under `path` (at any depth), with their owners, sorted.
pub async fn ephemerals(client: &Client, path: &str) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    let mut todo = vec![path.to_owned()];
    while let Some(p) = todo.pop() {
        let children = match client.get_children(&p).await {
            Ok(c) => c,
            Err(e) if e.is_no_node() => continue,
            Err(e) => panic!("get_children {p}: {e}"),
        };
        for child in children {
            let child = format!("{p}/{child}");
            match client.exists(&child).await.expect("exists") {
                Some(stat) if stat.ephemeral_owner != 0 => {
                    out.push((child, stat.ephemeral_owner));
                }
                Some(_) => todo.push(child),
                None => {}
            }
        }
    }
    out.sort();
    out
}
