//! [`ReadHalf`] and [`WriteHalf`]: the two halves of a read/write lock ([`crate::SharedLock`],
//! [`crate::ReadWriteLock`]) as values that implement [`Lock`], like Curator's `readLock()` and
//! `writeLock()`.
//!
//! A half borrows its lock and holds no state of its own: the lock keeps whatever the halves
//! share (the reentrancy of a [`crate::ReadWriteLock`] owner, the counters), so taking a half
//! again, or the other half, goes through the same owner.

use std::future::Future;
use std::sync::Arc;

use crate::error::Result;
use crate::lock::{Lock, Wait};
use crate::lock_guard::LockGuard;
use crate::stats::LockStats;

/// What a read/write lock gives its halves; this crate's read/write locks implement it, and
/// nothing else can (it is not exported).
pub trait ReadWrite: Send + Sync {
    /// Takes the read half, as [`Lock::acquire_with`].
    fn acquire_read(&self, wait: Wait) -> impl Future<Output = Result<Option<LockGuard>>> + Send;

    /// Takes the write half, as [`Lock::acquire_with`].
    fn acquire_write(&self, wait: Wait) -> impl Future<Output = Result<Option<LockGuard>>> + Send;

    /// The counters both halves count into.
    fn stats(&self) -> &Arc<LockStats>;

    /// The lock folder.
    fn path(&self) -> &str;
}

/// The read (shared) half of a read/write lock: many readers hold it together, never alongside
/// a writer.
#[derive(Debug, Clone, Copy)]
pub struct ReadHalf<'a, L> {
    lock: &'a L,
}

/// The write (exclusive) half of a read/write lock: one holder, alongside no reader.
#[derive(Debug, Clone, Copy)]
pub struct WriteHalf<'a, L> {
    lock: &'a L,
}

impl<'a, L: ReadWrite> ReadHalf<'a, L> {
    pub(crate) fn new(lock: &'a L) -> Self {
        ReadHalf { lock }
    }
}

impl<'a, L: ReadWrite> WriteHalf<'a, L> {
    pub(crate) fn new(lock: &'a L) -> Self {
        WriteHalf { lock }
    }
}

impl<L: ReadWrite> Lock for ReadHalf<'_, L> {
    type Guard = LockGuard;

    fn acquire_with(&self, wait: Wait) -> impl Future<Output = Result<Option<LockGuard>>> + Send {
        self.lock.acquire_read(wait)
    }

    fn stats(&self) -> &Arc<LockStats> {
        self.lock.stats()
    }

    fn path(&self) -> &str {
        self.lock.path()
    }
}

impl<L: ReadWrite> Lock for WriteHalf<'_, L> {
    type Guard = LockGuard;

    fn acquire_with(&self, wait: Wait) -> impl Future<Output = Result<Option<LockGuard>>> + Send {
        self.lock.acquire_write(wait)
    }

    fn stats(&self) -> &Arc<LockStats> {
        self.lock.stats()
    }

    fn path(&self) -> &str {
        self.lock.path()
    }
}
