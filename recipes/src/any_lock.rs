//! [`LockKind`], [`AnyLock`] and [`AnyGuard`]: every lock of this crate (each type, each wait
//! strategy, each half of a read/write lock) behind one enum, for code that runs the same
//! scenario on all of them: the recipes' tests, the fault matrix, `shepherd-bench herd`.
//!
//! Invariant: one layout per kind on a given path, so that two contenders built from the same
//! kind and path contend for the same lock: [`LockKind::Ephemeral`] on the node `<path>/lock`,
//! [`LockKind::MultiLock`] on the mutexes `<path>/a` then `<path>/b`, every other kind on the
//! folder `<path>`.

use std::future::Future;
use std::sync::Arc;

use shepherd_client::{Client, MultiBuilder, WriteResult};

use crate::contend::WaitStrategy;
use crate::curator::{MultiGuard, MultiLock, Mutex, ReadWriteLock, SemaphoreMutex};
use crate::ephemeral_lock::EphemeralLock;
use crate::error::Result;
use crate::guard::Guard;
use crate::lock::{Lock, Wait};
use crate::lock_guard::{LockGuard, guarded_write};
use crate::lost::LostReason;
use crate::sequential_lock::SequentialLock;
use crate::shared_lock::SharedLock;
use crate::stats::LockStats;
use crate::write_lock::WriteLock;

/// One way of taking a lock: a lock type, with its wait strategy or half where it has one.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let server = shepherd_server::Server::builder().start().await?;
/// # let client = shepherd_client::Client::connect(&server.connect_string()).await?;
/// use shepherd_recipes::{Guard, Lock, LockKind};
/// for kind in LockKind::ALL {
///     let path = format!("/every/{}", kind.as_str());
///     let guard = kind.build(&client, &path).acquire().await?;
///     // The exclusive kind of the same lock waits for any holder.
///     let rival = kind.exclusive().build(&client, &path);
///     assert!(rival.try_acquire().await?.is_none(), "{}", kind.title());
///     guard.release().await?;
/// }
/// # server.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LockKind {
    /// [`EphemeralLock`] on `<path>/lock`.
    Ephemeral,
    /// [`SequentialLock`] on `<path>`.
    Sequential(WaitStrategy),
    /// [`WriteLock`] on `<path>`.
    WriteLock,
    /// [`SharedLock::read_lock`] on `<path>`.
    SharedRead(WaitStrategy),
    /// [`SharedLock::write_lock`] on `<path>`.
    SharedWrite(WaitStrategy),
    /// [`Mutex`] on `<path>`.
    Mutex,
    /// [`SemaphoreMutex`] on `<path>` (nodes in `<path>/locks`, `<path>/leases`).
    SemaphoreMutex,
    /// [`ReadWriteLock::read_lock`] on `<path>`.
    RwRead,
    /// [`ReadWriteLock::write_lock`] on `<path>`.
    RwWrite,
    /// [`MultiLock`] on `<path>/a` and `<path>/b`.
    MultiLock,
}

impl LockKind {
    /// Every lock type, every strategy, both halves of each read/write lock.
    pub const ALL: [LockKind; 13] = [
        LockKind::Ephemeral,
        LockKind::Sequential(WaitStrategy::Herd),
        LockKind::Sequential(WaitStrategy::Predecessor),
        LockKind::WriteLock,
        LockKind::SharedRead(WaitStrategy::Herd),
        LockKind::SharedRead(WaitStrategy::Predecessor),
        LockKind::SharedWrite(WaitStrategy::Herd),
        LockKind::SharedWrite(WaitStrategy::Predecessor),
        LockKind::Mutex,
        LockKind::SemaphoreMutex,
        LockKind::RwRead,
        LockKind::RwWrite,
        LockKind::MultiLock,
    ];

    /// A short lowercase name, for paths, ids and reports: `ephemeral`, `sequential-herd`,
    /// `shared-read-predecessor`, `rw-write`, `multi-lock`…
    pub fn as_str(self) -> &'static str {
        use WaitStrategy::{Herd, Predecessor};
        match self {
            LockKind::Ephemeral => "ephemeral",
            LockKind::Sequential(Herd) => "sequential-herd",
            LockKind::Sequential(Predecessor) => "sequential-predecessor",
            LockKind::WriteLock => "write-lock",
            LockKind::SharedRead(Herd) => "shared-read-herd",
            LockKind::SharedRead(Predecessor) => "shared-read-predecessor",
            LockKind::SharedWrite(Herd) => "shared-write-herd",
            LockKind::SharedWrite(Predecessor) => "shared-write-predecessor",
            LockKind::Mutex => "mutex",
            LockKind::SemaphoreMutex => "semaphore-mutex",
            LockKind::RwRead => "rw-read",
            LockKind::RwWrite => "rw-write",
            LockKind::MultiLock => "multi-lock",
        }
    }

    /// The type's name, with the strategy and half: `SequentialLock (Herd)`,
    /// `SharedLock read (Predecessor)`, `ReadWriteLock write`…, for tables.
    pub fn title(self) -> &'static str {
        use WaitStrategy::{Herd, Predecessor};
        match self {
            LockKind::Ephemeral => "EphemeralLock",
            LockKind::Sequential(Herd) => "SequentialLock (Herd)",
            LockKind::Sequential(Predecessor) => "SequentialLock (Predecessor)",
            LockKind::WriteLock => "WriteLock",
            LockKind::SharedRead(Herd) => "SharedLock read (Herd)",
            LockKind::SharedRead(Predecessor) => "SharedLock read (Predecessor)",
            LockKind::SharedWrite(Herd) => "SharedLock write (Herd)",
            LockKind::SharedWrite(Predecessor) => "SharedLock write (Predecessor)",
            LockKind::Mutex => "Mutex",
            LockKind::SemaphoreMutex => "SemaphoreMutex",
            LockKind::RwRead => "ReadWriteLock read",
            LockKind::RwWrite => "ReadWriteLock write",
            LockKind::MultiLock => "MultiLock",
        }
    }

    /// The exclusive kind of the same lock: what keeps this kind waiting (itself, but for a
    /// read half: the write half).
    pub fn exclusive(self) -> LockKind {
        match self {
            LockKind::SharedRead(s) => LockKind::SharedWrite(s),
            LockKind::RwRead => LockKind::RwWrite,
            k => k,
        }
    }

    /// Whether waiters watch something every contender changes (a folder's children, or the
    /// one fixed lock node) rather than only the node that blocks them.
    pub fn herd(self) -> bool {
        matches!(
            self,
            LockKind::Ephemeral
                | LockKind::Sequential(WaitStrategy::Herd)
                | LockKind::SharedRead(WaitStrategy::Herd)
                | LockKind::SharedWrite(WaitStrategy::Herd)
        )
    }

    /// A lock of this kind on `path` (laid out as the module describes), with its own
    /// counters.
    pub fn build(self, client: &Client, path: impl Into<String>) -> AnyLock {
        let path = path.into();
        let lock = match self {
            LockKind::Ephemeral => {
                Inner::Ephemeral(EphemeralLock::new(client, format!("{path}/lock")))
            }
            LockKind::Sequential(s) => {
                Inner::Sequential(SequentialLock::new(client, &path).with_strategy(s))
            }
            LockKind::WriteLock => Inner::WriteLock(WriteLock::new(client, &path)),
            LockKind::SharedRead(s) => {
                Inner::SharedRead(SharedLock::new(client, &path).with_strategy(s))
            }
            LockKind::SharedWrite(s) => {
                Inner::SharedWrite(SharedLock::new(client, &path).with_strategy(s))
            }
            LockKind::Mutex => Inner::Mutex(Mutex::new(client, &path)),
            LockKind::SemaphoreMutex => Inner::SemaphoreMutex(SemaphoreMutex::new(client, &path)),
            LockKind::RwRead => Inner::RwRead(ReadWriteLock::new(client, &path)),
            LockKind::RwWrite => Inner::RwWrite(ReadWriteLock::new(client, &path)),
            LockKind::MultiLock => Inner::MultiLock(MultiLock::new(
                client,
                [format!("{path}/a"), format!("{path}/b")],
            )),
        };
        AnyLock {
            kind: self,
            path,
            lock,
        }
    }
}

/// A lock of any [`LockKind`], made by [`LockKind::build`]. Each value is one owner, as the
/// lock it wraps is (a reentrant kind re-enters through the same value).
#[derive(Debug)]
pub struct AnyLock {
    kind: LockKind,
    path: String,
    lock: Inner,
}

#[derive(Debug)]
enum Inner {
    Ephemeral(EphemeralLock),
    Sequential(SequentialLock),
    WriteLock(WriteLock),
    SharedRead(SharedLock),
    SharedWrite(SharedLock),
    Mutex(Mutex),
    SemaphoreMutex(SemaphoreMutex),
    RwRead(ReadWriteLock),
    RwWrite(ReadWriteLock),
    MultiLock(MultiLock),
}

impl AnyLock {
    /// Its kind.
    pub fn kind(&self) -> LockKind {
        self.kind
    }

    /// Counts into `stats` instead of the lock's own (every mutex of a multi-lock too).
    pub fn with_stats(mut self, stats: Arc<LockStats>) -> AnyLock {
        self.lock = match self.lock {
            Inner::Ephemeral(l) => Inner::Ephemeral(l.with_stats(stats)),
            Inner::Sequential(l) => Inner::Sequential(l.with_stats(stats)),
            Inner::WriteLock(l) => Inner::WriteLock(l.with_stats(stats)),
            Inner::SharedRead(l) => Inner::SharedRead(l.with_stats(stats)),
            Inner::SharedWrite(l) => Inner::SharedWrite(l.with_stats(stats)),
            Inner::Mutex(l) => Inner::Mutex(l.with_stats(stats)),
            Inner::SemaphoreMutex(l) => Inner::SemaphoreMutex(l.with_stats(stats)),
            Inner::RwRead(l) => Inner::RwRead(l.with_stats(stats)),
            Inner::RwWrite(l) => Inner::RwWrite(l.with_stats(stats)),
            Inner::MultiLock(l) => Inner::MultiLock(l.with_stats(stats)),
        };
        self
    }

    async fn contend(&self, wait: Wait) -> Result<Option<AnyGuard>> {
        let one = |g: Option<LockGuard>| g.map(AnyGuard::One);
        Ok(match &self.lock {
            Inner::Ephemeral(l) => one(l.acquire_with(wait).await?),
            Inner::Sequential(l) => one(l.acquire_with(wait).await?),
            Inner::WriteLock(l) => one(l.acquire_with(wait).await?),
            Inner::SharedRead(l) => one(l.read_lock().acquire_with(wait).await?),
            Inner::SharedWrite(l) => one(l.write_lock().acquire_with(wait).await?),
            Inner::Mutex(l) => one(l.acquire_with(wait).await?),
            Inner::SemaphoreMutex(l) => one(l.acquire_with(wait).await?),
            Inner::RwRead(l) => one(l.read_lock().acquire_with(wait).await?),
            Inner::RwWrite(l) => one(l.write_lock().acquire_with(wait).await?),
            Inner::MultiLock(l) => l.acquire_with(wait).await?.map(AnyGuard::Multi),
        })
    }
}

impl Lock for AnyLock {
    type Guard = AnyGuard;

    fn acquire_with(&self, wait: Wait) -> impl Future<Output = Result<Option<AnyGuard>>> + Send {
        self.contend(wait)
    }

    fn stats(&self) -> &Arc<LockStats> {
        match &self.lock {
            Inner::Ephemeral(l) => l.stats(),
            Inner::Sequential(l) => l.stats(),
            Inner::WriteLock(l) => l.stats(),
            Inner::SharedRead(l) | Inner::SharedWrite(l) => l.stats(),
            Inner::Mutex(l) => l.stats(),
            Inner::SemaphoreMutex(l) => l.stats(),
            Inner::RwRead(l) | Inner::RwWrite(l) => l.stats(),
            Inner::MultiLock(l) => l.stats(),
        }
    }

    /// The path it was built on (see [`LockKind::build`]).
    fn path(&self) -> &str {
        &self.path
    }
}

/// A held lock of any [`LockKind`]. Its fencing token has one zxid per lock node (two for a
/// [`LockKind::MultiLock`], one otherwise).
#[derive(Debug)]
#[must_use = "dropping the guard releases the lock"]
pub enum AnyGuard {
    /// Every kind but [`LockKind::MultiLock`].
    One(LockGuard),
    /// [`LockKind::MultiLock`].
    Multi(MultiGuard),
}

impl Guard for AnyGuard {
    type Token = Vec<i64>;

    fn fencing_token(&self) -> Vec<i64> {
        match self {
            AnyGuard::One(g) => vec![g.fencing_token()],
            AnyGuard::Multi(g) => g.fencing_token(),
        }
    }

    fn paths(&self) -> Vec<&str> {
        match self {
            AnyGuard::One(g) => g.paths(),
            AnyGuard::Multi(g) => g.paths(),
        }
    }

    fn lost_reason(&self) -> Option<LostReason> {
        match self {
            AnyGuard::One(g) => g.lost_reason(),
            AnyGuard::Multi(g) => g.lost_reason(),
        }
    }

    fn lost(&self) -> impl Future<Output = LostReason> + Send + 'static {
        let lost: std::pin::Pin<Box<dyn Future<Output = LostReason> + Send>> = match self {
            AnyGuard::One(g) => Box::pin(g.lost()),
            AnyGuard::Multi(g) => Box::pin(g.lost()),
        };
        lost
    }

    fn write<F>(&self, build: F) -> impl Future<Output = Result<Vec<WriteResult>>> + Send
    where
        F: for<'a> FnOnce(MultiBuilder<'a>) -> MultiBuilder<'a>,
    {
        // Both variants' writes are one guarded multi over their nodes.
        let client = match self {
            AnyGuard::One(g) => Some(g.client()),
            AnyGuard::Multi(g) => g.guards().first().map(LockGuard::client),
        };
        let write = client.map(|c| guarded_write(c, &self.paths(), build));
        async move {
            match write {
                Some(write) => write.await,
                None => Ok(Vec::new()),
            }
        }
    }

    async fn release(self) -> Result<()> {
        match self {
            AnyGuard::One(g) => g.release().await,
            AnyGuard::Multi(g) => g.release().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_distinct_and_exclusive_kinds_are_their_own() {
        let mut slugs: Vec<_> = LockKind::ALL.iter().map(|k| k.as_str()).collect();
        let mut titles: Vec<_> = LockKind::ALL.iter().map(|k| k.title()).collect();
        slugs.sort_unstable();
        slugs.dedup();
        titles.sort_unstable();
        titles.dedup();
        assert_eq!((slugs.len(), titles.len()), (13, 13));
        for kind in LockKind::ALL {
            let rival = kind.exclusive();
            assert!(LockKind::ALL.contains(&rival));
            assert_eq!(rival.exclusive(), rival, "{kind:?}");
            assert_eq!(rival.herd(), kind.herd(), "{kind:?}");
        }
    }
}
