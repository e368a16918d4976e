//! One chaos run: set up the resources, start the workers and the fault driver, let them run
//! for the configured time, then stop the faults, let every worker finish, and check what must
//! hold once everything is quiet (no orphan lock node, every session closed).
//!
//! [`Ctx`] is what workers and the driver share: the server, the checker, the counters, one
//! [`Slot`] per worker through which the driver finds its targets, and the stop signal.
//!
//! Invariants: every wait is bounded (a hang is a violation, never a stuck run); every fault
//! stops and every frozen session is thawed before the final checks; the run's own admin
//! session is never faulted.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use shepherd_client::{Client, CreateOptions};
use shepherd_server::Server;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::{Instant, timeout};

use super::checker::{Checker, Holder, Kind, Nodes};
use super::driver;
use super::family::{FAMILIES, ROOT};
use super::report::{Counters, Report};
use super::transport::{Transport, connect};
use super::worker;

/// What one run does.
#[derive(Debug, Clone)]
pub struct ChaosConfig {
    /// Seeds every random choice (the schedule of faults, waits, holds); the interleaving of
    /// a multi-threaded runtime is not replayed by it.
    pub seed: u64,
    /// Concurrent clients, one session each.
    pub clients: usize,
    /// How long the faults run (tokio's clock).
    pub duration: Duration,
    /// The session timeout the clients ask for; every other bound is a multiple of it.
    pub session_timeout: Duration,
    /// Mean time between two faults.
    pub fault_interval: Duration,
    /// How the clients connect.
    pub transport: Transport,
    /// Print a line of counts to stderr this often.
    pub progress: Option<Duration>,
}

impl ChaosConfig {
    /// The bound on one worker iteration (acquire, hold, release), past which it hangs: the
    /// longest wait, hold and pause, plus room for an expiry and a reconnect.
    pub fn hang_bound(&self) -> Duration {
        self.session_timeout * 12
    }
}

/// What the driver knows of one worker.
#[derive(Debug, Default)]
pub struct Slot {
    /// Its current session (0 while it has none).
    pub session: AtomicI64,
    /// Whether it is inside a lock now.
    pub holding: AtomicBool,
    /// Set by the driver: pause past the session timeout while holding, then write.
    pub pause: AtomicBool,
    /// What it is doing, for a hang's message.
    pub step: Mutex<&'static str>,
}

impl Slot {
    /// Records what the worker is doing.
    pub fn step(&self, step: &'static str) {
        *self.step.lock().unwrap_or_else(PoisonError::into_inner) = step;
    }

    /// What the worker was doing.
    pub fn current_step(&self) -> &'static str {
        *self.step.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Shared by the workers and the driver.
pub struct Ctx {
    /// The server under test.
    pub server: Arc<Server>,
    /// The run's configuration.
    pub config: ChaosConfig,
    /// The safety checks.
    pub checker: Checker,
    /// The counts.
    pub counters: Counters,
    /// One per worker.
    pub slots: Vec<Slot>,
    /// A session of its own, never faulted: the resource as a paused holder reaches it after
    /// its lock session is gone (see `worker`).
    pub storage: Client,
    stop: watch::Sender<bool>,
    next_holder: AtomicU64,
}

impl Ctx {
    /// Whether the run is stopping.
    pub fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// Resolves once the run is stopping. Cancellation safe.
    pub async fn stopped(&self) {
        let mut rx = self.stop.subscribe();
        let _ = rx.wait_for(|s| *s).await;
    }

    /// A fresh holder id.
    pub fn next_holder(&self) -> u64 {
        self.next_holder.fetch_add(1, Relaxed)
    }

    /// The lock nodes in the tree now (one atomic snapshot, under the server's core lock).
    pub fn lock_nodes(&self) -> Nodes {
        let prefix = format!("{ROOT}/locks/");
        self.server.inspect(|core| {
            core.dump_tree()
                .into_iter()
                .filter(|n| n.path.starts_with(&prefix))
                .map(|n| (n.path, n.stat.czxid))
                .collect()
        })
    }

    /// Checks exclusion among the holders of `family` (every family when `None`).
    pub fn check_exclusion(&self, family: Option<usize>) {
        // The holders first, then the tree: see `Checker::check_exclusion`.
        let holders = self.checker.inside(family);
        if holders.len() > 1 {
            let nodes = self.lock_nodes();
            self.checker.check_exclusion(&holders, &nodes);
        }
    }

    /// Whether every lock node of `holder` is in the tree now.
    pub fn is_valid(&self, holder: &Holder) -> bool {
        let nodes = self.lock_nodes();
        holder
            .nodes
            .iter()
            .all(|(path, czxid)| nodes.get(path) == Some(czxid))
    }

    /// Opens a worker session.
    pub async fn connect(&self) -> Result<Client, shepherd_client::Error> {
        let t = self.config.session_timeout;
        match timeout(t * 4, connect(&self.server, self.config.transport, t)).await {
            Ok(result) => result,
            Err(_) => Err(shepherd_client::Error::Io(
                std::io::ErrorKind::TimedOut.into(),
            )),
        }
    }
}

/// Runs the chaos against `server` and reports.
///
/// # Panics
/// If the run's own setup (its admin session, the resource nodes) fails: without them there
/// is nothing to run.
pub async fn run(server: Arc<Server>, config: ChaosConfig) -> Report {
    let t = config.session_timeout;
    let admin = connect(&server, config.transport, t * 4)
        .await
        .expect("the admin session connects");
    for path in [
        ROOT.to_string(),
        format!("{ROOT}/locks"),
        format!("{ROOT}/resource"),
    ] {
        create_if_missing(&admin, &path).await;
    }
    for family in &FAMILIES {
        create_if_missing(&admin, &family.resource_path()).await;
    }
    let (stop, _) = watch::channel(false);
    let ctx = Arc::new(Ctx {
        server: server.clone(),
        checker: Checker::new(FAMILIES.len()),
        counters: Counters::default(),
        slots: (0..config.clients).map(|_| Slot::default()).collect(),
        storage: admin.clone(),
        config: config.clone(),
        stop,
        next_holder: AtomicU64::new(1),
    });
    let started = Instant::now();
    let mut workers = JoinSet::new();
    for index in 0..config.clients {
        workers.spawn(worker::run(ctx.clone(), index));
    }
    let driver = tokio::spawn(driver::run(ctx.clone()));
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
    // The driver stops first: every rule removed, every frozen session thawed.
    if timeout(t * 4, driver).await.is_err() {
        ctx.checker
            .violation(Kind::Hang, "the fault driver did not stop".into());
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
    let _ = timeout(t * 2, admin.close()).await;
    let (violations, details) = ctx.checker.violations();
    Report {
        seed: config.seed,
        ran_for,
        counters: ctx.counters.clone(),
        violations,
        details,
    }
}

async fn create_if_missing(admin: &Client, path: &str) {
    match admin.create(path, b"", &CreateOptions::persistent()).await {
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
    let settled = timeout(settle, ctx.server.wait_for(|core| orphans(core).is_empty())).await;
    if settled.is_err() {
        for (path, owner) in ctx.server.inspect(orphans) {
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
            c.faults.iter().map(|n| n.get()).sum::<u64>(),
            c.sessions_replaced.get(),
            violations.values().sum::<u64>()
        );
    }
}
