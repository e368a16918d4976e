//! The lock chaos run: many clients contend for every lock recipe of `shepherd-recipes`
//! against an embedded server while the per-session nemesis
//! ([`nemesis::session`](crate::proof::nemesis::session)) faults their sessions through the
//! server's test controls, and two judges hold the run to a lock's safety: the lock checker
//! ([`check::locks`](crate::proof::check::locks)) against the tree and the fencing tokens as
//! the run goes, and the mutex checks of [`judge`](crate::proof::judge) against the history
//! the spared writers recorded. The `proof` binary runs it with `--workload locks` on the real
//! clock over loopback TCP; its test (`tests.rs`) runs it with a fixed seed on a paused clock.
//! docs/chaos.md describes the properties, the fencing token and the faults.
//!
//! | File | Owns |
//! |---|---|
//! | `mod.rs` | one run: setup, workers and nemesis, stop, the final checks |
//! | [`config`] | what a run does, and its bounds |
//! | [`ctx`] | what the workers share |
//! | [`counters`], [`report`] | the counts, and the end of a run printed |
//! | [`transport`] | TCP or in-memory connections |
//!
//! The worker is the mutex workload's [`contender`], the lock families are
//! [`family`](crate::proof::workload::mutex::family).
//!
//! Invariants: every wait is bounded (a hang is a violation, never a stuck run); every fault
//! stops and every frozen session is thawed before the final checks; the run's own storage
//! session is never faulted.

pub mod config;
pub mod counters;
pub mod ctx;
pub mod report;
pub mod transport;

#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use shepherd_client::{Client, CreateOptions};
use shepherd_server::Server;
use tokio::task::JoinSet;
use tokio::time::{Instant, timeout};

use crate::proof::check::locks::Kind;
use crate::proof::judge::judge;
use crate::proof::nemesis::session::{self, Schedule, Sessions, Slot};
use crate::proof::workload::Workload;
use crate::proof::workload::mutex::contender;
use crate::proof::workload::mutex::family::{FAMILIES, ROOT, assign, is_reader};
pub use config::ChaosConfig;
use ctx::Ctx;
pub use report::Report;
use transport::connect;

/// Runs the chaos against `server` and reports.
///
/// # Panics
/// If the run's own setup (its storage session, the resource nodes) fails: without them there
/// is nothing to run.
pub async fn run(server: Arc<Server>, config: ChaosConfig) -> Report {
    let t = config.session_timeout;
    let storage = connect(&server, config.transport, t * 4)
        .await
        .expect("the storage session connects");
    for path in [
        ROOT.to_string(),
        format!("{ROOT}/locks"),
        format!("{ROOT}/resource"),
    ] {
        create_if_missing(&storage, &path).await;
    }
    for family in &FAMILIES {
        create_if_missing(&storage, &family.resource_path()).await;
    }
    let slots = (0..config.clients)
        .map(|i| Slot::new(ChaosConfig::is_recorded(i, !is_reader(assign(i).0))))
        .collect();
    let sessions = Sessions {
        server: server.clone(),
        slots,
        faults: Default::default(),
    };
    let schedule = Schedule {
        seed: config.seed,
        session_timeout: t,
        interval: config.fault_interval,
        path_prefix: ROOT.to_owned(),
    };
    let ctx = Arc::new(Ctx::new(
        config.clone(),
        sessions,
        FAMILIES.len(),
        storage.clone(),
    ));
    let started = Instant::now();
    let mut workers = JoinSet::new();
    for index in 0..config.clients {
        workers.spawn(contender::run(ctx.clone(), index));
    }
    let nemesis = {
        let (ctx, stop) = (ctx.clone(), ctx.stop.subscribe());
        tokio::spawn(async move { session::run(&ctx.sessions, &schedule, stop).await })
    };
    let progress = config.progress.map(|every| {
        let ctx = ctx.clone();
        tokio::spawn(async move { print_progress(&ctx, every).await })
    });

    tokio::time::sleep(config.duration).await;
    let ran_for = started.elapsed();
    ctx.stop.send_replace(true);
    if let Some(progress) = progress {
        progress.abort();
    }
    // The nemesis stops first: every rule removed, every frozen session thawed.
    if timeout(t * 4, nemesis).await.is_err() {
        ctx.checker
            .violation(Kind::Hang, "the session nemesis did not stop".into());
    }
    let mut clients = Vec::new();
    let all_done = timeout(config.hang_bound() * 2, async {
        while let Some(done) = workers.join_next().await {
            match done {
                Ok(Some(client)) => clients.push(client),
                Ok(None) => {}
                Err(e) => ctx
                    .checker
                    .violation(Kind::Unexpected, format!("a worker panicked: {e}")),
            }
        }
    })
    .await;
    if all_done.is_err() {
        let stuck: Vec<String> = ctx
            .sessions
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.session.load(Relaxed) != 0)
            .map(|(i, s)| format!("worker {i} in {}", s.current_step()))
            .collect();
        ctx.checker.violation(
            Kind::Hang,
            format!("workers did not stop: {}", stuck.join(", ")),
        );
        workers.abort_all();
    }
    check_orphans(&ctx).await;
    for client in clients {
        if timeout(t * 2, client.close()).await.is_err() {
            ctx.checker
                .violation(Kind::Hang, "closing a worker session".into());
        }
    }
    let _ = timeout(t * 2, storage.close()).await;
    let (violations, details) = ctx.checker.violations();
    let history = ctx.recorder.history();
    Report {
        seed: config.seed,
        ran_for,
        counters: ctx.counters.clone(),
        faults: ctx.sessions.faults.clone(),
        events: history.events.len(),
        verdict: judge(Workload::Mutex, &history),
        violations,
        details,
    }
}

async fn create_if_missing(storage: &Client, path: &str) {
    match storage
        .create(path, b"", &CreateOptions::persistent())
        .await
    {
        Ok(_) => {}
        Err(e) if e.is_node_exists() => {}
        Err(e) => panic!("cannot create {path}: {e}"),
    }
}

/// Once every worker is done (its last lock released, its session still open), no lock node
/// of a live session may remain. A dropped acquisition deletes its node in the background,
/// so the tree gets a bounded time to settle first.
async fn check_orphans(ctx: &Ctx) {
    let prefix = format!("{ROOT}/locks/");
    let orphans = |core: &shepherd_server::core::Core| -> Vec<(String, i64)> {
        core.dump_tree()
            .into_iter()
            .filter(|n| n.path.starts_with(&prefix))
            .filter(|n| {
                n.stat.ephemeral_owner != 0
                    && core.session_timeout(n.stat.ephemeral_owner).is_some()
            })
            .map(|n| (n.path, n.stat.ephemeral_owner))
            .collect()
    };
    let settle = ctx.config.session_timeout * 2;
    let settled = timeout(
        settle,
        ctx.server().wait_for(|core| orphans(core).is_empty()),
    )
    .await;
    if settled.is_err() {
        for (path, owner) in ctx.server().inspect(orphans) {
            ctx.checker.violation(
                Kind::Orphan,
                format!("{path} (session 0x{owner:x}) outlived its holder"),
            );
        }
    }
}

async fn print_progress(ctx: &Ctx, every: Duration) {
    let started = Instant::now();
    loop {
        tokio::time::sleep(every).await;
        let c = &ctx.counters;
        let (violations, _) = ctx.checker.violations();
        eprintln!(
            "[{:>5}s] acquired {} writes {} faults {} sessions replaced {} violations {}",
            started.elapsed().as_secs(),
            c.acquired.iter().map(|n| n.get()).sum::<u64>(),
            c.writes_accepted.get(),
            ctx.sessions.faults.iter().map(|n| n.get()).sum::<u64>(),
            c.sessions_replaced.get(),
            violations.values().sum::<u64>()
        );
    }
}
