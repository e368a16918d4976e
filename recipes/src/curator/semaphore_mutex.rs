//! [`SemaphoreMutex`]: Curator's `InterProcessSemaphoreMutex`, an `InterProcessSemaphoreV2`
//! with one lease.
//!
//! Layout: `<path>/locks/_c_<uuid>-lock-<seq>` (a [`Mutex`] that serializes lease takers)
//! and `<path>/leases/_c_<uuid>-lease-<seq>` (one node per lease, ephemeral sequential); all
//! three folders are containers. To take the lease: take the `locks` mutex, create a lease
//! node, and while `leases` holds more than one child wait on a child watch of `leases`; then
//! release the `locks` mutex. Only the one contender inside the mutex watches `leases`, so
//! there is no herd.
//!
//! Invariants: not reentrant (a second acquisition by the same task waits for itself, as in
//! Curator); the guard is the lease node, and may be released by any task it is moved to; a
//! timed-out or cancelled acquisition deletes its lease node and releases the `locks` mutex.

use std::sync::Arc;

use shepherd_client::{Client, Error as ZkError};

use super::Mutex;
use crate::contend::{Cleanup, sleep_on};
use crate::error::{Error, Result};
use crate::guard::Guard;
use crate::lock::{Lock, Wait};
use crate::lock_base::{LockBase, impl_lock};
use crate::lock_guard::LockGuard;
use crate::lost::LostReason;
use crate::names::{base, join, uuid_v4};
use crate::node::{Pending, create_sequential, wait_not_disconnected};
use crate::stats::LockStats;

/// A non-reentrant exclusive lock compatible with Curator's `InterProcessSemaphoreMutex`. Fair
/// (the lease takers queue in the inner mutex); the guard is not tied to the task that took it.
/// A wait bound covers the inner mutex and the lease together.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let server = shepherd_server::Server::builder().start().await?;
/// # let client = shepherd_client::Client::connect(&server.connect_string()).await?;
/// # client.create("/config", b"v1", &shepherd_client::CreateOptions::persistent()).await?;
/// use std::time::Duration;
/// use shepherd_recipes::{Guard, Lock, SemaphoreMutex};
/// let lock = SemaphoreMutex::new(&client, "/locks/batch");
/// let guard = lock.acquire().await?;
/// let token = guard.fencing_token();
/// guard.write(|m| m.set_data("/config", token.to_string().as_bytes(), None)).await?;
/// // Not reentrant: a second acquisition waits, even through the same value.
/// assert!(lock.acquire_timeout(Duration::from_millis(50)).await?.is_none());
/// // Not tied to this task: another one may release it.
/// tokio::spawn(async move { guard.release().await }).await??;
/// # server.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SemaphoreMutex {
    base: LockBase,
}

impl SemaphoreMutex {
    /// A semaphore mutex on the folder `path`.
    pub fn new(client: &Client, path: impl Into<String>) -> SemaphoreMutex {
        SemaphoreMutex {
            base: LockBase::new(client, path),
        }
    }

    /// Counts into `stats` instead of the lock's own (the inner `locks` mutex counts there
    /// too).
    pub fn with_stats(mut self, stats: Arc<LockStats>) -> SemaphoreMutex {
        self.base.stats = stats;
        self
    }

    /// Takes the inner `locks` mutex, then the lease, then lets the mutex go.
    async fn contend(&self, wait: Wait) -> Result<Option<LockGuard>> {
        // A fresh owner each time: the inner mutex must not be re-entered by a second taker.
        let mutex = Mutex::new(&self.base.client, join(&self.base.path, "locks"))
            .with_stats(self.base.stats.clone());
        let Some(inner) = mutex.acquire_with(wait).await? else {
            return Ok(None);
        };
        let lease = self.lease(wait).await;
        let released = inner.release().await;
        let lease = lease?;
        released?;
        Ok(lease)
    }

    /// Creates our lease node and waits until it is the only one.
    async fn lease(&self, wait: Wait) -> Result<Option<LockGuard>> {
        let LockBase {
            client,
            path,
            stats,
        } = &self.base;
        let leases = join(path, "leases");
        let prefix = format!("_c_{}-lease-", uuid_v4());
        let pending = Pending::Prefix {
            dir: leases.clone(),
            prefix: prefix.clone(),
        };
        let mut cleanup = Cleanup::new(client, pending);
        let created = create_sequential(client, &leases, &prefix, b"").await?;
        cleanup.created = Some(created.clone());
        loop {
            stats.bump(|s| s.get_children += 1);
            let (children, watcher) = match client.get_children_w(&leases).await {
                Ok((children, _, watcher)) => (children, watcher),
                Err(ZkError::ConnectionLoss) => {
                    wait_not_disconnected(client).await;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            if !children.iter().any(|c| c == base(&created.path)) {
                return Err(Error::LockLost(LostReason::NodeDeleted));
            }
            if children.len() <= 1 {
                cleanup.disarm();
                stats.bump(|s| s.acquired += 1);
                return Ok(Some(LockGuard::new(client, created)));
            }
            if wait == Wait::No || !sleep_on(stats, watcher, wait).await? {
                cleanup.run_now().await?;
                return Ok(None);
            }
        }
    }
}

impl_lock!(SemaphoreMutex);
