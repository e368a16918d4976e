//! The per-session nemesis of the embedded server: at random intervals, a random fault on a
//! random worker's session, through the server's test controls only. Where the nemesis of
//! [`super`] breaks the whole server (every connection cut or held, a process killed, a member
//! stopped), this one picks one session at a time, so that a run meets every way one client's
//! link can fail while the others go on.
//!
//! Faults ([`FaultKind`]): a connection cut (`close_connection`); a lost reply
//! (`Fault::ApplyThenDrop` on the session's next request: applied, the reply never sent, the
//! connection closed); a dropped request (`Fault::DropBeforeApply`); a delayed reply
//! (`Fault::Delay`, up to half the session timeout); a short freeze (a partition healed well
//! within the session timeout); a long freeze (past the session timeout: the server expires
//! the session during the partition); an expiry (`expire_session`); and a holder's pause,
//! asked of a worker that holds a lock (its [`Slot`]'s `pause`; the worker carries it out).
//! A spared slot never gets a fault that may end its session.
//!
//! Invariants: a rule is removed once it fired or after twice the session timeout, so the
//! server's rule list stays short; at most a tenth of the workers are frozen at once; when the
//! run stops, every rule is removed and every frozen session thawed before [`run`] returns.

mod fault_kind;
mod slot;

pub use fault_kind::FaultKind;
pub use slot::Slot;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shepherd_server::{Fault, FaultId, FaultRule, Server};
use tokio::sync::{Mutex, watch};
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep};

use crate::proof::count::Count;

/// What the session nemesis works on: the server, one slot per worker, and the count of each
/// fault carried out.
#[derive(Debug)]
pub struct Sessions {
    /// The server whose sessions are faulted.
    pub server: Arc<Server>,
    /// One per worker.
    pub slots: Vec<Slot>,
    /// Faults carried out, by kind (the order of [`FaultKind::ALL`]).
    pub faults: [Count; FaultKind::ALL.len()],
}

/// How the session nemesis paces its faults.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// Seeds the choice of faults, targets and gaps.
    pub seed: u64,
    /// The workers' session timeout: freezes and delays are scaled to it.
    pub session_timeout: Duration,
    /// Mean time between two faults.
    pub interval: Duration,
    /// The rules match requests under this path only (the run's own nodes).
    pub path_prefix: String,
}

struct Pending {
    id: FaultId,
    kind: FaultKind,
    until: Instant,
}

/// Injects faults until `stop` turns true, then removes every rule and thaws every session.
pub async fn run(sessions: &Sessions, schedule: &Schedule, mut stop: watch::Receiver<bool>) {
    let mut rng = StdRng::seed_from_u64(schedule.seed);
    let t = schedule.session_timeout;
    let server = &sessions.server;
    let mut pending: Vec<Pending> = Vec::new();
    let frozen: Arc<Mutex<HashSet<i64>>> = Arc::default();
    let mut thaws = JoinSet::new();
    let max_frozen = (sessions.slots.len() / 10).max(1);
    let total: u32 = FaultKind::ALL.iter().map(|k| k.weight()).sum();
    loop {
        let gap = schedule.interval.mul_f64(rng.random_range(0.0..2.0));
        tokio::select! {
            _ = stop.wait_for(|s| *s) => break,
            () = sleep(gap) => {}
        }
        sweep(sessions, &mut pending, false);
        while thaws.try_join_next().is_some() {}
        let mut pick = rng.random_range(0..total);
        let kind = FaultKind::ALL
            .into_iter()
            .find(|k| {
                if pick < k.weight() {
                    true
                } else {
                    pick -= k.weight();
                    false
                }
            })
            .unwrap_or(FaultKind::Cut);
        let holders_only = kind == FaultKind::HolderPause;
        let slots = &sessions.slots;
        let targets: Vec<usize> = (0..slots.len())
            .filter(|&i| slots[i].session.load(Relaxed) != 0)
            .filter(|&i| !holders_only || slots[i].holding.load(Relaxed))
            .filter(|&i| !kind.may_end_session() || !slots[i].spared)
            .collect();
        if targets.is_empty() {
            continue;
        }
        let slot = &slots[targets[rng.random_range(0..targets.len())]];
        let session = slot.session.load(Relaxed);
        let rule = |fault| {
            FaultRule::new(fault)
                .session(session)
                .path_prefix(&schedule.path_prefix)
        };
        let added = match kind {
            FaultKind::Cut => {
                if server.controls().close_connection(session).is_ok() {
                    sessions.faults[kind as usize].inc();
                }
                None
            }
            FaultKind::LostReply => Some(server.controls().add_fault(rule(Fault::ApplyThenDrop))),
            FaultKind::DropRequest => {
                Some(server.controls().add_fault(rule(Fault::DropBeforeApply)))
            }
            FaultKind::Delay => {
                let delay = t.mul_f64(rng.random_range(0.05..0.5));
                Some(server.controls().add_fault(rule(Fault::Delay(delay))))
            }
            FaultKind::ShortFreeze | FaultKind::LongFreeze => {
                let mut set = frozen.lock().await;
                if set.len() < max_frozen
                    && !set.contains(&session)
                    && server.controls().freeze_session(session).is_ok()
                {
                    set.insert(session);
                    sessions.faults[kind as usize].inc();
                    let span = if kind == FaultKind::ShortFreeze {
                        rng.random_range(0.1..0.5)
                    } else {
                        rng.random_range(1.3..2.0)
                    };
                    let (server, frozen) = (server.clone(), frozen.clone());
                    thaws.spawn(async move {
                        sleep(t.mul_f64(span)).await;
                        server.controls().thaw_session(session);
                        frozen.lock().await.remove(&session);
                    });
                }
                None
            }
            FaultKind::Expire => {
                server.controls().expire_session(session);
                sessions.faults[kind as usize].inc();
                None
            }
            // Counted by the worker once it has paused.
            FaultKind::HolderPause => {
                slot.pause.store(true, Relaxed);
                None
            }
        };
        if let Some(id) = added {
            pending.push(Pending {
                id,
                kind,
                until: Instant::now() + t * 2,
            });
        }
    }
    sweep(sessions, &mut pending, true);
    server.controls().clear_faults();
    thaws.abort_all();
    while thaws.join_next().await.is_some() {}
    for session in frozen.lock().await.drain() {
        server.controls().thaw_session(session);
    }
    for slot in &sessions.slots {
        slot.pause.store(false, Relaxed);
    }
}

/// Counts the rules that fired and removes them, and those past their time (all when `all`).
fn sweep(sessions: &Sessions, pending: &mut Vec<Pending>, all: bool) {
    let server = &sessions.server;
    let now = Instant::now();
    pending.retain(|p| {
        let fired = server.controls().fault_fire_count(p.id).unwrap_or(0) > 0;
        if fired {
            sessions.faults[p.kind as usize].inc();
        }
        let done = fired || all || now >= p.until;
        if done {
            server.controls().remove_fault(p.id);
        }
        !done
    });
}

/// The mean gap between faults for `clients` workers and session timeout `t`: about
/// one fault per client per two session timeouts.
pub fn default_interval(clients: usize, t: Duration) -> Duration {
    (t * 2) / u32::try_from(clients.max(1)).unwrap_or(u32::MAX)
}
