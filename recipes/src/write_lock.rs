//! [`WriteLock`]: ZooKeeper's own `WriteLock` recipe (`org.apache.zookeeper.recipes.lock` in
//! `zookeeper-recipes-lock`).
//!
//! Layout: `<dir>/x-<session id>-<nonce>-<seq>`; `<dir>` is made as a container (the Java
//! recipe makes it persistent). Contenders sort by the sequence suffix only
//! (ZOOKEEPER-2931), and each waits on an exists watch of the next lower node.
//!
//! One deliberate change: the Java recipe names nodes `x-<session id>-<seq>` and, after a
//! connection loss, adopts *any* child with its session's prefix, so two `WriteLock`s of one
//! session on one folder would both think they hold it. A random nonce per acquisition keeps
//! the recipe's session-scoped prefix (and its recovery by prefix) while keeping tasks that
//! share a client apart. Java clients on the same folder still order us correctly.

use std::sync::Arc;

use shepherd_client::Client;

use crate::contend::WaitStrategy;
use crate::error::Result;
use crate::lock::Wait;
use crate::lock_base::{LockBase, impl_lock};
use crate::lock_guard::LockGuard;
use crate::names::{Kind, uuid_v4};
use crate::stats::LockStats;

/// ZooKeeper's exclusive `WriteLock` on the folder `dir`: fair (predecessor watches), not
/// reentrant.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let server = shepherd_server::Server::builder().start().await?;
/// # let client = shepherd_client::Client::connect(&server.connect_string()).await?;
/// # client.create("/config", b"v1", &shepherd_client::CreateOptions::persistent()).await?;
/// use shepherd_recipes::{Guard, Lock, WriteLock};
/// let lock = WriteLock::new(&client, "/lock_node");
/// let guard = lock.acquire().await?;
/// assert!(guard.path().starts_with("/lock_node/x-")); // x-<session>-<nonce>-<seq>
/// let token = guard.fencing_token();
/// guard.write(|m| m.set_data("/config", token.to_string().as_bytes(), None)).await?;
/// assert!(lock.try_acquire().await?.is_none());
/// guard.release().await?;
/// # server.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct WriteLock {
    base: LockBase,
}

impl WriteLock {
    /// A lock on the folder `dir`.
    pub fn new(client: &Client, dir: impl Into<String>) -> WriteLock {
        WriteLock {
            base: LockBase::new(client, dir),
        }
    }

    /// Counts into `stats` instead of the lock's own.
    pub fn with_stats(mut self, stats: Arc<LockStats>) -> WriteLock {
        self.base.stats = stats;
        self
    }

    async fn contend(&self, wait: Wait) -> Result<Option<LockGuard>> {
        let nonce = &uuid_v4()[..8];
        let prefix = format!("x-{}-{nonce}-", self.base.client.session_id());
        let contest = self.base.contest(WaitStrategy::Predecessor);
        contest.acquire(&prefix, Kind::Write, wait, None).await
    }
}

impl_lock!(WriteLock);
