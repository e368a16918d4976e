//! What the workers of one chaos run share: the server and its session nemesis' view of them,
//! the lock checker, the counters, the history recorder, the run's storage session and its
//! stop signal.
//!
//! Invariant: the run's own storage session is never faulted (it has no slot).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use shepherd_client::Client;
use shepherd_server::Server;
use tokio::sync::watch;
use tokio::time::timeout;

use super::config::ChaosConfig;
use super::counters::Counters;
use super::transport::connect;
use crate::proof::check::locks::{Checker, Holder, Nodes};
use crate::proof::history::Recorder;
use crate::proof::nemesis::session::Sessions;
use crate::proof::workload::mutex::family::ROOT;

/// Shared by the workers and the nemesis.
pub struct Ctx {
    /// The run's configuration.
    pub config: ChaosConfig,
    /// The server and one slot per worker, as the session nemesis sees them.
    pub sessions: Sessions,
    /// The lock checker.
    pub checker: Checker,
    /// The counts.
    pub counters: Counters,
    /// The history of the recorded workers' holds, for the mutex checks.
    pub recorder: Recorder,
    /// A session of its own, never faulted: the resource as a paused holder reaches it after
    /// its lock session is gone (see `contender`).
    pub storage: Client,
    pub(super) stop: watch::Sender<bool>,
    next_holder: AtomicU64,
}

impl Ctx {
    /// A context for `config` on `sessions`, writing through `storage`.
    pub(super) fn new(
        config: ChaosConfig,
        sessions: Sessions,
        families: usize,
        storage: Client,
    ) -> Ctx {
        Ctx {
            config,
            sessions,
            checker: Checker::new(families),
            counters: Counters::default(),
            recorder: Recorder::new(),
            storage,
            stop: watch::channel(false).0,
            next_holder: AtomicU64::new(1),
        }
    }

    /// The server under test.
    pub fn server(&self) -> &Arc<Server> {
        &self.sessions.server
    }

    /// Whether the run is stopping.
    pub fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// A fresh holder id.
    pub fn next_holder(&self) -> u64 {
        self.next_holder.fetch_add(1, Relaxed)
    }

    /// The lock nodes in the tree now (one atomic snapshot, under the server's core lock).
    pub fn lock_nodes(&self) -> Nodes {
        let prefix = format!("{ROOT}/locks/");
        self.server().inspect(|core| {
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
        match timeout(t * 4, connect(self.server(), self.config.transport, t)).await {
            Ok(result) => result,
            Err(_) => Err(shepherd_client::Error::Io(
                std::io::ErrorKind::TimedOut.into(),
            )),
        }
    }
}
