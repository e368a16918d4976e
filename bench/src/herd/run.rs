//! [`Run`]: one run of the herd benchmark, one recipe with N contenders, and what it
//! [`Measured`].
//!
//! The steps are those of the [module documentation](super): a coordinator session blocks the
//! lock, N sessions queue behind it, and once all are blocked and nothing moves, the
//! coordinator releases and the N hand-offs are counted.
//!
//! Invariants: every run has its own folder under [`ROOT`], so runs never see each other's
//! nodes; everything a run does, cleanup aside, happens before its one deadline; cleanup
//! (sessions first, whose ephemerals go with them, then the folder) always happens, and is
//! bounded too. A failed run is an `Err` in its [`RunResult`], not a panic, and not the end of
//! the benchmark.

use std::time::Duration;

use shepherd_client::{Client, CreateOptions};
use shepherd_recipes::{AnyLock, Guard, Lock, LockStats};
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep, sleep_until, timeout, timeout_at};

use super::probe::Probe;
use super::recipe::Recipe;
use crate::error::{Error, Result};
use crate::folder;
use crate::sessions::{connect_many, connect_one};

/// Where the benchmark's nodes live (one child per run, deleted after it).
pub const ROOT: &str = "/shepherd-bench";

/// One run's parameters.
pub struct Run<'a> {
    /// The server's connect string.
    pub connect: &'a str,
    /// Where its notification count is read.
    pub probe: &'a Probe<'a>,
    /// The recipe every contender uses.
    pub recipe: Recipe,
    /// How many contenders (sessions) queue on the lock.
    pub contenders: usize,
    /// The run's own folder, under [`ROOT`].
    pub dir: String,
    /// The limit of the whole run: sessions, queueing and every hand-off.
    pub timeout: Duration,
    /// How long the counters must stay still, with every contender blocked, before the
    /// coordinator releases.
    pub settle: Duration,
}

/// What one successful run measured (hand-off phase only).
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Acquisitions by contenders: each followed a release.
    pub handoffs: u64,
    /// Watch notifications the server sent.
    pub notifications: u64,
    /// getChildren calls by all contenders.
    pub get_children: u64,
    /// From the first release to the last contender's release.
    pub wall: Duration,
    /// Median gap between an acquisition and the latest release before it.
    pub handoff_p50: Duration,
}

impl Measured {
    /// Notifications per hand-off.
    pub fn notifications_per_handoff(&self) -> f64 {
        self.notifications as f64 / self.handoffs.max(1) as f64
    }

    /// getChildren calls per hand-off.
    pub fn get_children_per_handoff(&self) -> f64 {
        self.get_children as f64 / self.handoffs.max(1) as f64
    }
}

/// One run: a recipe, a contender count, and what came of it.
#[derive(Debug)]
pub struct RunResult {
    /// The recipe.
    pub recipe: Recipe,
    /// Contenders.
    pub contenders: u32,
    /// The measurements, or why the run failed.
    pub outcome: Result<Measured>,
}

impl Run<'_> {
    /// Runs it, cleanup included.
    pub async fn execute(&self) -> Result<Measured> {
        let deadline = Instant::now() + self.timeout;
        let connect = self.connect;
        let coordinator = match timeout_at(deadline, connect_one(connect)).await {
            Ok(Ok(client)) => client,
            Ok(Err(source)) => {
                return Err(Error::Client {
                    what: format!("cannot connect to {connect}"),
                    source,
                });
            }
            Err(_) => return Err(Error::TimedOut(format!("connecting to {connect}"))),
        };
        let mut clients = Vec::with_capacity(self.contenders);
        let outcome = timeout_at(deadline, self.measure(deadline, &coordinator, &mut clients))
            .await
            .unwrap_or_else(|_| {
                Err(Error::TimedOut(format!(
                    "after {} s",
                    self.timeout.as_secs()
                )))
            });
        // Cleanup, bounded whatever happened: sessions first (their ephemerals go with them),
        // then the run's folders.
        close_all(clients).await;
        let cleanup = async {
            let _ = coordinator.delete(&self.dir, None).await;
            let _ = coordinator.close().await;
        };
        let _ = timeout(Duration::from_secs(10), cleanup).await;
        outcome
    }

    /// Everything but the cleanup: the sessions it opens go into `clients`, whatever happens.
    async fn measure(
        &self,
        deadline: Instant,
        coordinator: &Client,
        clients: &mut Vec<Client>,
    ) -> Result<Measured> {
        let (n, dir) = (self.contenders, self.dir.as_str());
        folder::ensure(coordinator, dir).await?;
        let blocker = self.recipe.blocker(dir);
        let blocker = coordinator
            .create(
                &blocker.path,
                blocker.data,
                &CreateOptions::new(blocker.mode),
            )
            .await
            .map_err(|source| Error::Client {
                what: "cannot create the coordinator's lock node".to_owned(),
                source,
            })?
            .0;

        connect_many(self.connect, n, clients).await?;
        let stats = LockStats::new();
        let mut contenders = JoinSet::new();
        for (index, client) in clients.iter().enumerate() {
            let lock = self
                .recipe
                .kind(index)
                .build(client, dir)
                .with_stats(stats.clone());
            contenders.spawn(contend(lock, index, deadline));
        }
        self.wait_queued(&stats, deadline, &mut contenders).await?;

        let before = self.probe.read(&stats).await?;
        let start = Instant::now();
        coordinator
            .delete(&blocker, None)
            .await
            .map_err(|source| Error::Client {
                what: "cannot release the coordinator's lock node".to_owned(),
                source,
            })?;
        let mut acquisitions = Vec::with_capacity(n);
        while let Some(joined) = contenders.join_next().await {
            match joined {
                Ok(Ok(at)) => acquisitions.push(at),
                Ok(Err(e)) => return Err(e),
                Err(source) => {
                    return Err(Error::Task {
                        what: "a contender",
                        source,
                    });
                }
            }
        }
        let wall = start.elapsed();
        let after = self.probe.read(&stats).await?;
        Ok(Measured {
            handoffs: acquisitions.len() as u64,
            notifications: after.notifications_since(&before),
            get_children: after.get_children_since(&before),
            wall,
            handoff_p50: handoff_p50(start, &acquisitions),
        })
    }

    /// Waits until every contender is blocked on a watch and nothing has moved for the
    /// settle period.
    async fn wait_queued(
        &self,
        stats: &LockStats,
        deadline: Instant,
        contenders: &mut JoinSet<Result<Instant>>,
    ) -> Result<()> {
        let n = self.contenders as u64;
        loop {
            tokio::select! {
                _ = stats.wait_for(|s| s.waiting >= n) => {}
                joined = contenders.join_next() => {
                    return Err(match joined {
                        Some(Ok(Err(e))) => e,
                        Some(Err(source)) => Error::Task { what: "a contender", source },
                        _ => Error::Unblocked,
                    });
                }
                () = sleep_until(deadline) => {
                    return Err(Error::TimedOut(format!(
                        "with {} of {n} contenders queued",
                        stats.snapshot().waiting
                    )));
                }
            }
            let first = self.probe.read(stats).await?;
            sleep(self.settle).await;
            let second = self.probe.read(stats).await?;
            if first == second && second.stats.waiting == n {
                return Ok(());
            }
        }
    }
}

/// Closes every session at once, waiting at most 10 s.
async fn close_all(clients: Vec<Client>) {
    let mut set = JoinSet::new();
    for client in clients {
        set.spawn(async move {
            let _ = timeout(Duration::from_secs(10), client.close()).await;
        });
    }
    while set.join_next().await.is_some() {}
}

/// One contender (number `index`): acquire once, release at once. Returns the instant of
/// acquisition (which is also when its release starts).
async fn contend(lock: AnyLock, index: usize, deadline: Instant) -> Result<Instant> {
    let guard = match lock.acquire_until(deadline).await {
        Ok(Some(guard)) => guard,
        Ok(None) => {
            return Err(Error::TimedOut(format!(
                "waiting for the lock (contender {index})"
            )));
        }
        Err(source) => {
            return Err(Error::Recipe {
                what: format!("contender {index}"),
                source,
            });
        }
    };
    let acquired = Instant::now();
    guard.release().await.map_err(|source| Error::Recipe {
        what: format!("contender {index} cannot release"),
        source,
    })?;
    Ok(acquired)
}

/// The median, over acquisitions, of the time since the latest release before each (the
/// first release is `start`; every other release starts the instant its holder acquired).
fn handoff_p50(start: Instant, acquisitions: &[Instant]) -> Duration {
    let mut releases: Vec<Instant> = acquisitions.to_vec();
    releases.push(start);
    releases.sort();
    let mut gaps: Vec<Duration> = acquisitions
        .iter()
        .map(|&at| {
            let before = releases.partition_point(|&r| r < at);
            match before.checked_sub(1) {
                Some(i) => at - releases[i],
                None => Duration::ZERO,
            }
        })
        .collect();
    gaps.sort();
    gaps.get(gaps.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handoff_gaps_follow_the_latest_release() {
        let t = Instant::now();
        let ms = Duration::from_millis;
        let p50 = handoff_p50(t, &[t + ms(1), t + ms(4), t + ms(6)]);
        // Gaps 1, 3, 2 ms.
        assert_eq!(p50, ms(2));
        assert_eq!(handoff_p50(t, &[]), Duration::ZERO);
    }
}
