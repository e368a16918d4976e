//! [`EphemeralLock`]: the simplest exclusive lock, one fixed ephemeral node, made safe
//! against connection loss by reading the node back and comparing its owner id.
//!
//! Layout: the lock *is* the node `<path>`, ephemeral, holding an owner id unique to each
//! acquisition (`<session id hex>-<uuid>`); its parent is made as a container.
//!
//! Invariants: only a create that this acquisition sent can make us the holder; after a
//! connection loss a `NodeExists` is resolved by reading the node back and comparing its data
//! with our owner id. Waiters leave an exists watch on the node, so a release wakes all of
//! them (a herd; [`crate::SequentialLock`] avoids it).

use std::sync::Arc;

use shepherd_client::{Client, Error as ZkError};

use crate::contend::{Cleanup, sleep_on};
use crate::error::Result;
use crate::lock::Wait;
use crate::lock_base::{LockBase, impl_lock};
use crate::lock_guard::LockGuard;
use crate::names::uuid_v4;
use crate::node::{Pending, create_fixed, wait_not_disconnected};
use crate::stats::LockStats;

/// An exclusive lock held by whoever created the ephemeral node `path`. Not reentrant, not
/// fair: on a release every waiter races to create the node again.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let server = shepherd_server::Server::builder().start().await?;
/// # let client = shepherd_client::Client::connect(&server.connect_string()).await?;
/// # client.create("/config", b"v1", &shepherd_client::CreateOptions::persistent()).await?;
/// use shepherd_recipes::{EphemeralLock, Guard, Lock};
/// let lock = EphemeralLock::new(&client, "/exclusive_lock/lock");
/// let guard = lock.acquire().await?; // waits (on an exists watch) while someone else holds it
/// let token = guard.fencing_token(); // hand it to the resource you protect
/// // Applies only while the lock node exists: a check and the write in one multi.
/// guard.write(|m| m.set_data("/config", b"v2", None)).await?;
/// assert!(lock.try_acquire().await?.is_none(), "held: not even we get it twice");
/// guard.release().await?; // deletes the node
/// let next = lock.try_acquire().await?.expect("free again");
/// assert!(next.fencing_token() > token, "later holders get larger tokens");
/// next.release().await?;
/// # server.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct EphemeralLock {
    base: LockBase,
}

impl EphemeralLock {
    /// A lock on the node `path` (its parent is created as needed).
    pub fn new(client: &Client, path: impl Into<String>) -> EphemeralLock {
        EphemeralLock {
            base: LockBase::new(client, path),
        }
    }

    /// Counts into `stats` (shared with other locks, say) instead of the lock's own.
    pub fn with_stats(mut self, stats: Arc<LockStats>) -> EphemeralLock {
        self.base.stats = stats;
        self
    }

    async fn contend(&self, wait: Wait) -> Result<Option<LockGuard>> {
        let LockBase {
            client,
            path,
            stats,
        } = &self.base;
        let data = format!("{:x}-{}", client.session_id(), uuid_v4()).into_bytes();
        let pending = Pending::Data {
            path: path.clone(),
            data: data.clone(),
        };
        let cleanup = Cleanup::new(client, pending);
        loop {
            if let Some(created) = create_fixed(client, path, &data).await? {
                cleanup.disarm();
                stats.bump(|s| s.acquired += 1);
                return Ok(Some(LockGuard::new(client, created)));
            }
            if wait == Wait::No {
                cleanup.disarm(); // the node is someone else's; nothing of ours exists
                return Ok(None);
            }
            stats.bump(|s| s.exists += 1);
            let watcher = match client.exists_w(path).await {
                Ok((Some(_), w)) => w,
                Ok((None, _)) => continue,
                Err(ZkError::ConnectionLoss) => {
                    wait_not_disconnected(client).await;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            if !sleep_on(stats, watcher, wait).await? {
                cleanup.disarm(); // as above: the node we waited on is someone else's
                return Ok(None);
            }
        }
    }
}

impl_lock!(EphemeralLock);
