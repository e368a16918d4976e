//! One proof run: a workload against a server, with or without its nemesis, for a bounded
//! number of operations and time; then the workload's checker on the history. What the `proof`
//! binary and the `cargo test` runs share.
//!
//! Invariants: the run is bounded (the plan's op count and duration, each operation by
//! [`OP_TIMEOUT`](crate::proof::workload::OP_TIMEOUT), every setup wait by
//! [`WAIT`](shepherd_testkit::WAIT)); every fault the nemesis injected is healed before the history is
//! checked, and counted in the report; a server this run started is stopped before it returns.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use shepherd_client::Client;
use tokio::sync::watch;

use crate::proof::Verdict;
use crate::proof::history::{History, Recorder};
use crate::proof::judge::{judge, line};
use crate::proof::nemesis::serve::DurableServe;
use crate::proof::nemesis::zookeeper::OwnZooKeeper;
use crate::proof::nemesis::{self, Target};
use crate::proof::workload::{Plan, Workload};
use shepherd_testkit::ensemble::TestEnsemble;

/// The servers a run can target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    /// A fresh embedded server; nemesis: cut and held connections.
    Embedded,
    /// `shepherd serve --data-dir` as a child; nemesis: kill -9 and restart.
    Durable,
    /// A fresh in-process ensemble of three; nemesis: stop and partition members.
    Ensemble,
    /// Real ZooKeeper standalone: our own JVM (nemesis: kill -9 and restart), or the one
    /// `--connect` names (no nemesis).
    ZooKeeper,
    /// The real three-JVM ensemble `.ci/real-zk-ensemble.sh` started; nemesis: kill -9 and
    /// SIGSTOP of members.
    ZkEnsemble,
}

impl ServerKind {
    /// Every kind, in report order.
    pub const ALL: [ServerKind; 5] = [
        ServerKind::Embedded,
        ServerKind::Durable,
        ServerKind::Ensemble,
        ServerKind::ZooKeeper,
        ServerKind::ZkEnsemble,
    ];

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Embedded => "embedded",
            ServerKind::Durable => "durable",
            ServerKind::Ensemble => "ensemble",
            ServerKind::ZooKeeper => "zookeeper",
            ServerKind::ZkEnsemble => "zk-ensemble",
        }
    }
}

impl fmt::Display for ServerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ServerKind {
    type Err = String;

    fn from_str(s: &str) -> Result<ServerKind, String> {
        ServerKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = ServerKind::ALL.iter().map(|k| k.name()).collect();
                format!("no server {s:?}; one of {}", names.join(", "))
            })
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The workload.
    pub workload: Workload,
    /// The server.
    pub server: ServerKind,
    /// An address to use instead of starting the server (no nemesis then).
    pub connect: Option<String>,
    /// At most this many operations.
    pub ops: u64,
    /// And none begun after this long.
    pub duration: Duration,
    /// How many clients (one worker each).
    pub clients: usize,
    /// The seed of every random choice.
    pub seed: u64,
    /// Whether the nemesis runs.
    pub nemesis: bool,
    /// The `shepherd` binary, for [`ServerKind::Durable`].
    pub shepherd_bin: Option<PathBuf>,
}

impl RunConfig {
    /// A run of `workload` on `server`: 300 operations, 30 s at most, 4 clients, seed 1, the
    /// nemesis on.
    pub fn new(workload: Workload, server: ServerKind) -> RunConfig {
        RunConfig {
            workload,
            server,
            connect: None,
            ops: 300,
            duration: Duration::from_secs(30),
            clients: 4,
            seed: 1,
            nemesis: true,
            shepherd_bin: None,
        }
    }
}

/// What a run came to.
#[derive(Debug)]
pub struct RunReport {
    /// The workload run.
    pub workload: Workload,
    /// The server it ran on.
    pub server: ServerKind,
    /// The address given instead of starting the server, if any.
    pub connect: Option<String>,
    /// Every event recorded.
    pub history: History,
    /// The faults injected, by kind, in order.
    pub faults: Vec<String>,
    /// The checker's verdict.
    pub verdict: Verdict,
}

impl fmt::Display for RunReport {
    /// `proof: WORKLOAD on SERVER: N events, F faults (kinds), verdict V`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = match &self.connect {
            Some(connect) => format!(" at {connect}"),
            None => String::new(),
        };
        write!(
            f,
            "proof: {} on {}{at}: {} events, {} faults ({}), verdict {}",
            self.workload,
            self.server,
            self.history.events.len(),
            self.faults.len(),
            nemesis::summary(&self.faults),
            line(&self.verdict)
        )
    }
}

/// Starts what `config` asks for: the target server.
///
/// # Panics
/// If the server cannot be started, or the real ensemble is not named
/// (`SHEPHERD_REAL_ENSEMBLE_MEMBERS`), or the durable run has no `shepherd` binary.
pub async fn start_target(config: &RunConfig) -> Target {
    if let Some(connect) = &config.connect {
        return Target::External(connect.clone());
    }
    match config.server {
        ServerKind::Embedded => Target::Embedded(shepherd_testkit::embedded().await),
        ServerKind::Durable => {
            let bin = config
                .shepherd_bin
                .clone()
                .expect("a durable run needs the shepherd binary");
            let dir = scratch_dir("durable");
            Target::Durable(DurableServe::start(&bin, &dir).await)
        }
        ServerKind::Ensemble => Target::Ensemble(TestEnsemble::in_process(3).await),
        ServerKind::ZooKeeper => {
            Target::ZooKeeper(OwnZooKeeper::start(&scratch_dir("zookeeper")).await)
        }
        ServerKind::ZkEnsemble => Target::Ensemble(
            TestEnsemble::real()
                .await
                .expect("SHEPHERD_REAL_ENSEMBLE_MEMBERS names the real ensemble"),
        ),
    }
}

/// Runs `config` on `target` (which the caller started, and may have broken on purpose):
/// the workload in a fresh folder, the nemesis beside it if asked, then the check.
pub async fn run_on(config: &RunConfig, target: &mut Target) -> RunReport {
    let connect = target.connect_string();
    let mut clients: Vec<Client> = Vec::new();
    for _ in 0..config.clients.max(1) {
        clients.push(shepherd_testkit::connect(&connect).await);
    }
    let root = shepherd_testkit::unique(&format!("proof-{}", config.workload));
    let recorder = Recorder::new();
    let plan = Plan::new(config.ops, config.duration, config.seed);
    let (stop_tx, stop_rx) = watch::channel(false);
    let workload = config.workload.run(&clients, &root, &plan, &recorder);
    let faults = if config.nemesis {
        // About six faults in a run that uses its whole op budget.
        let every = (config.ops / 7).max(10);
        let nemesis = nemesis::run(target, plan.progress(), stop_rx, every, config.seed);
        let work = async {
            workload.await;
            let _ = stop_tx.send(true);
        };
        let ((), faults) = tokio::join!(work, nemesis);
        faults
    } else {
        workload.await;
        Vec::new()
    };
    for client in &clients {
        // Best effort: a session the nemesis ended is closed already.
        let _ = tokio::time::timeout(shepherd_testkit::WAIT, client.close()).await;
    }
    let history = recorder.history();
    let verdict = judge(config.workload, &history);
    RunReport {
        workload: config.workload,
        server: config.server,
        connect: config.connect.clone(),
        history,
        faults,
        verdict,
    }
}

/// [`start_target`], [`run_on`], and the target stopped.
pub async fn run(config: &RunConfig) -> RunReport {
    let mut target = start_target(config).await;
    let report = run_on(config, &mut target).await;
    target.shutdown().await;
    report
}

/// A fresh directory under the system's temporary one, for a server's data.
fn scratch_dir(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "shepherd-proof-{what}-{}-{}",
        std::process::id(),
        shepherd_testkit::unique("d")
            .trim_start_matches('/')
            .replace('/', "-")
    ));
    std::fs::create_dir_all(&dir).expect("create a scratch directory");
    dir
}
