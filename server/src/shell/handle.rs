//! [`ServerHandle`]: a running server, as its owner holds it.
//!
//! The handle owns the server's lifecycle (its address, the shutdown token, the tracker of its
//! tasks) and reaches the rest through the shared state, whose methods are synchronous; nothing
//! here holds a lock across an `.await`. Dropping the handle does not stop the server: the
//! owner decides when it ends. Besides its listener, a server serves any byte stream its owner
//! hands to [`ServerHandle::serve_io`], with one task per connection either way. The test controls (expiry, faults, freezes, seeding, inspection)
//! are methods of the same handle, kept in `controls/methods.rs`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::shell::net::conn;
use crate::shell::state::shared::Shared;
use crate::shell::state::stats::ServerStats;

/// The peer address an in-memory connection reports (`cons`, `stat`, `ip` ACLs): loopback, as
/// a client in the same process is, with port 0 since there is no socket.
const IN_MEMORY_PEER: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

/// A running server. Dropping it does not stop the server; call [`ServerHandle::shutdown`] or
/// cancel the token given to the builder.
pub struct ServerHandle {
    pub(crate) shared: Arc<Shared>,
    local_addr: SocketAddr,
    /// The bound addresses of the AdminServer and of `/metrics`, when on.
    pub(crate) http_addrs: (Option<SocketAddr>, Option<SocketAddr>),
    /// The test controls' address and token, when on (`http/controls.rs`).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) test_controls: Option<(SocketAddr, String)>,
    /// The TLS port's address, when TLS is on.
    pub(crate) secure_addr: Option<SocketAddr>,
    pub(crate) shutdown: CancellationToken,
    pub(crate) tracker: TaskTracker,
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle")
            .field("local_addr", &self.local_addr)
            .finish()
    }
}

impl ServerHandle {
    pub(crate) fn new(
        shared: Arc<Shared>,
        addrs: Vec<SocketAddr>,
        shutdown: CancellationToken,
        tracker: TaskTracker,
    ) -> ServerHandle {
        // The builder binds at least one member.
        let local_addr = addrs.first().copied().unwrap_or(IN_MEMORY_PEER);
        ServerHandle {
            shared,
            local_addr,
            http_addrs: (None, None),
            test_controls: None,
            secure_addr: None,
            shutdown,
            tracker,
        }
    }

    /// A second handle on the same server, for the test controls' HTTP server: every control
    /// acts through it exactly as through this one, restarts and member changes included
    /// (the accept loops and the lock that orders those changes live in the shared state).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn view(&self) -> ServerHandle {
        ServerHandle {
            shared: self.shared.clone(),
            local_addr: self.local_addr,
            http_addrs: self.http_addrs,
            test_controls: None,
            secure_addr: self.secure_addr,
            shutdown: self.shutdown.clone(),
            tracker: self.tracker.clone(),
        }
    }

    /// The address the server listens on: member 1's, for an ensemble (see
    /// [`ServerHandle::member_addr`] for the others).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Where TLS clients connect (`secureClientPort`, or [`ServerBuilder::tls`]'s port), if
    /// TLS is on. On a secure-only server it is [`ServerHandle::local_addr`]; under port
    /// unification alone (no secure port), `None`, the plain port taking TLS.
    ///
    /// [`ServerBuilder::tls`]: crate::ServerBuilder::tls
    pub fn secure_addr(&self) -> Option<SocketAddr> {
        self.secure_addr
    }

    /// Where the AdminServer (`/commands/<name>`, ZooKeeper's JSON) listens, if it is on.
    pub fn admin_addr(&self) -> Option<SocketAddr> {
        self.http_addrs.0
    }

    /// Where Prometheus `/metrics` is served, if it is on (the same address as
    /// [`ServerHandle::admin_addr`] when one listener serves both).
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.http_addrs.1
    }

    /// The server's traffic counters: packets, latency, and connections closed for not taking
    /// what they were sent.
    pub fn stats(&self) -> &ServerStats {
        &self.shared.stats
    }

    /// `host:port`, ready for any ZooKeeper client's connect string; for an ensemble every
    /// member's, comma-separated in id order (stopped ones included, as a client's list of
    /// servers does).
    pub fn connect_string(&self) -> String {
        let ids = self.shared.members.ids();
        let addrs = ids.iter().filter_map(|id| self.shared.members.addr(*id));
        addrs.map(|a| a.to_string()).collect::<Vec<_>>().join(",")
    }

    /// Stops accepting, closes every connection, and waits for every task to end. Sessions are
    /// not closed. In memory the server's state goes away with it; with a data directory the
    /// transaction log is written and fsynced (forceSync or not) and closed before this
    /// returns, so that everything acknowledged is on disk and a later start recovers it. The
    /// data directory stays locked until the handle is dropped.
    ///
    /// Cancellation safe as far as it got: the server is stopping once this was first polled;
    /// calling it again finishes the job.
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        self.tracker.close();
        self.tracker.wait().await;
        if self.shared.durable.is_some() {
            let shared = self.shared.clone();
            // Blocking (a join and an fsync): off the async workers.
            let _ = tokio::task::spawn_blocking(move || {
                crate::shell::durable::lifecycle::close(&shared)
            })
            .await;
        }
    }

    /// Resolves once the server has begun to stop: [`ServerHandle::shutdown`] was called, or a
    /// test-controls `/command/shutdown` asked for it (which only begins the stop: whoever
    /// runs the server then calls [`ServerHandle::shutdown`] to finish it, as `shepherd serve`
    /// does).
    ///
    /// Cancellation safe.
    pub async fn stopping(&self) {
        self.shutdown.cancelled().await;
    }

    /// Why the server stopped serving, if its transaction log failed (a full disk, an I/O
    /// error): from then on no write is acknowledged, every connection is closed and new ones
    /// are refused, as ZooKeeper halts in this case. `None` while healthy, and always in memory.
    pub fn failure(&self) -> Option<String> {
        self.shared.durable.as_ref().and_then(|d| d.failure())
    }

    /// Resolves when the transaction log fails (see [`ServerHandle::failure`]), with the
    /// reason; never, in memory or while healthy.
    ///
    /// Cancellation safe.
    pub async fn failed(&self) -> String {
        match &self.shared.durable {
            Some(durable) => durable.failed().await,
            None => std::future::pending().await,
        }
    }

    /// Serves one client connection over any byte stream, exactly as a connection accepted on
    /// the listener is served (four-letter words included), so that a test can speak the wire
    /// protocol over `tokio::io::duplex` with no socket.
    ///
    /// Returns once the connection is registered; its task runs until the peer closes the
    /// stream, the server shuts down, or the connection is closed by the server (a fault, an
    /// expiry, [`ServerHandle::close_connection`]). The peer's address is `127.0.0.1:0`, and
    /// the per-IP limit (`maxClientCnxns`), which is about TCP clients, does not count it. It is
    /// a connection of member 1 (partitioning member 1 holds it). After shutdown, during a
    /// restart, while member 1 is stopped and after a failure of the log, `io` is dropped at
    /// once.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub fn serve_io<S>(&self, io: S)
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        // Member 1's current token (a child of the generation): a restart, a failed log or
        // stopping member 1 drops this connection too.
        let Some(token) = self.shared.members.token(1) else {
            return;
        };
        // No per-IP limit, so registration cannot refuse.
        let _ = conn::spawn(
            &self.shared,
            &self.tracker,
            &token,
            io,
            (IN_MEMORY_PEER, 1),
            0,
        );
    }
}
