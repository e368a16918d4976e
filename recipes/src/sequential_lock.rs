//! [`SequentialLock`]: the classic exclusive lock of ZooKeeper's recipes page, one
//! ephemeral-sequential node per contender, the lowest sequence holding the lock; both in its
//! first form, where every waiter watches the folder, and in the herd-free one, where each
//! watches only its predecessor.
//!
//! Layout: `<dir>/<uuid>-lock-<seq>` (the recipe's `guid-lock-`); `<dir>` is made as a
//! container. The uuid is fresh for each acquisition, so after a connection loss during the
//! create our node is found by that prefix. Waiting follows the lock's [`WaitStrategy`].

use std::sync::Arc;

use shepherd_client::Client;

use crate::contend::WaitStrategy;
use crate::error::Result;
use crate::lock::Wait;
use crate::lock_base::{LockBase, impl_lock};
use crate::lock_guard::LockGuard;
use crate::names::{Kind, uuid_v4};
use crate::stats::LockStats;

/// An exclusive lock on the folder `dir`: contenders queue by sequence number (fair: first
/// come, first served). Not reentrant.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let server = shepherd_server::Server::builder().start().await?;
/// # let client = shepherd_client::Client::connect(&server.connect_string()).await?;
/// # client.create("/config", b"v1", &shepherd_client::CreateOptions::persistent()).await?;
/// use shepherd_recipes::{Guard, Lock, SequentialLock, WaitStrategy};
/// let lock = SequentialLock::new(&client, "/_locknode_").with_strategy(WaitStrategy::Predecessor);
/// let guard = lock.acquire().await?; // the lowest sequence holds; waiters watch their predecessor
/// let token = guard.fencing_token();
/// guard.write(|m| m.set_data("/config", token.to_string().as_bytes(), None)).await?;
/// assert!(lock.try_acquire().await?.is_none(), "one holder at a time");
/// guard.release().await?;
/// let next = lock.acquire().await?;
/// assert!(next.fencing_token() > token);
/// drop(next); // also releases, in the background
/// # server.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SequentialLock {
    base: LockBase,
    strategy: WaitStrategy,
}

impl SequentialLock {
    /// A lock on the folder `dir`, waiting by [`WaitStrategy::Predecessor`].
    pub fn new(client: &Client, dir: impl Into<String>) -> SequentialLock {
        SequentialLock {
            base: LockBase::new(client, dir),
            strategy: WaitStrategy::Predecessor,
        }
    }

    /// Chooses how waiters wait.
    pub fn with_strategy(mut self, strategy: WaitStrategy) -> SequentialLock {
        self.strategy = strategy;
        self
    }

    /// Counts into `stats` instead of the lock's own.
    pub fn with_stats(mut self, stats: Arc<LockStats>) -> SequentialLock {
        self.base.stats = stats;
        self
    }

    async fn contend(&self, wait: Wait) -> Result<Option<LockGuard>> {
        let prefix = format!("{}-lock-", uuid_v4());
        let contest = self.base.contest(self.strategy);
        contest.acquire(&prefix, Kind::Write, wait, None).await
    }
}

impl_lock!(SequentialLock);
