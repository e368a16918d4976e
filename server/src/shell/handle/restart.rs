//! [`Server::restart`]: the server goes away and comes back on the same port, as a
//! ZooKeeper server restarted by its operator does, within one process.
//!
//! The listeners (one per ensemble member, `ensemble/member.rs`) and every connection belong to one
//! generation (a child of the shutdown token): a restart cancels it, so that every client sees
//! a connection loss, waits until the last connection has left the core and the listeners are
//! closed, reloads the state, and starts a new generation on the same addresses (members
//! stopped with [`Members::stop`](crate::Members::stop) stay stopped). In memory the core is kept (the tree and the
//! sessions; each session's timeout counts again from the restart); with a data directory the
//! log is flushed and closed, and the core is rebuilt from disk through the same recovery as a
//! start. The AdminServer, `/metrics` and the session clock are not restarted.

use std::io;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::shell::durable::lifecycle;
use crate::shell::handle::Server;
use crate::shell::handle::members::{listen, rearm_notices, reconsider};
use crate::shell::state::shared::Shared;

impl Server {
    /// Restarts the server: stops listening and drops every connection (clients see a
    /// connection loss and reconnect), then listens again on the same address. In memory the
    /// tree and the sessions are kept; with a data directory everything is flushed to disk and
    /// reloaded from it, exactly as at start. Either way each session's timeout counts from
    /// the restart, and a session whose client does not come back within it expires.
    ///
    /// Returns once the server accepts connections again.
    ///
    /// Cancellation safe: the restart runs as a task of its own, so dropping the future does
    /// not stop it halfway; it completes in the background. Two restarts at once run one
    /// after the other, and one at a time with the members' stops and starts.
    ///
    /// # Errors
    /// * an address could not be bound again (another process took the port meanwhile): that
    ///   member is left stopped ([`Members::state`](crate::Members::state)), the others serve, and a later `restart`
    ///   or [`Members::start`](crate::Members::start) may try again (connections handed to [`Server::serve_io`] are
    ///   member 1's, and wait for it);
    /// * with a data directory, recovery failed (the error names the file): the server keeps
    ///   the state it had in memory, no longer durable, and serves nobody;
    /// * the server was shut down.
    pub async fn restart(&self) -> io::Result<()> {
        let _one_at_a_time = self.shared.members.changes.lock().await;
        if self.shutdown.is_cancelled() {
            return Err(io::Error::other("the server is shut down"));
        }
        let shared = self.shared.clone();
        let (shutdown, tracker) = (self.shutdown.clone(), self.tracker.clone());
        let task = self
            .tracker
            .spawn(async move { restart(shared, shutdown, tracker).await });
        task.await
            .map_err(|e| io::Error::other(format!("the restart failed: {e}")))?
    }
}

/// The restart itself, run as a task.
async fn restart(
    shared: Arc<Shared>,
    shutdown: CancellationToken,
    tracker: TaskTracker,
) -> io::Result<()> {
    // 1. Drop every listener and every connection, and wait until they are gone.
    let old = shared.generation.lock().clone();
    old.cancel();
    for accepting in shared.members.take_accepting() {
        // Cancelled, it returns at once and drops the listener, freeing the port.
        let _ = accepting.await;
    }
    shared.wait_no_connections().await;
    // 2. Reload.
    if shared.durable.is_some() {
        let reloaded = {
            let shared = shared.clone();
            tokio::task::spawn_blocking(move || lifecycle::reload(&shared)).await
        };
        let reloaded = match reloaded {
            Ok(result) => result,
            Err(e) => Err(io::Error::other(format!("recovery did not finish: {e}"))),
        };
        if let Err(error) = reloaded {
            tracing::error!(%error, "restart: cannot reload the data directory");
            return Err(error);
        }
        // The membership is written at start, not logged: write it again over what the
        // snapshot had.
        if shared.members.len() > 1 {
            let config = shared.members.dynamic_config().into_bytes();
            shared.with_core(|core, _| core.set_config_node(config, shared.clock.now()));
        }
    } else {
        shared.with_core(|core, _| core.rearm_sessions(shared.clock.now()));
        shared.wake_ticker();
    }
    // 3. Listen again, in a new generation: every member that was listening, and any a
    // restart before could not bind again. One that cannot bind is left stopped.
    *shared.generation.lock() = shutdown.child_token();
    let mut result = Ok(());
    for id in shared.members.to_relisten() {
        match listen(&shared, &tracker, id).await {
            Ok(()) => {}
            Err(error) => {
                let addr = shared.members.addr(id);
                tracing::error!(?addr, member = id, %error, "restart: cannot listen again");
                shared.members.stop(id, true);
                if result.is_ok() {
                    result = Err(error);
                }
            }
        }
    }
    rearm_notices(&shared, &tracker);
    reconsider(&shared, &tracker);
    tracing::info!(members = shared.members.len(), "restarted");
    result
}
