//! The nemeses: what goes wrong with the server while a workload runs, and the server each one
//! works on ([`Target`]).
//!
//! | Target | Faults |
//! |---|---|
//! | embedded server | `cut` (every session's connection closed), `hold` (every session's connection frozen, then thawed) |
//! | `shepherd serve --data-dir` | `kill-9` (SIGKILL, then a restart on the same directory and port) |
//! | in-process ensemble | `stop` (a member's listener and connections go), `partition` (a member's connections unanswered), `freeze` (the sessions connected to a member frozen, then thawed); the first fault stops the leader, later ones are the leader's half the time (`stop-leader`, `partition-leader`) |
//! | real ZooKeeper standalone (our own JVM) | `kill-9` (SIGKILL, then a restart on the same dataDir and port) |
//! | real three-JVM ensemble | `stop` (`kill -9` of a member's JVM, started again), `partition` (`SIGSTOP`, then `SIGCONT`); the first fault stops the leader, later ones are the leader's half the time (`stop-leader`, `partition-leader`) |
//! | any server named by its address | none |
//!
//! [`session`] is the chaos run's nemesis of the embedded server, one session at a time (cut,
//! lost reply, dropped request, delay, short and long freeze, expiry, a holder's pause), paced
//! by time rather than by operations; its own invariants are in its docs.
//!
//! Invariants: every fault injected is healed before [`run`] returns, and each one is counted by
//! its kind in the returned list. Faults are paced by the workload's progress (one every so
//! many operations begun), so that a short run on a fast server meets as many as a long one on
//! a slow server; each lasts [`HOLD`] (the fault itself, what the nemesis simulates; nothing
//! waits on it for a result), or half the pace in operations if the workload goes on
//! meanwhile, or until the workload ends.

mod owned;
pub mod serve;
pub mod session;
pub mod zookeeper;

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::sync::watch;

use serve::DurableServe;
use shepherd_testkit::TestServer;
use shepherd_testkit::ensemble::TestEnsemble;
use zookeeper::OwnZooKeeper;

/// How long a fault lasts before it is healed.
pub const HOLD: Duration = Duration::from_millis(150);

/// A server under test, as a nemesis sees it.
#[derive(Debug)]
pub enum Target {
    /// The embedded server.
    Embedded(TestServer),
    /// `shepherd serve --data-dir` as a child.
    Durable(DurableServe),
    /// An ensemble (in-process or the real one).
    Ensemble(TestEnsemble),
    /// Our own real ZooKeeper standalone.
    ZooKeeper(OwnZooKeeper),
    /// A server we only know the address of: no faults.
    External(String),
}

/// A fault in force, until healed.
#[derive(Debug)]
enum Injected {
    Nothing,
    Held(Vec<i64>),
    Killed,
    Stopped(u64),
    Partitioned(u64),
}

impl Target {
    /// The connect string for clients.
    pub fn connect_string(&self) -> String {
        match self {
            Target::Embedded(server) => server.connect.clone(),
            Target::Durable(serve) => serve.connect_string().to_owned(),
            Target::Ensemble(ensemble) => ensemble.connect_string(),
            Target::ZooKeeper(zk) => zk.connect_string(),
            Target::External(connect) => connect.clone(),
        }
    }

    /// Whether this target has any fault to inject.
    pub fn has_faults(&self) -> bool {
        !matches!(self, Target::External(_))
    }

    /// Injects fault `number` (from 0), drawn with `rng`: its kind, and what healing it takes.
    async fn inject(&mut self, rng: &mut StdRng, number: usize) -> (&'static str, Injected) {
        match self {
            Target::Embedded(server) => {
                let Some(handle) = server.embedded() else {
                    return ("none", Injected::Nothing);
                };
                let sessions: Vec<i64> =
                    handle.controls().sessions().iter().map(|s| s.id).collect();
                if rng.random_bool(0.5) {
                    for s in &sessions {
                        // A session without a connection just now is no error.
                        let _ = handle.controls().close_connection(*s);
                    }
                    ("cut", Injected::Nothing)
                } else {
                    let held = sessions
                        .into_iter()
                        .filter(|s| handle.controls().freeze_session(*s).is_ok())
                        .collect();
                    ("hold", Injected::Held(held))
                }
            }
            Target::Durable(serve) => {
                serve.kill9();
                ("kill-9", Injected::Killed)
            }
            Target::ZooKeeper(zk) => {
                zk.kill9();
                ("kill-9", Injected::Killed)
            }
            Target::Ensemble(ensemble) => {
                // The first fault stops the leader, so that even a short run loses it;
                // after that, half the faults are the leader's.
                let first = number == 0;
                let (id, leader) = if first || rng.random_bool(0.5) {
                    (ensemble.leader().await, true)
                } else {
                    let ids = ensemble.member_ids();
                    let id = ids[rng.random_range(0..ids.len())];
                    (id, false)
                };
                // In process, a third of the later faults freeze the member's sessions
                // instead: their connections held, unanswered, then thawed.
                if let (false, Some(handle)) = (first, ensemble.embedded()) {
                    if rng.random_bool(1.0 / 3.0) {
                        let held = handle
                            .controls()
                            .sessions()
                            .iter()
                            .map(|s| s.id)
                            .filter(|s| handle.members().of_session(*s) == Some(id))
                            .filter(|s| handle.controls().freeze_session(*s).is_ok())
                            .collect();
                        return ("freeze", Injected::Held(held));
                    }
                }
                match (first || rng.random_bool(0.5), leader) {
                    (true, true) => {
                        ensemble.stop_member(id).await;
                        ("stop-leader", Injected::Stopped(id))
                    }
                    (true, false) => {
                        ensemble.stop_member(id).await;
                        ("stop", Injected::Stopped(id))
                    }
                    (false, true) => {
                        ensemble.partition_member(id).await;
                        ("partition-leader", Injected::Partitioned(id))
                    }
                    (false, false) => {
                        ensemble.partition_member(id).await;
                        ("partition", Injected::Partitioned(id))
                    }
                }
            }
            Target::External(_) => ("none", Injected::Nothing),
        }
    }

    /// Undoes `injected`; returns once the server serves again.
    async fn heal(&mut self, injected: Injected) {
        match (self, injected) {
            (Target::Embedded(server), Injected::Held(sessions)) => {
                if let Some(handle) = server.embedded() {
                    for s in sessions {
                        handle.controls().thaw_session(s);
                    }
                }
            }
            (Target::Ensemble(ensemble), Injected::Held(sessions)) => {
                if let Some(handle) = ensemble.embedded() {
                    for s in sessions {
                        handle.controls().thaw_session(s);
                    }
                }
            }
            (Target::Durable(serve), Injected::Killed) => serve.restart().await,
            (Target::ZooKeeper(zk), Injected::Killed) => zk.restart().await,
            (Target::Ensemble(ensemble), Injected::Stopped(id)) => ensemble.start_member(id).await,
            (Target::Ensemble(ensemble), Injected::Partitioned(id)) => {
                ensemble.heal_member(id).await
            }
            _ => {}
        }
    }

    /// Stops what this value started (an external server is left alone).
    pub async fn shutdown(self) {
        match self {
            Target::Embedded(server) => server.shutdown().await,
            Target::Ensemble(ensemble) => ensemble.shutdown().await,
            Target::Durable(_) | Target::ZooKeeper(_) | Target::External(_) => {}
        }
    }
}

/// Injects faults into `target`, one each time `every` more operations have begun (as
/// `progress` counts them), until `stop` turns true; heals the last one, and returns the kinds
/// injected, in order.
pub async fn run(
    target: &mut Target,
    mut progress: watch::Receiver<u64>,
    mut stop: watch::Receiver<bool>,
    every: u64,
    seed: u64,
) -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(seed ^ 0x006e_656d_6573_6973);
    let mut faults = Vec::new();
    if !target.has_faults() {
        return faults;
    }
    let every = every.max(1);
    let mut mark = every;
    loop {
        let reached = tokio::select! {
            r = progress.wait_for(|n| *n >= mark) => r.is_ok(),
            _ = stop.wait_for(|s| *s) => false,
        };
        if !reached || *stop.borrow() {
            break;
        }
        let (kind, injected) = target.inject(&mut rng, faults.len()).await;
        faults.push(kind.to_owned());
        // A cut is over once done; anything else lasts its hold, or half the pace in
        // operations if the workload goes on meanwhile (a member stopped, the rest serving).
        let lasting = !matches!(injected, Injected::Nothing);
        let until = *progress.borrow() + every / 2;
        let stopped = lasting && hold(&mut stop, &mut progress, until).await;
        target.heal(injected).await;
        if stopped {
            break;
        }
        mark = *progress.borrow() + every;
    }
    faults
}

/// Waits [`HOLD`], or less if `progress` reaches `until` or `stop` turns true first: whether
/// `stop` did.
async fn hold(
    stop: &mut watch::Receiver<bool>,
    progress: &mut watch::Receiver<u64>,
    until: u64,
) -> bool {
    if *stop.borrow() {
        return true;
    }
    tokio::select! {
        _ = tokio::time::sleep(HOLD) => {}
        _ = progress.wait_for(|n| *n >= until) => {}
        _ = stop.wait_for(|s| *s) => {}
    }
    *stop.borrow()
}

/// How many faults of each kind `faults` lists, as `kill-9×3 cut×2` (sorted by kind), or
/// `none`.
pub fn summary(faults: &[String]) -> String {
    let mut kinds: Vec<(&str, usize)> = Vec::new();
    for f in faults {
        match kinds.iter_mut().find(|(k, _)| *k == f) {
            Some((_, n)) => *n += 1,
            None => kinds.push((f, 1)),
        }
    }
    kinds.sort();
    if kinds.is_empty() {
        return "none".to_owned();
    }
    let parts: Vec<String> = kinds.iter().map(|(k, n)| format!("{k}×{n}")).collect();
    parts.join(" ")
}
