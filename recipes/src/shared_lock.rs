//! [`SharedLock`]: the shared (read) / exclusive (write) lock of ZooKeeper's recipes page.
//!
//! Layout: `<dir>/<uuid>-read-<seq>` and `<dir>/<uuid>-write-<seq>` (the recipe's
//! `[Hostname]-type-seq`, with a per-acquisition uuid for recovery after connection loss);
//! `<dir>` is made as a container.
//!
//! Rules (the recipe's step 3): a read is granted when no lower node is a write; a write when
//! no lower node exists at all. With [`WaitStrategy::Herd`] every waiter watches the folder's
//! children (the recipe's first version); with [`WaitStrategy::Predecessor`] a reader watches
//! the last lower write node and a writer the last lower node (the recipe's improvement).
//! Nodes of Curator's and kazoo's read/write locks on the same folder are understood too.

use std::future::Future;
use std::sync::Arc;

use shepherd_client::Client;

use crate::contend::WaitStrategy;
use crate::error::Result;
use crate::half::{ReadHalf, ReadWrite, WriteHalf};
use crate::lock::Wait;
use crate::lock_base::LockBase;
use crate::lock_guard::LockGuard;
use crate::names::{Kind, uuid_v4};
use crate::stats::LockStats;

/// A read/write lock on the folder `dir`: many readers or one writer, in arrival order (a
/// waiting writer holds back readers that arrive after it). Take it through its halves,
/// [`read_lock`](SharedLock::read_lock) and [`write_lock`](SharedLock::write_lock); neither is
/// reentrant.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let server = shepherd_server::Server::builder().start().await?;
/// # let client = shepherd_client::Client::connect(&server.connect_string()).await?;
/// # client.create("/config", b"v1", &shepherd_client::CreateOptions::persistent()).await?;
/// use shepherd_recipes::{Guard, Lock, SharedLock, WaitStrategy};
/// let lock = SharedLock::new(&client, "/shared_lock").with_strategy(WaitStrategy::Herd);
/// let r1 = lock.read_lock().acquire().await?;
/// let r2 = lock.read_lock().acquire().await?; // readers share
/// assert!(lock.write_lock().try_acquire().await?.is_none()); // a writer does not
/// r1.release().await?;
/// r2.release().await?;
/// let writer = lock.write_lock().acquire().await?;
/// let token = writer.fencing_token();
/// writer.write(|m| m.set_data("/config", token.to_string().as_bytes(), None)).await?;
/// assert!(lock.read_lock().try_acquire().await?.is_none(), "readers wait for the writer");
/// writer.release().await?;
/// # server.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SharedLock {
    base: LockBase,
    strategy: WaitStrategy,
}

impl SharedLock {
    /// A lock on the folder `dir`, waiting by [`WaitStrategy::Predecessor`].
    pub fn new(client: &Client, dir: impl Into<String>) -> SharedLock {
        SharedLock {
            base: LockBase::new(client, dir),
            strategy: WaitStrategy::Predecessor,
        }
    }

    /// Chooses how waiters wait.
    pub fn with_strategy(mut self, strategy: WaitStrategy) -> SharedLock {
        self.strategy = strategy;
        self
    }

    /// Counts into `stats` instead of the lock's own.
    pub fn with_stats(mut self, stats: Arc<LockStats>) -> SharedLock {
        self.base.stats = stats;
        self
    }

    /// The counters both halves count into.
    pub fn stats(&self) -> &Arc<LockStats> {
        &self.base.stats
    }

    /// The lock folder.
    pub fn path(&self) -> &str {
        &self.base.path
    }

    /// The read half: granted once no lower node is a writer's (a reader never waits for
    /// another reader).
    pub fn read_lock(&self) -> ReadHalf<'_, SharedLock> {
        ReadHalf::new(self)
    }

    /// The write half: granted once no lower node is left at all.
    pub fn write_lock(&self) -> WriteHalf<'_, SharedLock> {
        WriteHalf::new(self)
    }

    async fn contend(&self, kind: Kind, wait: Wait) -> Result<Option<LockGuard>> {
        let marker = match kind {
            Kind::Read => "read",
            Kind::Write => "write",
        };
        let prefix = format!("{}-{marker}-", uuid_v4());
        let contest = self.base.contest(self.strategy);
        contest.acquire(&prefix, kind, wait, None).await
    }
}

impl ReadWrite for SharedLock {
    fn acquire_read(&self, wait: Wait) -> impl Future<Output = Result<Option<LockGuard>>> + Send {
        self.contend(Kind::Read, wait)
    }

    fn acquire_write(&self, wait: Wait) -> impl Future<Output = Result<Option<LockGuard>>> + Send {
        self.contend(Kind::Write, wait)
    }

    fn stats(&self) -> &Arc<LockStats> {
        &self.base.stats
    }

    fn path(&self) -> &str {
        &self.base.path
    }
}
