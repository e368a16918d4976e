//! [`LockGuard`]: proof of holding one lock node, what every lock type here but
//! [`crate::MultiLock`] yields.
//!
//! What a guard owns: the lock node (path and creation zxid), a monitor task that publishes
//! *why* the lock can no longer be trusted, and the duty to delete the node exactly once.
//!
//! Invariants:
//! * the node is deleted when the last handle on it goes: by [`LockGuard::release`] (awaited)
//!   or, if that never completed, in a task spawned on the runtime the lock was acquired on;
//! * only the node created at the recorded czxid is ever deleted;
//! * the lost reason goes from `None` to `Some` at most once and never back: once the lock is
//!   lost it stays lost (a new acquisition makes a new guard);
//! * the monitor runs only while a handle exists; it is aborted before the node is deleted, so
//!   our own delete never reports the lock as lost.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use shepherd_client::{
    Client, Error as ZkError, EventType, MultiBuilder, SessionState, WriteResult,
};
use tokio::runtime::Handle;
use tokio::sync::watch;
use tokio::task::AbortHandle;
use tokio::time::{Instant, sleep_until};

use crate::error::{Error, Result};
use crate::guard::Guard;
use crate::lost::LostReason;
use crate::node::{Created, delete_owned, wait_not_disconnected};

/// The shared state behind one lock node; reentrant holds share one.
#[derive(Debug)]
pub(crate) struct Held {
    client: Client,
    path: String,
    czxid: i64,
    lost: watch::Receiver<Option<LostReason>>,
    monitor: AbortHandle,
    runtime: Handle,
    /// Set once our delete has succeeded, so `Drop` has nothing left to do.
    released: AtomicBool,
}

impl Held {
    async fn release_now(&self) -> Result<()> {
        self.monitor.abort();
        delete_owned(&self.client, &self.path, self.czxid).await?;
        self.released.store(true, Ordering::Release);
        Ok(())
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.monitor.abort();
        if self.released.load(Ordering::Acquire) {
            return;
        }
        let (client, path, czxid) = (
            self.client.clone(),
            std::mem::take(&mut self.path),
            self.czxid,
        );
        self.runtime.spawn(async move {
            if let Err(e) = delete_owned(&client, &path, czxid).await {
                tracing::warn!(%path, error = %e, "background release of a lock node failed");
            }
        });
    }
}

/// Proof of holding one lock node of this session; see [`Guard`] for what it offers.
///
/// Reentrant locks ([`crate::Mutex`], [`crate::ReadWriteLock`]) hand out several guards for
/// one node; the node is deleted when the last of them goes.
#[derive(Debug)]
#[must_use = "dropping the guard releases the lock"]
pub struct LockGuard {
    held: Arc<Held>,
}

impl LockGuard {
    /// Wraps a freshly acquired node and starts its monitor. Must run inside a tokio runtime.
    pub(crate) fn new(client: &Client, created: Created) -> LockGuard {
        let (tx, rx) = watch::channel(None);
        let runtime = Handle::current();
        let monitor = runtime
            .spawn(monitor(
                client.clone(),
                created.path.clone(),
                created.czxid,
                tx,
            ))
            .abort_handle();
        LockGuard {
            held: Arc::new(Held {
                client: client.clone(),
                path: created.path,
                czxid: created.czxid,
                lost: rx,
                monitor,
                runtime,
                released: AtomicBool::new(false),
            }),
        }
    }

    pub(crate) fn weak(&self) -> Weak<Held> {
        Arc::downgrade(&self.held)
    }

    pub(crate) fn from_weak(weak: &Weak<Held>) -> Option<LockGuard> {
        weak.upgrade().map(|held| LockGuard { held })
    }

    pub(crate) fn client(&self) -> &Client {
        &self.held.client
    }

    /// The lock node's path (chroot stripped).
    pub fn path(&self) -> &str {
        &self.held.path
    }
}

impl Guard for LockGuard {
    type Token = i64;

    fn fencing_token(&self) -> i64 {
        self.held.czxid
    }

    fn paths(&self) -> Vec<&str> {
        vec![self.path()]
    }

    fn lost_reason(&self) -> Option<LostReason> {
        *self.held.lost.borrow()
    }

    fn lost(&self) -> impl Future<Output = LostReason> + Send + 'static {
        let mut rx = self.held.lost.clone();
        async move {
            match rx.wait_for(Option::is_some).await {
                Ok(reason) => reason.unwrap_or(LostReason::Released),
                Err(_) => LostReason::Released,
            }
        }
    }

    fn write<F>(&self, build: F) -> impl Future<Output = Result<Vec<WriteResult>>> + Send
    where
        F: for<'a> FnOnce(MultiBuilder<'a>) -> MultiBuilder<'a>,
    {
        guarded_write(&self.held.client, &[self.path()], build)
    }

    async fn release(self) -> Result<()> {
        match Arc::try_unwrap(self.held) {
            Ok(held) => held.release_now().await,
            Err(_) => Ok(()),
        }
    }
}

/// Runs `build`'s ops after an existence check on each of `nodes`. `build` runs now, so the
/// future holds only the finished multi (and is `Send` whatever `build` captured).
pub(crate) fn guarded_write<'c, F>(
    client: &'c Client,
    nodes: &[&str],
    build: F,
) -> impl Future<Output = Result<Vec<WriteResult>>> + Send + use<'c, F>
where
    F: for<'a> FnOnce(MultiBuilder<'a>) -> MultiBuilder<'a>,
{
    let checks = nodes.len();
    let multi = build(nodes.iter().fold(client.multi(), |m, n| m.check(n, -1)));
    async move {
        match multi.commit().await {
            Ok(mut results) => Ok(results.split_off(checks)),
            Err(ZkError::MultiFailed { index, .. }) if index < checks => {
                Err(Error::LockLost(LostReason::NodeDeleted))
            }
            Err(ZkError::MultiFailed { index, code }) => Err(Error::Client(ZkError::MultiFailed {
                index: index - checks,
                code,
            })),
            Err(e) => Err(e.into()),
        }
    }
}

async fn monitor(client: Client, path: String, czxid: i64, tx: watch::Sender<Option<LostReason>>) {
    let reason = tokio::select! {
        r = watch_node(&client, &path, czxid) => r,
        r = watch_session(&client) => r,
    };
    tx.send_replace(Some(reason));
}

fn session_reason(e: &ZkError) -> Option<LostReason> {
    match e {
        ZkError::SessionExpired => Some(LostReason::SessionExpired),
        ZkError::Closed | ZkError::AuthFailed => Some(LostReason::SessionClosed),
        _ => None,
    }
}

/// Resolves when our node is deleted or replaced (an exists watch, re-armed after data
/// changes; the client re-arms it across reconnections). Pends forever if the node cannot be
/// watched for another reason; the session side still reports.
async fn watch_node(client: &Client, path: &str, czxid: i64) -> LostReason {
    loop {
        match client.exists_w(path).await {
            Ok((Some(stat), watcher)) if stat.czxid == czxid => match watcher.await {
                Ok(ev) if ev.event_type == EventType::NodeDeleted => {
                    return LostReason::NodeDeleted;
                }
                Ok(_) => {}
                Err(e) => return session_reason(&e).unwrap_or(LostReason::SessionClosed),
            },
            Ok(_) => return LostReason::NodeDeleted,
            Err(ZkError::ConnectionLoss) => wait_not_disconnected(client).await,
            Err(e) => match session_reason(&e) {
                Some(r) => return r,
                None => std::future::pending().await,
            },
        }
    }
}

/// Resolves when the session ends, or stays disconnected for its negotiated timeout.
async fn watch_session(client: &Client) -> LostReason {
    let mut rx = client.status_watch();
    let mut deadline: Option<Instant> = None;
    loop {
        let status = rx.borrow_and_update().clone();
        match status.state {
            SessionState::Expired => return LostReason::SessionExpired,
            SessionState::Closed | SessionState::AuthFailed => return LostReason::SessionClosed,
            SessionState::Disconnected => {
                deadline.get_or_insert_with(|| Instant::now() + status.timeout);
            }
            SessionState::Connected => deadline = None,
        }
        let changed = match deadline {
            Some(at) => tokio::select! {
                r = rx.changed() => r,
                () = sleep_until(at) => return LostReason::Disconnected,
            },
            None => rx.changed().await,
        };
        if changed.is_err() {
            // The client is gone; its last (terminal) state was already handled above unless
            // it raced with the close.
            return match rx.borrow().state {
                SessionState::Expired => LostReason::SessionExpired,
                _ => LostReason::SessionClosed,
            };
        }
    }
}
