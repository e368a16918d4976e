//! What one chaos run does, and the bounds derived from it.

use std::time::Duration;

use super::transport::Transport;
use crate::proof::nemesis::session;

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
    /// A run of `clients` for `duration` with `session_timeout`, seed `seed`: a fault about
    /// every two session timeouts per client, over loopback TCP, no progress lines.
    pub fn new(
        seed: u64,
        clients: usize,
        duration: Duration,
        session_timeout: Duration,
    ) -> ChaosConfig {
        ChaosConfig {
            seed,
            clients,
            duration,
            session_timeout,
            fault_interval: session::default_interval(clients, session_timeout),
            transport: Transport::Tcp,
            progress: None,
        }
    }

    /// The bound on one worker iteration (acquire, hold, release), past which it hangs: the
    /// longest wait, hold and pause, plus room for an expiry and a reconnect.
    pub fn hang_bound(&self) -> Duration {
        self.session_timeout * 12
    }

    /// Whether worker `worker` records its holds into the history (and has its sessions
    /// spared): the first two workers of every lock kind, writers only.
    pub fn is_recorded(worker: usize, writer: bool) -> bool {
        writer && worker < 2 * shepherd_recipes::LockKind::ALL.len()
    }
}
