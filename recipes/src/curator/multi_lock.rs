//! [`MultiLock`]: Curator's `InterProcessMultiLock`, several [`Mutex`]es taken as one.
//!
//! Layout: that of each [`Mutex`]. Locks are taken in the order given (give every process the
//! same order, or two of them can deadlock).
//!
//! Invariants: all or nothing: if one lock fails or times out, those already taken are
//! released, in reverse order, before the call returns; a [`MultiGuard`] releases in reverse
//! order too, explicitly or when dropped (then in one background task, still in order).

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use shepherd_client::{Client, MultiBuilder, WriteResult};

use super::Mutex;
use crate::contend::Wait;
use crate::error::Result;
use crate::lock_guard::{LockGuard, LostReason, guarded_write};

/// All-or-nothing acquisition of several mutexes.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let server = shepherd_server::Server::builder().start().await?;
/// # let client = shepherd_client::Client::connect(&server.connect_string()).await?;
/// # client.create("/config", b"v1", &shepherd_client::CreateOptions::persistent()).await?;
/// use shepherd_recipes::MultiLock;
/// let both = MultiLock::new(&client, ["/locks/a", "/locks/b"]);
/// let guard = both.acquire().await?; // "/locks/a", then "/locks/b"; all or nothing
/// let tokens = guard.fencing_tokens(); // one per lock, in order
/// assert_eq!(tokens.len(), 2);
/// // Checks both lock nodes, then writes.
/// guard.write(|m| m.set_data("/config", b"v2", None)).await?;
/// guard.release().await?; // "/locks/b" first, then "/locks/a"
/// # server.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct MultiLock {
    locks: Vec<Mutex>,
}

impl MultiLock {
    /// A [`Mutex`] per path, taken in this order.
    pub fn new<I>(client: &Client, paths: I) -> MultiLock
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        MultiLock::from_mutexes(paths.into_iter().map(|p| Mutex::new(client, p)).collect())
    }

    /// These mutexes, taken in this order (each keeps its own reentrancy).
    pub fn from_mutexes(locks: Vec<Mutex>) -> MultiLock {
        MultiLock { locks }
    }

    /// The mutexes.
    pub fn mutexes(&self) -> &[Mutex] {
        &self.locks
    }

    /// Takes every lock, in order, waiting as long as it takes.
    ///
    /// # Errors
    /// The first lock's error (see [`Mutex::acquire`]), after releasing the ones taken.
    ///
    /// # Cancellation
    /// Safe: locks taken so far are released in the background (not necessarily in reverse
    /// order), the pending one as for [`Mutex::acquire`].
    pub async fn acquire(&self) -> Result<MultiGuard> {
        let guard = self.acquire_wait(Wait::Forever).await?;
        Ok(guard.expect("an unbounded wait ends only with the lock or an error"))
    }

    /// Takes every lock within `timeout` in all; `Ok(None)` (everything released, in reverse
    /// order) if that fails.
    ///
    /// # Errors
    /// As [`MultiLock::acquire`].
    ///
    /// # Cancellation
    /// As [`MultiLock::acquire`].
    pub async fn acquire_timeout(&self, timeout: Duration) -> Result<Option<MultiGuard>> {
        self.acquire_wait(Wait::timeout(timeout)).await
    }

    async fn acquire_wait(&self, wait: Wait) -> Result<Option<MultiGuard>> {
        let mut taken = MultiGuard { guards: Vec::new() };
        for lock in &self.locks {
            match lock.acquire_wait(wait).await {
                Ok(Some(guard)) => taken.guards.push(guard),
                Ok(None) => {
                    taken.release().await?;
                    return Ok(None);
                }
                Err(e) => {
                    if let Err(release) = taken.release().await {
                        tracing::warn!(error = %release, "releasing a partial multi-lock failed");
                    }
                    return Err(e);
                }
            }
        }
        Ok(Some(taken))
    }
}

/// Proof of holding every lock of a [`MultiLock`]: one [`LockGuard`] per mutex, in order.
#[derive(Debug)]
#[must_use = "dropping the guard releases the locks"]
pub struct MultiGuard {
    guards: Vec<LockGuard>,
}

impl MultiGuard {
    /// The guards, in acquisition order.
    pub fn guards(&self) -> &[LockGuard] {
        &self.guards
    }

    /// Each lock's fencing token (see [`LockGuard::fencing_token`]), in acquisition order.
    pub fn fencing_tokens(&self) -> Vec<i64> {
        self.guards.iter().map(LockGuard::fencing_token).collect()
    }

    /// Resolves with the first lost lock's reason (see [`LockGuard::lost`]).
    pub fn lost(&self) -> impl Future<Output = LostReason> + Send + 'static {
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

    /// Runs `build`'s writes as one multi that checks every lock node first.
    ///
    /// # Errors
    /// As [`LockGuard::write`]: [`crate::Error::LockLost`] if any lock node is gone.
    pub async fn write<F>(&self, build: F) -> Result<Vec<WriteResult>>
    where
        F: for<'a> FnOnce(MultiBuilder<'a>) -> MultiBuilder<'a>,
    {
        let Some(first) = self.guards.first() else {
            return Ok(Vec::new());
        };
        let paths: Vec<&str> = self.guards.iter().map(LockGuard::path).collect();
        guarded_write(first.client(), &paths, build).await
    }

    /// Releases every lock in reverse order, waiting for each.
    ///
    /// # Errors
    /// The first failed release (see [`LockGuard::release`]); the others are still attempted.
    ///
    /// # Cancellation
    /// The locks not released yet go in the background.
    pub async fn release(mut self) -> Result<()> {
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
