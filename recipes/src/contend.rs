//! The contention engine of every sequential recipe: create our ephemeral-sequential node,
//! then wait for our turn by one of two [`WaitStrategy`]s, cleaning up on every way out.
//!
//! Invariants:
//! * from the moment the create may be sent until a guard owns the node, a [`Cleanup`] drop
//!   guard owns the duty to delete it, so a timeout, an error or a dropped future never leaves
//!   an orphan; on timeout the delete is awaited before returning, otherwise it runs in the
//!   background (the client applies it after the create, whatever became of its reply);
//! * the turn rule is [`crate::names::evaluate`]; a contender whose own node vanished fails
//!   with [`Error::LockLost`] rather than re-creating it behind the caller's back;
//! * every getChildren, exists and wake-up while contending is counted in [`LockStats`], and
//!   every block on a watch in its `waiting` gauge ([`sleep_on`], which the fixed-node and
//!   lease waits share).

use std::sync::Arc;

use shepherd_client::{Client, Error as ZkError, OneshotWatcher};
use tokio::time::timeout_at;

use crate::error::{Error, Result};
use crate::lock::Wait;
use crate::lock_guard::LockGuard;
use crate::lost::LostReason;
use crate::names::{Kind, Verdict, base, evaluate, join};
use crate::node::{
    Created, Pending, create_sequential, delete_owned, delete_pending, wait_not_disconnected,
};
use crate::stats::LockStats;

/// How a waiting contender learns that its turn may have come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WaitStrategy {
    /// Every waiter leaves a child watch on the lock folder, so every change (a contender
    /// arriving or leaving) wakes every waiter, and all of them re-read the folder: the herd
    /// effect of the first form of ZooKeeper's lock and shared-lock recipes, kept for comparison.
    Herd,
    /// Each waiter watches (exists) only the node that blocks it: the last lower node for a
    /// writer, the last lower write node for a reader. A release wakes only who it concerns.
    #[default]
    Predecessor,
}

/// One lock folder, contended in one way.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Contest<'a> {
    pub(crate) client: &'a Client,
    pub(crate) dir: &'a str,
    pub(crate) stats: &'a Arc<LockStats>,
    pub(crate) strategy: WaitStrategy,
}

impl Contest<'_> {
    /// Creates `dir/prefix<seq>` (`prefix` unique to this attempt) and waits for the turn.
    /// `Ok(None)` when `wait` ran out (our node is deleted by then). `ignore` names a node
    /// that never blocks us.
    pub(crate) async fn acquire(
        &self,
        prefix: &str,
        kind: Kind,
        wait: Wait,
        ignore: Option<&str>,
    ) -> Result<Option<LockGuard>> {
        let pending = Pending::Prefix {
            dir: self.dir.to_owned(),
            prefix: prefix.to_owned(),
        };
        let mut cleanup = Cleanup::new(self.client, pending);
        let created = create_sequential(self.client, self.dir, prefix, b"").await?;
        cleanup.created = Some(created.clone());
        if self
            .wait_turn(base(&created.path), kind, wait, ignore)
            .await?
        {
            cleanup.disarm();
            self.stats.bump(|s| s.acquired += 1);
            Ok(Some(LockGuard::new(self.client, created)))
        } else {
            cleanup.run_now().await?;
            Ok(None)
        }
    }

    /// Whether the turn came (`false`: `wait` ran out).
    async fn wait_turn(
        &self,
        own: &str,
        kind: Kind,
        wait: Wait,
        ignore: Option<&str>,
    ) -> Result<bool> {
        loop {
            self.stats.bump(|s| s.get_children += 1);
            let listed = match self.strategy {
                WaitStrategy::Herd => self
                    .client
                    .get_children_w(self.dir)
                    .await
                    .map(|(c, _, w)| (c, Some(w))),
                WaitStrategy::Predecessor => {
                    self.client.get_children(self.dir).await.map(|c| (c, None))
                }
            };
            let (children, herd_watch) = match listed {
                Ok(listed) => listed,
                Err(ZkError::ConnectionLoss) => {
                    wait_not_disconnected(self.client).await;
                    continue;
                }
                Err(e) if e.is_no_node() => return Err(Error::LockLost(LostReason::NodeDeleted)),
                Err(e) => return Err(e.into()),
            };
            let blocker = match evaluate(&children, own, kind, ignore) {
                Verdict::Acquired => return Ok(true),
                Verdict::Missing => return Err(Error::LockLost(LostReason::NodeDeleted)),
                Verdict::Wait(_) if wait == Wait::No => return Ok(false),
                Verdict::Wait(blocker) => blocker,
            };
            let watcher = match herd_watch {
                Some(w) => w,
                None => {
                    self.stats.bump(|s| s.exists += 1);
                    match self.client.exists_w(&join(self.dir, &blocker)).await {
                        Ok((Some(_), w)) => w,
                        Ok((None, _)) => continue, // gone already: look again
                        Err(ZkError::ConnectionLoss) => {
                            wait_not_disconnected(self.client).await;
                            continue;
                        }
                        Err(e) => return Err(e.into()),
                    }
                }
            };
            if !sleep_on(self.stats, watcher, wait).await? {
                return Ok(false);
            }
        }
    }
}

/// Blocks on a contention `watch` until it fires or `wait` runs out (`Ok(false)`; `Wait::No`
/// is the caller's to handle before, as it never blocks), counted in the `waiting` gauge
/// meanwhile and as a wake-up once it fired.
///
/// Errors: the watch's own (the session ended, say).
pub(crate) async fn sleep_on(
    stats: &Arc<LockStats>,
    watch: OneshotWatcher,
    wait: Wait,
) -> Result<bool> {
    let waiting = stats.waiting();
    let fired = match wait {
        Wait::Until(at) => match timeout_at(at, watch).await {
            Ok(fired) => fired,
            Err(_) => return Ok(false),
        },
        _ => watch.await,
    };
    // Leave the gauge before counting the wake-up: an observer that sees the new count then
    // also sees this waiter out of line until it waits again.
    drop(waiting);
    fired?;
    stats.bump(|s| s.wakeups += 1);
    Ok(true)
}

/// Deletes a contender node that no guard owns yet, unless disarmed: awaited with
/// [`Cleanup::run_now`], else in the background when dropped.
#[derive(Debug)]
pub(crate) struct Cleanup {
    client: Client,
    pending: Pending,
    /// Set once the create's reply (or its recovery) named the node.
    pub(crate) created: Option<Created>,
    armed: bool,
}

impl Cleanup {
    pub(crate) fn new(client: &Client, pending: Pending) -> Cleanup {
        Cleanup {
            client: client.clone(),
            pending,
            created: None,
            armed: true,
        }
    }

    pub(crate) fn disarm(mut self) {
        self.armed = false;
    }

    pub(crate) async fn run_now(mut self) -> Result<()> {
        self.armed = false;
        Ok(cleanup(&self.client, &self.pending, self.created.as_ref()).await?)
    }
}

async fn cleanup(
    client: &Client,
    pending: &Pending,
    created: Option<&Created>,
) -> Result<(), ZkError> {
    match created {
        Some(c) => delete_owned(client, &c.path, c.czxid).await,
        None => delete_pending(client, pending).await,
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return; // no runtime: the node goes with the session
        };
        let (client, pending, created) = (
            self.client.clone(),
            self.pending.clone(),
            self.created.take(),
        );
        runtime.spawn(async move {
            if let Err(e) = cleanup(&client, &pending, created.as_ref()).await {
                tracing::warn!(error = %e, "background cleanup of a contender node failed");
            }
        });
    }
}
