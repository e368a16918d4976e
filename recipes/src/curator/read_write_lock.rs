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

use std::future::Future;
use std::sync::Arc;

use shepherd_client::Client;

use super::Reentrant;
use crate::contend::{Contest, WaitStrategy};
use crate::error::{Error, Result};
use crate::half::{ReadHalf, ReadWrite, WriteHalf};
use crate::lock::Wait;
use crate::lock_base::LockBase;
use crate::lock_guard::LockGuard;
use crate::names::{Kind, base, uuid_v4};
use crate::stats::LockStats;

/// A reentrant read/write lock compatible with Curator's `InterProcessReadWriteLock`, taken
/// through its halves, [`read_lock`](ReadWriteLock::read_lock) and
/// [`write_lock`](ReadWriteLock::write_lock). Fair (predecessor watches).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let server = shepherd_server::Server::builder().start().await?;
/// # let client = shepherd_client::Client::connect(&server.connect_string()).await?;
/// # client.create("/config", b"v1", &shepherd_client::CreateOptions::persistent()).await?;
/// use std::time::Duration;
/// use shepherd_recipes::{Guard, Lock, ReadWriteLock};
/// let lock = ReadWriteLock::new(&client, "/locks/catalog");
/// let write = lock.write_lock().acquire().await?;
/// let token = write.fencing_token();
/// write.write(|m| m.set_data("/config", token.to_string().as_bytes(), None)).await?;
/// let other = ReadWriteLock::new(&client, "/locks/catalog"); // another owner
/// assert!(other.read_lock().acquire_timeout(Duration::from_millis(50)).await?.is_none());
/// let read = lock.read_lock().acquire().await?; // the writer may read
/// write.release().await?; // downgraded: still reading, others may read too
/// let shared = other.read_lock().acquire().await?;
/// assert!(shared.fencing_token() > read.fencing_token());
/// read.release().await?;
/// shared.release().await?;
/// # server.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ReadWriteLock {
    base: LockBase,
    read: Reentrant,
    write: Reentrant,
}

impl ReadWriteLock {
    /// A read/write lock on the folder `path`.
    pub fn new(client: &Client, path: impl Into<String>) -> ReadWriteLock {
        ReadWriteLock {
            base: LockBase::new(client, path),
            read: Reentrant::default(),
            write: Reentrant::default(),
        }
    }

    /// Counts into `stats` instead of the lock's own.
    pub fn with_stats(mut self, stats: Arc<LockStats>) -> ReadWriteLock {
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

    /// The read half (Curator's `readLock()`): waits for every lower write node but this
    /// owner's own, so the write holder may take it (a downgrade: take read, release write).
    /// Reentrant per owner.
    pub fn read_lock(&self) -> ReadHalf<'_, ReadWriteLock> {
        ReadHalf::new(self)
    }

    /// The write half (Curator's `writeLock()`): waits for every lower node. Reentrant per
    /// owner; taking it while this owner holds only the read half fails with
    /// [`Error::UpgradeNotSupported`] instead of waiting for ourselves.
    pub fn write_lock(&self) -> WriteHalf<'_, ReadWriteLock> {
        WriteHalf::new(self)
    }

    /// Guards this owner holds on the read half.
    pub fn read_hold_count(&self) -> usize {
        self.read.hold_count()
    }

    /// Guards this owner holds on the write half.
    pub fn write_hold_count(&self) -> usize {
        self.write.hold_count()
    }

    fn contest(&self) -> Contest<'_> {
        self.base.contest(WaitStrategy::Predecessor)
    }

    async fn contend_read(&self, wait: Wait) -> Result<Option<LockGuard>> {
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

    async fn contend_write(&self, wait: Wait) -> Result<Option<LockGuard>> {
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

impl ReadWrite for ReadWriteLock {
    fn acquire_read(&self, wait: Wait) -> impl Future<Output = Result<Option<LockGuard>>> + Send {
        self.contend_read(wait)
    }

    fn acquire_write(&self, wait: Wait) -> impl Future<Output = Result<Option<LockGuard>>> + Send {
        self.contend_write(wait)
    }

    fn stats(&self) -> &Arc<LockStats> {
        &self.base.stats
    }

    fn path(&self) -> &str {
        &self.base.path
    }
}
