//! [`SequentialLock`]: the exclusive lock of seeds 002 and 004, one ephemeral-sequential node
//! per contender, the lowest sequence holding the lock.
//!
//! Layout: `<dir>/<uuid>-lock-<seq>` (the seed's `guid-lock-`); `<dir>` is made as a
//! container. The uuid is fresh for each acquisition, so after a connection loss during the
//! create our node is found by that prefix. Waiting follows the lock's [`WaitStrategy`].

use std::sync::Arc;
use std::time::Duration;

use shepherd_client::Client;

use crate::contend::{Contest, Wait, WaitStrategy};
use crate::error::Result;
use crate::lock_guard::LockGuard;
use crate::names::{Kind, uuid_v4};
use crate::stats::LockStats;

/// An exclusive lock on the folder `dir`: contenders queue by sequence number.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let server = shepherd_server::Server::builder().start().await?;
/// # let client = shepherd_client::Client::connect(&server.connect_string()).await?;
/// # client.create("/config", b"v1", &shepherd_client::CreateOptions::persistent()).await?;
/// use shepherd_recipes::{SequentialLock, WaitStrategy};
/// let lock = SequentialLock::new(&client, "/_locknode_").with_strategy(WaitStrategy::Predecessor);
/// let guard = lock.lock().await?; // the lowest sequence holds; waiters watch their predecessor
/// let token = guard.fencing_token();
/// guard.write(|m| m.set_data("/config", token.to_string().as_bytes(), None)).await?;
/// assert!(lock.try_lock().await?.is_none(), "one holder at a time");
/// guard.release().await?;
/// let next = lock.lock().await?;
/// assert!(next.fencing_token() > token);
/// drop(next); // also releases, in the background
/// # server.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SequentialLock {
    client: Client,
    dir: String,
    strategy: WaitStrategy,
    stats: Arc<LockStats>,
}

impl SequentialLock {
    /// A lock on the folder `dir`, waiting by [`WaitStrategy::Predecessor`].
    pub fn new(client: &Client, dir: impl Into<String>) -> SequentialLock {
        SequentialLock {
            client: client.clone(),
            dir: dir.into(),
            strategy: WaitStrategy::Predecessor,
            stats: LockStats::new(),
        }
    }

    /// Chooses how waiters wait.
    pub fn with_strategy(mut self, strategy: WaitStrategy) -> SequentialLock {
        self.strategy = strategy;
        self
    }

    /// Counts into `stats` instead of the lock's own.
    pub fn with_stats(mut self, stats: Arc<LockStats>) -> SequentialLock {
        self.stats = stats;
        self
    }

    /// The counters.
    pub fn stats(&self) -> &Arc<LockStats> {
        &self.stats
    }

    /// Takes the lock if no one is ahead of us, else deletes our node: `Ok(None)`.
    ///
    /// # Errors
    /// Client errors other than connection loss; [`crate::Error::LockLost`] if our node is
    /// deleted by someone else meanwhile.
    ///
    /// # Cancellation
    /// Safe: a node this call may have created is deleted in the background.
    pub async fn try_lock(&self) -> Result<Option<LockGuard>> {
        self.acquire(Wait::No).await
    }

    /// Takes the lock, waiting in line (first come, first served).
    ///
    /// # Errors
    /// As [`SequentialLock::try_lock`]; the session ending while waiting.
    ///
    /// # Cancellation
    /// As [`SequentialLock::try_lock`].
    pub async fn lock(&self) -> Result<LockGuard> {
        let guard = self.acquire(Wait::Forever).await?;
        Ok(guard.expect("an unbounded wait ends only with the lock or an error"))
    }

    /// Takes the lock, waiting at most `timeout` for the turn; on timeout our node is deleted
    /// before `Ok(None)` is returned.
    ///
    /// # Errors
    /// As [`SequentialLock::lock`].
    ///
    /// # Cancellation
    /// As [`SequentialLock::try_lock`].
    pub async fn lock_timeout(&self, timeout: Duration) -> Result<Option<LockGuard>> {
        self.acquire(Wait::timeout(timeout)).await
    }

    async fn acquire(&self, wait: Wait) -> Result<Option<LockGuard>> {
        let contest = Contest {
            client: &self.client,
            dir: &self.dir,
            stats: &self.stats,
            strategy: self.strategy,
        };
        let prefix = format!("{}-lock-", uuid_v4());
        contest.acquire(&prefix, Kind::Write, wait, None).await
    }
}
