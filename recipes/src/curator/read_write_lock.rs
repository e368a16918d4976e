//! [`ReadWriteLock`]: Curator's `InterProcessReadWriteLock`.
//!
//! Layout: `<path>/_c_<uuid>-__READ__<seq>` and `<path>/_c_<uuid>-__WRIT__<seq>`, ephemeral
//! sequential, in one container folder. A writer waits for every lower node; a reader for the
//! last lower write node, except the write node of its own owner.
//!
//! kazoo's `ReadLock` (`__rlock__`) and `WriteLock` (`__lock__`) nodes in the folder are read
//! as a reader and a writer; kazoo in turn sees ours when given
//! `extra_lock_patterns=["__WRIT__"]` (its readers) and `["__WRIT__", "__READ__"]` (its
//! writers), see the crate docs.
//!
//! Invariants: each half is reentrant per `ReadWriteLock` value; the write holder may take the
//! read half (downgrade: take read, release write); holding only the read half, taking the
//! write half fails with [`Error::UpgradeNotSupported`] instead of waiting for ourselves.

use std::sync::Arc;
use std::time::Duration;

use shepherd_client::Client;

use super::Reentrant;
use crate::contend::{Contest, Wait, WaitStrategy};
use crate::error::{Error, Result};
use crate::lock_guard::LockGuard;
use crate::names::{Kind, base, uuid_v4};
use crate::stats::LockStats;

/// A reentrant read/write lock compatible with Curator's `InterProcessReadWriteLock`.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let server = shepherd_server::Server::builder().start().await?;
/// # let client = shepherd_client::Client::connect(&server.connect_string()).await?;
/// # client.create("/config", b"v1", &shepherd_client::CreateOptions::persistent()).await?;
/// use std::time::Duration;
/// use shepherd_recipes::ReadWriteLock;
/// let lock = ReadWriteLock::new(&client, "/locks/catalog");
/// let write = lock.write_lock().await?;
/// let token = write.fencing_token();
/// write.write(|m| m.set_data("/config", token.to_string().as_bytes(), None)).await?;
/// let other = ReadWriteLock::new(&client, "/locks/catalog"); // another owner
/// assert!(other.read_lock_timeout(Duration::from_millis(50)).await?.is_none());
/// let read = lock.read_lock().await?; // the writer may read
/// write.release().await?; // downgraded: still reading, others may read too
/// let shared = other.read_lock().await?;
/// assert!(shared.fencing_token() > read.fencing_token());
/// read.release().await?;
/// shared.release().await?;
/// # server.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ReadWriteLock {
    client: Client,
    path: String,
    stats: Arc<LockStats>,
    read: Reentrant,
    write: Reentrant,
}

impl ReadWriteLock {
    /// A read/write lock on the folder `path`.
    pub fn new(client: &Client, path: impl Into<String>) -> ReadWriteLock {
        ReadWriteLock {
            client: client.clone(),
            path: path.into(),
            stats: LockStats::new(),
            read: Reentrant::default(),
            write: Reentrant::default(),
        }
    }

    /// Counts into `stats` instead of the lock's own.
    pub fn with_stats(mut self, stats: Arc<LockStats>) -> ReadWriteLock {
        self.stats = stats;
        self
    }

    /// The counters.
    pub fn stats(&self) -> &Arc<LockStats> {
        &self.stats
    }

    /// Guards this owner holds on the read half.
    pub fn read_hold_count(&self) -> usize {
        self.read.hold_count()
    }

    /// Guards this owner holds on the write half.
    pub fn write_hold_count(&self) -> usize {
        self.write.hold_count()
    }

    /// Takes the read half: waits for every lower write node but this owner's own.
    ///
    /// # Errors
    /// Client errors other than connection loss; [`Error::LockLost`] if our node is deleted by
    /// someone else while waiting; the session ending while waiting.
    ///
    /// # Cancellation
    /// Safe: a node this call may have created is deleted in the background.
    pub async fn read_lock(&self) -> Result<LockGuard> {
        let guard = self.read_wait(Wait::Forever).await?;
        Ok(guard.expect("an unbounded wait ends only with the lock or an error"))
    }

    /// As [`ReadWriteLock::read_lock`], waiting at most `timeout` (`Ok(None)`, node deleted).
    ///
    /// # Errors
    /// As [`ReadWriteLock::read_lock`].
    ///
    /// # Cancellation
    /// As [`ReadWriteLock::read_lock`].
    pub async fn read_lock_timeout(&self, timeout: Duration) -> Result<Option<LockGuard>> {
        self.read_wait(Wait::timeout(timeout)).await
    }

    /// Takes the write half: waits for every lower node.
    ///
    /// # Errors
    /// [`Error::UpgradeNotSupported`] if this owner holds the read half but not the write
    /// half; otherwise as [`ReadWriteLock::read_lock`].
    ///
    /// # Cancellation
    /// As [`ReadWriteLock::read_lock`].
    pub async fn write_lock(&self) -> Result<LockGuard> {
        let guard = self.write_wait(Wait::Forever).await?;
        Ok(guard.expect("an unbounded wait ends only with the lock or an error"))
    }

    /// As [`ReadWriteLock::write_lock`], waiting at most `timeout` (`Ok(None)`, node deleted).
    ///
    /// # Errors
    /// As [`ReadWriteLock::write_lock`].
    ///
    /// # Cancellation
    /// As [`ReadWriteLock::read_lock`].
    pub async fn write_lock_timeout(&self, timeout: Duration) -> Result<Option<LockGuard>> {
        self.write_wait(Wait::timeout(timeout)).await
    }

    fn contest(&self) -> Contest<'_> {
        Contest {
            client: &self.client,
            dir: &self.path,
            stats: &self.stats,
            strategy: WaitStrategy::Predecessor,
        }
    }

    async fn read_wait(&self, wait: Wait) -> Result<Option<LockGuard>> {
        self.read
            .acquire(wait, |wait| async move {
                // Keep our write hold (if any) alive while we queue behind it.
                let write = self.write.current();
                let ignore = write.as_ref().map(|g| base(g.path()).to_owned());
                let prefix = format!("_c_{}-__READ__", uuid_v4());
                let got = self
                    .contest()
                    .acquire(&prefix, Kind::Read, wait, ignore.as_deref())
                    .await;
                drop(write);
                got
            })
            .await
    }

    async fn write_wait(&self, wait: Wait) -> Result<Option<LockGuard>> {
        if self.write.current().is_none() && self.read.current().is_some() {
            return Err(Error::UpgradeNotSupported);
        }
        self.write
            .acquire(wait, |wait| async move {
                let prefix = format!("_c_{}-__WRIT__", uuid_v4());
                self.contest()
                    .acquire(&prefix, Kind::Write, wait, None)
                    .await
            })
            .await
    }
}
