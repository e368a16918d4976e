//! [`ServerHandle::restart`]: the server goes away and comes back on the same port, as a
//! ZooKeeper server restarted by its operator does, within one process.
//!
//! The listener and every connection belong to one generation (a child of the shutdown
//! token): a restart cancels it, so that every client sees a connection loss, waits until the
//! last connection has left the core and the listener is closed, reloads the state, and
//! starts a new generation on the same address. In memory the core is kept (the tree and the
//! sessions; each session's timeout counts again from the restart); with a data directory the
//! log is flushed and closed, and the core is rebuilt from disk through the same recovery as a
//! start. The AdminServer, `/metrics` and the session clock are not restarted.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::durable;
use super::handle::ServerHandle;
use super::listener;
use super::router::Shared;

impl ServerHandle {
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
    /// after the other.
    ///
    /// # Errors
    /// * the address could not be bound again (another process took the port meanwhile):
    ///   the server keeps running without a listener (connections handed to
    ///   [`ServerHandle::serve_io`] are still served) and a later `restart` may try again;
    /// * with a data directory, recovery failed (the error names the file): the server keeps
    ///   the state it had in memory, no longer durable, and serves nobody;
    /// * the server was shut down.
    pub async fn restart(&self) -> io::Result<()> {
        let _one_at_a_time = self.restart_lock.lock().await;
        if self.shutdown.is_cancelled() {
            return Err(io::Error::other("the server is shut down"));
        }
        let shared = self.shared.clone();
        let listening = self.listening.lock().take();
        let (addr, shutdown, tracker) = (
            self.local_addr(),
            self.shutdown.clone(),
            self.tracker.clone(),
        );
        let task = self
            .tracker
            .spawn(async move { restart(shared, listening, addr, shutdown, tracker).await });
        let (result, accepting) = task
            .await
            .map_err(|e| io::Error::other(format!("the restart failed: {e}")))?;
        *self.listening.lock() = accepting;
        result
    }
}

/// The restart itself, run as a task. Returns its outcome and the new accept loop, if any.
async fn restart(
    shared: Arc<Shared>,
    listening: Option<JoinHandle<()>>,
    addr: SocketAddr,
    shutdown: CancellationToken,
    tracker: TaskTracker,
) -> (io::Result<()>, Option<JoinHandle<()>>) {
    // 1. Drop the listener and every connection, and wait until they are gone.
    let old = shared.generation.lock().clone();
    old.cancel();
    if let Some(accepting) = listening {
        // Cancelled, it returns at once and drops the listener, freeing the port.
        let _ = accepting.await;
    }
    shared.wait_no_connections().await;
    // 2. Reload.
    if shared.durable.is_some() {
        let reloaded = {
            let shared = shared.clone();
            tokio::task::spawn_blocking(move || durable::reload(&shared)).await
        };
        let reloaded = match reloaded {
            Ok(result) => result,
            Err(e) => Err(io::Error::other(format!("recovery did not finish: {e}"))),
        };
        if let Err(error) = reloaded {
            tracing::error!(%error, "restart: cannot reload the data directory");
            return (Err(error), None);
        }
    } else {
        shared.with_core(|core, _| core.rearm_sessions(shared.clock.now()));
        shared.wake_ticker();
    }
    // 3. Listen again, in a new generation.
    let generation = shutdown.child_token();
    *shared.generation.lock() = generation.clone();
    let listener = match TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(error) => {
            tracing::error!(%addr, %error, "restart: cannot listen again");
            return (Err(error), None);
        }
    };
    tracing::info!(%addr, "restarted");
    let accepting = tracker.spawn(listener::accept_loop(
        listener,
        shared,
        generation,
        tracker.clone(),
    ));
    (Ok(()), Some(accepting))
}
