//! Every lock type of the crate (and every wait strategy and half) behind one enum, so that a
//! scenario can be run for each of them.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use shepherd_client::Client;
use shepherd_recipes::{
    EphemeralLock, LockGuard, LockStats, LostReason, MultiGuard, MultiLock, Mutex, ReadWriteLock,
    Result, SemaphoreMutex, SequentialLock, SharedLock, WaitStrategy, WriteLock,
};

/// One way of taking a lock on a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// [`EphemeralLock`] on `<path>/lock`.
    Ephemeral,
    /// [`SequentialLock`] on `<path>`.
    Sequential(WaitStrategy),
    /// [`WriteLock`] on `<path>`.
    WriteLock,
    /// [`SharedLock::read`] on `<path>`.
    SharedRead(WaitStrategy),
    /// [`SharedLock::write`] on `<path>`.
    SharedWrite(WaitStrategy),
    /// [`Mutex`] on `<path>`.
    Mutex,
    /// [`SemaphoreMutex`] on `<path>` (nodes in `<path>/locks`, `<path>/leases`).
    Semaphore,
    /// [`ReadWriteLock::read_lock`] on `<path>`.
    RwRead,
    /// [`ReadWriteLock::write_lock`] on `<path>`.
    RwWrite,
    /// [`MultiLock`] on `<path>/a` and `<path>/b`.
    Multi,
}

/// Every lock type, every strategy, both halves of each read/write lock.
pub const ALL: [Kind; 13] = [
    Kind::Ephemeral,
    Kind::Sequential(WaitStrategy::Herd),
    Kind::Sequential(WaitStrategy::Predecessor),
    Kind::WriteLock,
    Kind::SharedRead(WaitStrategy::Herd),
    Kind::SharedRead(WaitStrategy::Predecessor),
    Kind::SharedWrite(WaitStrategy::Herd),
    Kind::SharedWrite(WaitStrategy::Predecessor),
    Kind::Mutex,
    Kind::Semaphore,
    Kind::RwRead,
    Kind::RwWrite,
    Kind::Multi,
];

/// A held lock of any kind.
#[derive(Debug)]
pub enum Held {
    /// Every kind but [`Kind::Multi`].
    One(LockGuard),
    /// [`Kind::Multi`].
    Multi(MultiGuard),
}

impl Held {
    /// The fencing tokens, one per lock node.
    pub fn tokens(&self) -> Vec<i64> {
        match self {
            Held::One(g) => vec![g.fencing_token()],
            Held::Multi(g) => g.fencing_tokens(),
        }
    }

    /// The lock nodes.
    pub fn paths(&self) -> Vec<String> {
        match self {
            Held::One(g) => vec![g.path().to_owned()],
            Held::Multi(g) => g.guards().iter().map(|g| g.path().to_owned()).collect(),
        }
    }

    /// See [`LockGuard::lost`].
    pub fn lost(&self) -> Pin<Box<dyn Future<Output = LostReason> + Send>> {
        match self {
            Held::One(g) => Box::pin(g.lost()),
            Held::Multi(g) => Box::pin(g.lost()),
        }
    }

    /// See [`LockGuard::release`].
    pub async fn release(self) -> Result<()> {
        match self {
            Held::One(g) => g.release().await,
            Held::Multi(g) => g.release().await,
        }
    }
}

impl Kind {
    /// The exclusive kind of the same lock: what keeps this kind waiting.
    pub fn exclusive(self) -> Kind {
        match self {
            Kind::SharedRead(s) => Kind::SharedWrite(s),
            Kind::RwRead => Kind::RwWrite,
            k => k,
        }
    }

    /// Whether waiters watch something every contender changes (a folder's children, or the
    /// one fixed lock node) rather than only the node that blocks them.
    pub fn herd(self) -> bool {
        matches!(
            self,
            Kind::Ephemeral
                | Kind::Sequential(WaitStrategy::Herd)
                | Kind::SharedRead(WaitStrategy::Herd)
                | Kind::SharedWrite(WaitStrategy::Herd)
        )
    }

    /// The folders holding this kind's lock nodes on `path`.
    pub fn dirs(self, path: &str) -> Vec<String> {
        match self {
            Kind::Semaphore => vec![format!("{path}/leases"), format!("{path}/locks")],
            Kind::Multi => vec![format!("{path}/a"), format!("{path}/b")],
            _ => vec![path.to_owned()],
        }
    }

    /// A string in the path of this kind's (first) lock node and of no folder or other node
    /// it creates first.
    pub fn node_marker(self) -> &'static str {
        match self {
            Kind::Ephemeral => "/lock",
            Kind::Sequential(_) | Kind::Mutex | Kind::Multi => "-lock-",
            Kind::WriteLock => "/x-",
            Kind::SharedRead(_) => "-read-",
            Kind::SharedWrite(_) => "-write-",
            Kind::Semaphore => "-lease-",
            Kind::RwRead => "__READ__",
            Kind::RwWrite => "__WRIT__",
        }
    }

    /// A name for paths and messages.
    pub fn name(self) -> String {
        format!("{self:?}")
            .to_lowercase()
            .replace(|c: char| !c.is_ascii_alphanumeric(), "")
    }

    /// Takes the lock on `path`, counting into `stats`: `wait` `None` waits as long as it
    /// takes, `Some(ZERO)` tries once (`try_*` where the type has it), `Some(d)` waits at
    /// most `d`. `Ok(None)` when it did not come.
    pub async fn acquire(
        self,
        c: &Client,
        path: &str,
        stats: &Arc<LockStats>,
        wait: Option<Duration>,
    ) -> Result<Option<Held>> {
        let st = stats.clone();
        let one = |r: Result<Option<LockGuard>>| r.map(|g| g.map(Held::One));
        let some = |r: Result<LockGuard>| r.map(|g| Some(Held::One(g)));
        let try_once = wait == Some(Duration::ZERO);
        match self {
            Kind::Ephemeral => {
                let l = EphemeralLock::new(c, format!("{path}/lock")).with_stats(st);
                match wait {
                    None => some(l.lock().await),
                    Some(_) if try_once => one(l.try_lock().await),
                    Some(d) => one(l.lock_timeout(d).await),
                }
            }
            Kind::Sequential(s) => {
                let l = SequentialLock::new(c, path).with_strategy(s).with_stats(st);
                match wait {
                    None => some(l.lock().await),
                    Some(_) if try_once => one(l.try_lock().await),
                    Some(d) => one(l.lock_timeout(d).await),
                }
            }
            Kind::WriteLock => {
                let l = WriteLock::new(c, path).with_stats(st);
                match wait {
                    None => some(l.lock().await),
                    Some(_) if try_once => one(l.try_lock().await),
                    Some(d) => one(l.lock_timeout(d).await),
                }
            }
            Kind::SharedRead(s) => {
                let l = SharedLock::new(c, path).with_strategy(s).with_stats(st);
                match wait {
                    None => some(l.read().await),
                    Some(_) if try_once => one(l.try_read().await),
                    Some(d) => one(l.read_timeout(d).await),
                }
            }
            Kind::SharedWrite(s) => {
                let l = SharedLock::new(c, path).with_strategy(s).with_stats(st);
                match wait {
                    None => some(l.write().await),
                    Some(_) if try_once => one(l.try_write().await),
                    Some(d) => one(l.write_timeout(d).await),
                }
            }
            Kind::Mutex => {
                let l = Mutex::new(c, path).with_stats(st);
                match wait {
                    None => some(l.acquire().await),
                    Some(d) => one(l.acquire_timeout(d).await),
                }
            }
            Kind::Semaphore => {
                let l = SemaphoreMutex::new(c, path).with_stats(st);
                match wait {
                    None => some(l.acquire().await),
                    Some(d) => one(l.acquire_timeout(d).await),
                }
            }
            Kind::RwRead => {
                let l = ReadWriteLock::new(c, path).with_stats(st);
                match wait {
                    None => some(l.read_lock().await),
                    Some(d) => one(l.read_lock_timeout(d).await),
                }
            }
            Kind::RwWrite => {
                let l = ReadWriteLock::new(c, path).with_stats(st);
                match wait {
                    None => some(l.write_lock().await),
                    Some(d) => one(l.write_lock_timeout(d).await),
                }
            }
            Kind::Multi => {
                let l = MultiLock::from_mutexes(vec![
                    Mutex::new(c, format!("{path}/a")).with_stats(st.clone()),
                    Mutex::new(c, format!("{path}/b")).with_stats(st),
                ]);
                match wait {
                    None => l.acquire().await.map(|g| Some(Held::Multi(g))),
                    Some(d) => l.acquire_timeout(d).await.map(|g| g.map(Held::Multi)),
                }
            }
        }
    }

    /// Takes the lock, waiting as long as it takes; panics on error.
    pub async fn take(self, c: &Client, path: &str, stats: &Arc<LockStats>) -> Held {
        self.acquire(c, path, stats, None)
            .await
            .unwrap_or_else(|e| panic!("{self:?}: acquire: {e}"))
            .expect("an unbounded wait ends with the lock")
    }
}

/// The ephemeral nodes under `path` (at any depth), with their owners, sorted.
pub async fn ephemerals(client: &Client, path: &str) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    let mut todo = vec![path.to_owned()];
    while let Some(p) = todo.pop() {
        let children = match client.get_children(&p).await {
            Ok(c) => c,
            Err(e) if e.is_no_node() => continue,
            Err(e) => panic!("get_children {p}: {e}"),
        };
        for child in children {
            let child = format!("{p}/{child}");
            match client.exists(&child).await.expect("exists") {
                Some(stat) if stat.ephemeral_owner != 0 => {
                    out.push((child, stat.ephemeral_owner));
                }
                Some(_) => todo.push(child),
                None => {}
            }
        }
    }
    out.sort();
    out
}
