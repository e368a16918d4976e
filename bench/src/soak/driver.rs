//! The fault driver: at random intervals, a random fault on a random worker's session, through
//! the server's test controls only.
//!
//! Faults: a connection cut (`close_connection`); a lost reply (`Fault::ApplyThenDrop` on the
//! session's next request: applied, the reply never sent, the connection closed); a dropped
//! request (`Fault::DropBeforeApply`); a delayed reply (`Fault::Delay`, up to half the session
//! timeout); a short freeze (a partition healed well within the session timeout); a long freeze
//! (past the session timeout: the server expires the session during the partition); an expiry
//! (`expire_session`); and a holder's pause (see `worker`), asked of a worker that holds a lock.
//!
//! Invariants: a rule is removed once it fired or after twice the session timeout, so the
//! server's rule list stays short; at most a tenth of the workers are frozen at once; when the
//! run stops, every rule is removed and every frozen session thawed before this returns.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shepherd_server::{Fault, FaultId, FaultRule};
use tokio::sync::Mutex;
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep};

use super::engine::Ctx;
use super::family::ROOT;

/// The faults, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// `close_connection`.
    Cut,
    /// `Fault::ApplyThenDrop`.
    LostReply,
    /// `Fault::DropBeforeApply`.
    DropRequest,
    /// `Fault::Delay`.
    Delay,
    /// A freeze shorter than the session timeout.
    ShortFreeze,
    /// A freeze past the session timeout.
    LongFreeze,
    /// `expire_session`.
    Expire,
    /// A holder paused past its session timeout, then writing.
    HolderPause,
}

impl FaultKind {
    /// Every kind.
    pub const ALL: [FaultKind; 8] = [
        FaultKind::Cut,
        FaultKind::LostReply,
        FaultKind::DropRequest,
        FaultKind::Delay,
        FaultKind::ShortFreeze,
        FaultKind::LongFreeze,
        FaultKind::Expire,
        FaultKind::HolderPause,
    ];

    /// Its name in the report.
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::Cut => "cut",
            FaultKind::LostReply => "lost-reply",
            FaultKind::DropRequest => "dropped-request",
            FaultKind::Delay => "delay",
            FaultKind::ShortFreeze => "short-freeze",
            FaultKind::LongFreeze => "long-freeze",
            FaultKind::Expire => "expiry",
            FaultKind::HolderPause => "holder-pause",
        }
    }

    /// How often the driver picks it, relative to the others. Expiries and long freezes each
    /// end a session, so they are rarer than the faults a session survives.
    fn weight(self) -> u32 {
        match self {
            FaultKind::Cut | FaultKind::LostReply | FaultKind::DropRequest => 4,
            FaultKind::Delay => 3,
            FaultKind::ShortFreeze => 2,
            FaultKind::LongFreeze | FaultKind::Expire | FaultKind::HolderPause => 1,
        }
    }
}

struct Pending {
    id: FaultId,
    kind: FaultKind,
    until: Instant,
}

/// Injects faults until the run stops, then removes every rule and thaws every session.
pub async fn run(ctx: Arc<Ctx>) {
    let mut rng = StdRng::seed_from_u64(ctx.config.seed);
    let t = ctx.config.session_timeout;
    let mut pending: Vec<Pending> = Vec::new();
    let frozen: Arc<Mutex<HashSet<i64>>> = Arc::default();
    let mut thaws = JoinSet::new();
    let max_frozen = (ctx.config.clients / 10).max(1);
    let total: u32 = FaultKind::ALL.iter().map(|k| k.weight()).sum();
    loop {
        let gap = ctx
            .config
            .fault_interval
            .mul_f64(rng.random_range(0.0..2.0));
        tokio::select! {
            () = ctx.stopped() => break,
            () = sleep(gap) => {}
        }
        sweep(&ctx, &mut pending, false);
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
        let targets: Vec<usize> = (0..ctx.slots.len())
            .filter(|&i| ctx.slots[i].session.load(Relaxed) != 0)
            .filter(|&i| !holders_only || ctx.slots[i].holding.load(Relaxed))
            .collect();
        if targets.is_empty() {
            continue;
        }
        let slot = &ctx.slots[targets[rng.random_range(0..targets.len())]];
        let session = slot.session.load(Relaxed);
        let rule = |fault| FaultRule::new(fault).session(session).path_prefix(ROOT);
        let added = match kind {
            FaultKind::Cut => {
                if ctx.server.controls().close_connection(session).is_ok() {
                    ctx.counters.faults[kind as usize].inc();
                }
                None
            }
            FaultKind::LostReply => {
                Some(ctx.server.controls().add_fault(rule(Fault::ApplyThenDrop)))
            }
            FaultKind::DropRequest => Some(
                ctx.server
                    .controls()
                    .add_fault(rule(Fault::DropBeforeApply)),
            ),
            FaultKind::Delay => {
                let delay = t.mul_f64(rng.random_range(0.05..0.5));
                Some(ctx.server.controls().add_fault(rule(Fault::Delay(delay))))
            }
            FaultKind::ShortFreeze | FaultKind::LongFreeze => {
                let mut set = frozen.lock().await;
                if set.len() < max_frozen
                    && !set.contains(&session)
                    && ctx.server.controls().freeze_session(session).is_ok()
                {
                    set.insert(session);
                    ctx.counters.faults[kind as usize].inc();
                    let span = if kind == FaultKind::ShortFreeze {
                        rng.random_range(0.1..0.5)
                    } else {
                        rng.random_range(1.3..2.0)
                    };
                    let (ctx, frozen) = (ctx.clone(), frozen.clone());
                    thaws.spawn(async move {
                        sleep(t.mul_f64(span)).await;
                        ctx.server.controls().thaw_session(session);
                        frozen.lock().await.remove(&session);
                    });
                }
                None
            }
            FaultKind::Expire => {
                ctx.server.controls().expire_session(session);
                ctx.counters.faults[kind as usize].inc();
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
    sweep(&ctx, &mut pending, true);
    ctx.server.controls().clear_faults();
    thaws.abort_all();
    while thaws.join_next().await.is_some() {}
    for session in frozen.lock().await.drain() {
        ctx.server.controls().thaw_session(session);
    }
    for slot in &ctx.slots {
        slot.pause.store(false, Relaxed);
    }
}

/// Counts the rules that fired and removes them, and those past their time (all when `all`).
fn sweep(ctx: &Ctx, pending: &mut Vec<Pending>, all: bool) {
    let now = Instant::now();
    pending.retain(|p| {
        let fired = ctx.server.controls().fault_fire_count(p.id).unwrap_or(0) > 0;
        if fired {
            ctx.counters.faults[p.kind as usize].inc();
        }
        let done = fired || all || now >= p.until;
        if done {
            ctx.server.controls().remove_fault(p.id);
        }
        !done
    });
}

/// The driver's mean gap between faults for `clients` workers and session timeout `t`: about
/// one fault per client per two session timeouts.
pub fn default_interval(clients: usize, t: Duration) -> Duration {
    (t * 2) / u32::try_from(clients.max(1)).unwrap_or(u32::MAX)
}
