//! [`MultiLock`]: Curator's `InterProcessMultiLock`, several [`Mutex`]es taken as one.
//!
//! Layout: that of each [`Mutex`]. Locks are taken in the order given (give every process the
//! same order, or two of them can deadlock).
//!
//! Invariants: all or nothing: if one lock fails or times out, those already taken are
//! released, in reverse order, before the call returns; the [`MultiGuard`] releases in
//! reverse order too. One wait bound covers all the locks together.

use std::future::Future;
use std::sync::Arc;

use shepherd_client::Client;

use super::{MultiGuard, Mutex};
use crate::error::Result;
use crate::guard::Guard;
use crate::lock::{Lock, Wait};
use crate::stats::LockStats;

/// All-or-nothing acquisition of several mutexes, each reentrant as a [`Mutex`] is.
/// Cancellation: the locks taken so far are released in the background (not necessarily in
/// reverse order), the pending one as for a [`Mutex`].
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let server = shepherd_server::Server::builder().start().await?;
/// # let client = shepherd_client::Client::connect(&server.connect_string()).await?;
/// # client.create("/config", b"v1", &shepherd_client::CreateOptions::persistent()).await?;
/// use shepherd_recipes::{Guard, Lock, MultiLock};
/// let both = MultiLock::new(&client, ["/locks/a", "/locks/b"]);
/// let guard = both.acquire().await?; // "/locks/a", then "/locks/b"; all or nothing
/// let tokens = guard.fencing_token(); // one per lock, in order
/// assert_eq!(tokens.len(), 2);
/// // Checks both lock nodes, then writes.
/// guard.write(|m| m.set_data("/config", b"v2", None)).await?;
/// guard.release().await?; // "/locks/b" first, then "/locks/a"
/// # server.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct MultiLock {
    locks: Vec<Mutex>,
    stats: Arc<LockStats>,
}

impl MultiLock {
    /// A [`Mutex`] per path, taken in this order, all counting into the multi-lock's
    /// counters.
    pub fn new<I>(client: &Client, paths: I) -> MultiLock
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let stats = LockStats::new();
        let locks = paths
            .into_iter()
            .map(|p| Mutex::new(client, p).with_stats(stats.clone()))
            .collect();
        MultiLock { locks, stats }
    }

    /// These mutexes, taken in this order (each keeps its own reentrancy and counters; the
    /// multi-lock's [`stats`](Lock::stats) are then the first mutex's).
    pub fn from_mutexes(locks: Vec<Mutex>) -> MultiLock {
        let stats = locks
            .first()
            .map_or_else(LockStats::new, |m| m.stats().clone());
        MultiLock { locks, stats }
    }

    /// Counts every mutex into `stats` instead.
    pub fn with_stats(self, stats: Arc<LockStats>) -> MultiLock {
        let locks = self
            .locks
            .into_iter()
            .map(|m| m.with_stats(stats.clone()))
            .collect();
        MultiLock { locks, stats }
    }

    /// The mutexes.
    pub fn mutexes(&self) -> &[Mutex] {
        &self.locks
    }

    /// Takes each mutex in turn; on a failure, releases those taken (in reverse order).
    async fn contend(&self, wait: Wait) -> Result<Option<MultiGuard>> {
        let mut taken = MultiGuard::default();
        for lock in &self.locks {
            match lock.acquire_with(wait).await {
                Ok(Some(guard)) => taken.push(guard),
                Ok(None) => {
                    taken.release().await?;
                    return Ok(None);
                }
                Err(e) => {
                    if let Err(release) = taken.release().await {
                        tracing::warn!(error = %release, "releasing a partial multi-lock failed");
                    }
                    return Err(e);
                }
            }
        }
        Ok(Some(taken))
    }
}

impl Lock for MultiLock {
    type Guard = MultiGuard;

    fn acquire_with(&self, wait: Wait) -> impl Future<Output = Result<Option<MultiGuard>>> + Send {
        self.contend(wait)
    }

    fn stats(&self) -> &Arc<LockStats> {
        &self.stats
    }

    /// The first mutex's folder (empty for a multi-lock of none).
    fn path(&self) -> &str {
        self.locks.first().map_or("", Lock::path)
    }
}
