//! [`Mutex`]: Curator's `InterProcessMutex`.
//!
//! Layout: `<path>/_c_<uuid>-lock-<seq>`, ephemeral sequential; `<path>` is made as a
//! container (Curator's `creatingParentContainersIfNeeded`). The lowest sequence holds the
//! lock; each waiter watches only its predecessor. kazoo's `Lock` nodes (`__lock__`,
//! `__rlock__`) in the same folder count as contenders, and kazoo sees ours with
//! `extra_lock_patterns=["-lock-"]`, so the two exclude each other.
//!
//! Invariants: reentrant per `Mutex` value (see [`crate::curator`]); a timed-out or
//! cancelled acquisition deletes its node (awaited on timeout, in the background on
//! cancellation), as Curator's `deleteOurPath` does.

use std::sync::Arc;

use shepherd_client::Client;

use super::Reentrant;
use crate::contend::WaitStrategy;
use crate::error::Result;
use crate::lock::Wait;
use crate::lock_base::{LockBase, impl_lock};
use crate::lock_guard::LockGuard;
use crate::names::{Kind, uuid_v4};
use crate::stats::LockStats;

/// A reentrant exclusive lock compatible with Curator's `InterProcessMutex`: acquiring again
/// through the same value while it holds the lock returns another guard on the same node at
/// once. Fair (predecessor watches).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let server = shepherd_server::Server::builder().start().await?;
/// # let client = shepherd_client::Client::connect(&server.connect_string()).await?;
/// # client.create("/config", b"v1", &shepherd_client::CreateOptions::persistent()).await?;
/// use std::time::Duration;
/// use shepherd_recipes::{Guard, Lock, Mutex};
/// let mutex = Mutex::new(&client, "/locks/orders");
/// let outer = mutex.acquire().await?;
/// let inner = mutex.acquire().await?; // same owner: re-entered, same node
/// assert_eq!(mutex.hold_count(), 2);
/// assert_eq!(inner.fencing_token(), outer.fencing_token());
/// let token = outer.fencing_token();
/// outer.write(|m| m.set_data("/config", token.to_string().as_bytes(), None)).await?;
/// // Another owner (another value, here on the same client) is excluded.
/// let other = Mutex::new(&client, "/locks/orders");
/// assert!(other.acquire_timeout(Duration::from_millis(50)).await?.is_none());
/// drop(inner);
/// outer.release().await?; // last hold: the node is deleted
/// let guard = other.acquire_timeout(Duration::from_secs(5)).await?.expect("free");
/// assert!(guard.fencing_token() > token);
/// guard.release().await?;
/// # server.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Mutex {
    base: LockBase,
    owner: Reentrant,
}

impl Mutex {
    /// A mutex on the folder `path`.
    pub fn new(client: &Client, path: impl Into<String>) -> Mutex {
        Mutex {
            base: LockBase::new(client, path),
            owner: Reentrant::default(),
        }
    }

    /// Counts into `stats` instead of the lock's own.
    pub fn with_stats(mut self, stats: Arc<LockStats>) -> Mutex {
        self.base.stats = stats;
        self
    }

    /// Whether this owner holds the lock (Curator's `isOwnedByCurrentThread`).
    pub fn is_held(&self) -> bool {
        self.owner.current().is_some()
    }

    /// How many guards this owner holds on the lock (0 when not held).
    pub fn hold_count(&self) -> usize {
        self.owner.hold_count()
    }

    /// Re-enters this owner's hold, or queues a fresh node.
    async fn contend(&self, wait: Wait) -> Result<Option<LockGuard>> {
        self.owner
            .acquire(wait, |wait| async move {
                let prefix = format!("_c_{}-lock-", uuid_v4());
                let contest = self.base.contest(WaitStrategy::Predecessor);
                contest.acquire(&prefix, Kind::Write, wait, None).await
            })
            .await
    }
}

impl_lock!(Mutex);
