//! [`ServerHandle`]: a running server, as its owner holds it.
//!
//! The handle owns the server's lifecycle (its address, the shutdown token, the tracker of its
//! tasks) and reaches the rest through the shared state, whose methods are synchronous; nothing
//! here holds a lock across an `.await`. Dropping the handle does not stop the server: the
//! owner decides when it ends. The test controls (expiry, faults, freezes, seeding, inspection)
//! are methods of the same handle, kept in `controls.rs`.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::router::Shared;

/// A running server. Dropping it does not stop the server; call [`ServerHandle::shutdown`] or
/// cancel the token given to the builder.
pub struct ServerHandle {
    pub(super) shared: Arc<Shared>,
    local_addr: SocketAddr,
    shutdown: CancellationToken,
    tracker: TaskTracker,
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle")
            .field("local_addr", &self.local_addr)
            .finish()
    }
}

impl ServerHandle {
    pub(super) fn new(
        shared: Arc<Shared>,
        local_addr: SocketAddr,
        shutdown: CancellationToken,
        tracker: TaskTracker,
    ) -> ServerHandle {
        ServerHandle {
            shared,
            local_addr,
            shutdown,
            tracker,
        }
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// `host:port`, ready for any ZooKeeper client's connect string.
    pub fn connect_string(&self) -> String {
        self.local_addr.to_string()
    }

    /// Stops accepting, closes every connection, and waits for every task to end. Sessions are
    /// not closed: the server's state goes away with it.
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        self.tracker.close();
        self.tracker.wait().await;
    }
}
