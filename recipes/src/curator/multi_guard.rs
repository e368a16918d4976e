//! [`MultiGuard`]: proof of holding every lock of a [`super::MultiLock`], one [`LockGuard`]
//! per mutex.
//!
//! Invariants: the guards stay in acquisition order; they are released in reverse order,
//! explicitly or when dropped (then in one background task, still in order); a guarded write
//! checks every lock node.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use shepherd_client::{MultiBuilder, WriteResult};

use crate::error::Result;
use crate::guard::Guard;
use crate::lock_guard::{LockGuard, guarded_write};
use crate::lost::LostReason;

/// Proof of holding every lock of a [`MultiLock`](super::MultiLock): one [`LockGuard`] per
/// mutex, in order. Its [`Guard::fencing_token`] is one token per lock, [`Guard::lost`] fires
/// with the first lock lost, and [`Guard::release`] goes in reverse order.
#[derive(Debug, Default)]
#[must_use = "dropping the guard releases the locks"]
pub struct MultiGuard {
    guards: Vec<LockGuard>,
}

impl MultiGuard {
    /// The guards, in acquisition order.
    pub fn guards(&self) -> &[LockGuard] {
        &self.guards
    }

    pub(crate) fn push(&mut self, guard: LockGuard) {
        self.guards.push(guard);
    }
}

impl Guard for MultiGuard {
    type Token = Vec<i64>;

    fn fencing_token(&self) -> Vec<i64> {
        self.guards.iter().map(Guard::fencing_token).collect()
    }

    fn paths(&self) -> Vec<&str> {
        self.guards.iter().map(LockGuard::path).collect()
    }

    /// The first lock's (in acquisition order) that was lost.
    fn lost_reason(&self) -> Option<LostReason> {
        self.guards.iter().find_map(Guard::lost_reason)
    }

    fn lost(&self) -> impl Future<Output = LostReason> + Send + 'static {
        let mut all: Vec<Pin<Box<dyn Future<Output = LostReason> + Send>>> = self
            .guards
            .iter()
            .map(|g| Box::pin(g.lost()) as Pin<Box<_>>)
            .collect();
        std::future::poll_fn(move |cx| {
            if all.is_empty() {
                return Poll::Ready(LostReason::Released);
            }
            for f in &mut all {
                if let Poll::Ready(reason) = f.as_mut().poll(cx) {
                    return Poll::Ready(reason);
                }
            }
            Poll::Pending
        })
    }

    fn write<F>(&self, build: F) -> impl Future<Output = Result<Vec<WriteResult>>> + Send
    where
        F: for<'a> FnOnce(MultiBuilder<'a>) -> MultiBuilder<'a>,
    {
        let paths: Vec<&str> = self.guards.iter().map(LockGuard::path).collect();
        let write = self
            .guards
            .first()
            .map(|first| guarded_write(first.client(), &paths, build));
        async move {
            match write {
                Some(write) => write.await,
                None => Ok(Vec::new()),
            }
        }
    }

    async fn release(mut self) -> Result<()> {
        let mut first_error = None;
        while let Some(guard) = self.guards.pop() {
            if let Err(e) = guard.release().await {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

impl Drop for MultiGuard {
    fn drop(&mut self) {
        let guards = std::mem::take(&mut self.guards);
        if guards.is_empty() {
            return;
        }
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    for guard in guards.into_iter().rev() {
                        if let Err(e) = guard.release().await {
                            tracing::warn!(error = %e, "background release of a multi-lock failed");
                        }
                    }
                });
            }
            // Each guard still deletes its node on its own runtime.
            Err(_) => drop(guards),
        }
    }
}
