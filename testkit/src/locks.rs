//! The lock recipes as tests and benchmarks name them: one enum of every lock kind, one lock
//! and one guard of any kind, all from `shepherd-recipes` itself, so that a suite that walks
//! every kind walks the same list the crate keeps; and taking a lock of any kind in a line.
//!
//! Invariant: nothing here is a second copy of the crate's dispatch; adding a lock kind to the
//! crate adds it to every suite that iterates [`LockKind::ALL`].

use std::sync::Arc;

use shepherd_client::Client;
use shepherd_recipes::{Lock, LockStats};
use tokio::task::JoinHandle;

pub use shepherd_recipes::{AnyGuard, AnyLock, LockKind};

/// Takes a lock of `kind` on `path`, counting into `stats`, waiting as long as it takes (bound
/// it with [`within`](crate::within) where the test expects it soon); panics on error.
pub async fn take(kind: LockKind, client: &Client, path: &str, stats: &Arc<LockStats>) -> AnyGuard {
    kind.build(client, path)
        .with_stats(stats.clone())
        .acquire()
        .await
        .unwrap_or_else(|e| panic!("{kind:?}: acquire {path}: {e}"))
}

/// [`take`] in a task of its own, for a contender that must queue while the test goes on.
pub fn spawn_take(
    kind: LockKind,
    client: &Client,
    path: &str,
    stats: &Arc<LockStats>,
) -> JoinHandle<AnyGuard> {
    let (client, path, stats) = (client.clone(), path.to_owned(), stats.clone());
    tokio::spawn(async move { take(kind, &client, &path, &stats).await })
}
