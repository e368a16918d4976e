//! [`SharedLock`]: the shared (read) / exclusive (write) lock of seed 003.
//!
//! Layout: `<dir>/<uuid>-read-<seq>` and `<dir>/<uuid>-write-<seq>` (the seed's
//! `[Hostname]-type-seq`, with a per-acquisition uuid for recovery after connection loss);
//! `<dir>` is made as a container.
//!
//! Rules (seed 003, step 3): a read is granted when no lower node is a write; a write when no
//! lower node exists at all. With [`WaitStrategy::Herd`] every waiter watches the folder's
//! children (the seed's first version); with [`WaitStrategy::Predecessor`] a reader watches
//! the last lower write node and a writer the last lower node (the seed's improvement). Nodes
//! of Curator's and kazoo's read/write locks on the same folder are understood too.

use std::sync::Arc;
use std::time::Duration;

use shepherd_client::Client;

use crate::contend::{Contest, Wait, WaitStrategy};
use crate::error::Result;
use crate::lock_guard::LockGuard;
use crate::names::{Kind, uuid_v4};
use crate::stats::LockStats;

/// A read/write lock on the folder `dir`: many readers or one writer, in arrival order (a
/// waiting writer holds back readers that arrive after it).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let server = shepherd_server::Server::builder().start().await?;
/// # let client = shepherd_client::Client::connect(&server.connect_string()).await?;
/// # client.create("/config", b"v1", &shepherd_client::CreateOptions::persistent()).await?;
/// use shepherd_recipes::{SharedLock, WaitStrategy};
/// let lock = SharedLock::new(&client, "/shared_lock").with_strategy(WaitStrategy::Herd);
/// let r1 = lock.read().await?;
/// let r2 = lock.read().await?; // readers share
/// assert!(lock.try_write().await?.is_none()); // a writer does not
/// r1.release().await?;
/// r2.release().await?;
/// let writer = lock.write().await?;
/// let token = writer.fencing_token();
/// writer.write(|m| m.set_data("/config", token.to_string().as_bytes(), None)).await?;
/// assert!(lock.try_read().await?.is_none(), "readers wait for the writer");
/// writer.release().await?;
/// # server.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SharedLock {
    client: Client,
    dir: String,
    strategy: WaitStrategy,
    stats: Arc<LockStats>,
}

impl SharedLock {
    /// A lock on the folder `dir`, waiting by [`WaitStrategy::Predecessor`].
    pub fn new(client: &Client, dir: impl Into<String>) -> SharedLock {
        SharedLock {
            client: client.clone(),
            dir: dir.into(),
            strategy: WaitStrategy::Predecessor,
            stats: LockStats::new(),
        }
    }

    /// Chooses how waiters wait.
    pub fn with_strategy(mut self, strategy: WaitStrategy) -> SharedLock {
        self.strategy = strategy;
        self
    }

    /// Counts into `stats` instead of the lock's own.
    pub fn with_stats(mut self, stats: Arc<LockStats>) -> SharedLock {
        self.stats = stats;
        self
    }

    /// The counters.
    pub fn stats(&self) -> &Arc<LockStats> {
        &self.stats
    }

    /// Takes a read lock, waiting for every lower write node to go.
    ///
    /// # Errors
    /// Client errors other than connection loss; [`crate::Error::LockLost`] if our node is
    /// deleted by someone else meanwhile; the session ending while waiting.
    ///
    /// # Cancellation
    /// Safe: a node this call may have created is deleted in the background.
    pub async fn read(&self) -> Result<LockGuard> {
        let guard = self.acquire(Kind::Read, Wait::Forever).await?;
        Ok(guard.expect("an unbounded wait ends only with the lock or an error"))
    }

    /// As [`SharedLock::read`], waiting at most `timeout` (`Ok(None)`, node deleted).
    ///
    /// # Errors
    /// As [`SharedLock::read`].
    ///
    /// # Cancellation
    /// As [`SharedLock::read`].
    pub async fn read_timeout(&self, timeout: Duration) -> Result<Option<LockGuard>> {
        self.acquire(Kind::Read, Wait::timeout(timeout)).await
    }

    /// As [`SharedLock::read`] without waiting (`Ok(None)`, node deleted).
    ///
    /// # Errors
    /// As [`SharedLock::read`].
    ///
    /// # Cancellation
    /// As [`SharedLock::read`].
    pub async fn try_read(&self) -> Result<Option<LockGuard>> {
        self.acquire(Kind::Read, Wait::No).await
    }

    /// Takes the write lock, waiting for every lower node to go.
    ///
    /// # Errors
    /// As [`SharedLock::read`].
    ///
    /// # Cancellation
    /// As [`SharedLock::read`].
    pub async fn write(&self) -> Result<LockGuard> {
        let guard = self.acquire(Kind::Write, Wait::Forever).await?;
        Ok(guard.expect("an unbounded wait ends only with the lock or an error"))
    }

    /// As [`SharedLock::write`], waiting at most `timeout` (`Ok(None)`, node deleted).
    ///
    /// # Errors
    /// As [`SharedLock::read`].
    ///
    /// # Cancellation
    /// As [`SharedLock::read`].
    pub async fn write_timeout(&self, timeout: Duration) -> Result<Option<LockGuard>> {
        self.acquire(Kind::Write, Wait::timeout(timeout)).await
    }

    /// As [`SharedLock::write`] without waiting (`Ok(None)`, node deleted).
    ///
    /// # Errors
    /// As [`SharedLock::read`].
    ///
    /// # Cancellation
    /// As [`SharedLock::read`].
    pub async fn try_write(&self) -> Result<Option<LockGuard>> {
        self.acquire(Kind::Write, Wait::No).await
    }

    async fn acquire(&self, kind: Kind, wait: Wait) -> Result<Option<LockGuard>> {
        let contest = Contest {
            client: &self.client,
            dir: &self.dir,
            stats: &self.stats,
            strategy: self.strategy,
        };
        let marker = match kind {
            Kind::Read => "read",
            Kind::Write => "write",
        };
        let prefix = format!("{}-{marker}-", uuid_v4());
        contest.acquire(&prefix, kind, wait, None).await
    }
}
