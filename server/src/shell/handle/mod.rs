//! [`Server`]: a running server, as its owner holds it, with two borrowed faces for the rest:
//! [`Server::controls`] ([`Controls`]: what a test does to the server that no client could)
//! and [`Server::members`] ([`Members`]: the in-process ensemble).
//!
//! The handle owns the server's lifecycle (its addresses, the shutdown token, the tracker of its
//! tasks) and reaches the rest through the shared state, whose methods are synchronous; nothing
//! here holds a lock across an `.await`. Dropping it does not stop the server: the owner decides
//! when it ends. Besides its listener, a server serves any byte stream its owner hands to
//! [`Server::serve_io`], with one task per connection either way.
//!
//! The faces are defined here and their methods in a file each (`controls.rs`, `members.rs`,
//! with `restart.rs` for the restart), so that the files of this folder use one another in one
//! direction only: each of them uses this one, the shared state and what lies below; this one
//! only routes two of their helpers to the builder (`elect`, `serve`). The HTTP face (`http/controls/`) acts through the same methods.

mod controls;
mod error;
mod members;
mod restart;

pub use error::ControlError;
// The HTTP test controls' `/command/electnewleader` forces an election too.
#[cfg(feature = "http")]
pub(crate) use members::force_election;
pub(crate) use members::{first_leader, serve};

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::core::Core;
use crate::shell::net::conn;
use crate::shell::state::shared::Shared;
use crate::shell::state::stats::ServerStats;

/// The peer address an in-memory connection reports (`cons`, `stat`, `ip` ACLs): loopback, as
/// a client in the same process is, with port 0 since there is no socket.
const IN_MEMORY_PEER: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

/// A running server. Dropping it does not stop the server; call [`Server::shutdown`] or cancel
/// the token given to the builder.
pub struct Server {
    pub(crate) shared: Arc<Shared>,
    local_addr: SocketAddr,
    /// The bound addresses of the AdminServer and of `/metrics`, when on.
    pub(crate) http_addrs: (Option<SocketAddr>, Option<SocketAddr>),
    /// The test controls' address and token, when on (`http/controls/`).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) test_controls: Option<(SocketAddr, String)>,
    /// The TLS port's address, when TLS is on.
    pub(crate) secure_addr: Option<SocketAddr>,
    pub(crate) shutdown: CancellationToken,
    pub(crate) tracker: TaskTracker,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("local_addr", &self.local_addr)
            .finish()
    }
}

impl Server {
    pub(crate) fn new(
        shared: Arc<Shared>,
        addrs: Vec<SocketAddr>,
        shutdown: CancellationToken,
        tracker: TaskTracker,
    ) -> Server {
        // The builder binds at least one member.
        let local_addr = addrs.first().copied().unwrap_or(IN_MEMORY_PEER);
        Server {
            shared,
            local_addr,
            http_addrs: (None, None),
            test_controls: None,
            secure_addr: None,
            shutdown,
            tracker,
        }
    }

    /// A second handle on the same server, for the test controls (the HTTP server's, and
    /// [`Controls::call`]'s in-process routes): every control acts through it exactly as
    /// through this one, restarts and member changes included
    /// (the accept loops and the lock that orders those changes live in the shared state).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn view(&self) -> Server {
        Server {
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
    /// [`Members::addr`] for the others).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Where TLS clients connect (`secureClientPort`, or [`ServerBuilder::tls`]'s port), if
    /// TLS is on. On a secure-only server it is [`Server::local_addr`]; under port
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
    /// [`Server::admin_addr`] when one listener serves both).
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

    /// Resolves once the server has begun to stop: [`Server::shutdown`] was called, or a
    /// test-controls `/command/shutdown` asked for it (which only begins the stop: whoever
    /// runs the server then calls [`Server::shutdown`] to finish it, as `shepherd serve`
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

    /// Resolves when the transaction log fails (see [`Server::failure`]), with the
    /// reason; never, in memory or while healthy.
    ///
    /// Cancellation safe.
    pub async fn failed(&self) -> String {
        match &self.shared.durable {
            Some(durable) => durable.failed().await,
            None => std::future::pending().await,
        }
    }

    /// Runs `f` with the core locked, for inspection. Do not hold on to anything it borrows.
    pub fn inspect<T>(&self, f: impl FnOnce(&Core) -> T) -> T {
        self.shared.query(f)
    }

    /// Waits until `pred` holds of the core. It is checked now, then after every change of the
    /// core (request, handshake, tick, expiry, closed connection), with the core locked: keep it
    /// quick and do not call back into the server from it.
    ///
    /// Cancellation safe. Unbounded: wrap it in a timeout. Under `tokio::time::pause` this is
    /// how a test waits for an expiry after `tokio::time::advance`.
    pub async fn wait_for(&self, mut pred: impl FnMut(&Core) -> bool) {
        self.shared
            .wait_until(|shared| shared.query(&mut pred))
            .await;
    }

    /// The test controls: sessions, connections, the transaction log, fault rules, seeding
    /// and what the server counts of its watches.
    pub fn controls(&self) -> Controls<'_> {
        Controls { server: self }
    }

    /// The ensemble's members (one, for a single server): their addresses and states, the
    /// leader, and stopping, starting, partitioning and healing them.
    pub fn members(&self) -> Members<'_> {
        Members { server: self }
    }

    /// Serves one client connection over any byte stream, exactly as a connection accepted on
    /// the listener is served (four-letter words included), so that a test can speak the wire
    /// protocol over `tokio::io::duplex` with no socket.
    ///
    /// Returns once the connection is registered; its task runs until the peer closes the
    /// stream, the server shuts down, or the connection is closed by the server (a fault, an
    /// expiry, [`Controls::close_connection`]). The peer's address is `127.0.0.1:0`, and
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

/// The test controls of a running server, borrowed from it ([`Server::controls`]): what a test
/// does to a server that no client could (expire a session, cut or freeze a connection, hold or
/// fail the log, inject faults, seed counters), and what it reads that no client sees (every
/// session, the tree and the watch tables, the notifications sent).
///
/// A control that changes the core routes what results under the core lock, so its events
/// reach clients in the core's order, exactly as if a request had caused them. A control that
/// cannot apply says why with a [`ControlError`] value.
#[derive(Debug, Clone, Copy)]
pub struct Controls<'a> {
    pub(crate) server: &'a Server,
}

/// The members of a running server's ensemble, borrowed from it ([`Server::members`]); a
/// single server is an ensemble of one. See docs/ensemble.md.
///
/// Ordering: member changes run one at a time, and one at a time with [`Server::restart`] (one
/// lock).
#[derive(Debug, Clone, Copy)]
pub struct Members<'a> {
    pub(crate) server: &'a Server,
}
