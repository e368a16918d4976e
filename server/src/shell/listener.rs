//! The accept loop: one task that takes TCP connections off the listener and spawns a task
//! for each, until shutdown.
//!
//! TCP is where the per-IP connection limit (`maxClientCnxns`) applies: a connection over it is
//! closed at once, before anything is read. Past registration, a TCP connection is served as
//! any other stream is (`conn.rs`). Accept errors are transient (EMFILE and the like)
//! and never end the loop.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::conn;
use super::router::Shared;

/// Accepts connections until `shutdown` is cancelled.
pub(super) async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
    tracker: TaskTracker,
) {
    loop {
        let accepted = tokio::select! {
            _ = shutdown.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((socket, peer)) => {
                let _ = socket.set_nodelay(true);
                let limit = shared.config.max_client_cnxns;
                if !conn::spawn(&shared, &tracker, &shutdown, socket, peer, limit) {
                    tracing::warn!(%peer, "too many connections from this address; closing");
                }
            }
            Err(error) => {
                // Accept errors (EMFILE and the like) are transient; back off briefly instead
                // of spinning.
                tracing::warn!(%error, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}
