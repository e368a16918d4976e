//! The async shell around the deterministic core: listener, connections, clock and routing.
//!
//! Shape: the caller owns the listener (or lets the builder bind one) and the shutdown token;
//! one task accepts, one task per connection reads and writes its socket, and one task ticks
//! the core at its next deadline. All of them share [`Shared`], a handle whose methods are
//! synchronous: a lock is taken, the core is called, the resulting actions are pushed onto the
//! connections' outbound queues, and the lock is released, never across an `.await`.
//!
//! Ordering invariant: actions are routed while the core lock is held, so every connection's
//! queue receives events and replies in the core's single total order (§9.6).

mod admin;
mod conn;
mod stats;

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use parking_lot::Mutex;
use tokio::net::TcpListener;
use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::Config;
use crate::core::{Action, ConnId, Core, Now, SessionId};
pub use stats::{ConnStats, ServerStats};

/// What a connection task is asked to write.
#[derive(Debug)]
pub(crate) enum Outbound {
    /// One frame payload, without the length prefix.
    Frame(Bytes),
    /// Flush what is queued, then close.
    Close,
}

/// A live connection, as the router sees it.
struct ConnEntry {
    tx: mpsc::UnboundedSender<Outbound>,
    stats: Arc<ConnStats>,
}

/// Time as the core sees it: tokio's clock (virtual under `tokio::time::pause`), with the wall
/// clock advancing in step from the moment the server started.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    origin: Instant,
    wall_origin_ms: i64,
}

impl Clock {
    fn new() -> Clock {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        Clock {
            origin: Instant::now(),
            wall_origin_ms: wall,
        }
    }

    pub(crate) fn now(&self) -> Now {
        let mono_ms = self.origin.elapsed().as_millis() as u64;
        Now {
            mono_ms,
            wall_ms: self.wall_origin_ms + mono_ms as i64,
        }
    }

    fn instant_at(&self, mono_ms: u64) -> Instant {
        self.origin + Duration::from_millis(mono_ms)
    }
}

/// State shared by every task of one server.
pub(crate) struct Shared {
    pub(crate) core: Mutex<Core>,
    conns: Mutex<HashMap<ConnId, ConnEntry>>,
    next_conn: AtomicU64,
    pub(crate) config: Config,
    pub(crate) stats: ServerStats,
    pub(crate) clock: Clock,
    /// Wakes the ticker when a deadline may have moved earlier.
    ticker: Notify,
    started: Instant,
}

impl Shared {
    /// Runs `f` on the core under its lock, and routes the actions it returns before unlocking.
    pub(crate) fn with_core(&self, f: impl FnOnce(&mut Core, Now) -> Vec<Action>) {
        let mut core = self.core.lock();
        let actions = f(&mut core, self.clock.now());
        self.route(actions);
        drop(core);
    }

    fn route(&self, actions: Vec<Action>) {
        if actions.is_empty() {
            return;
        }
        let conns = self.conns.lock();
        for action in actions {
            let (conn, message) = match action {
                Action::Send(conn, payload) => (conn, Outbound::Frame(Bytes::from(payload))),
                Action::Close(conn) => (conn, Outbound::Close),
            };
            if let Some(entry) = conns.get(&conn) {
                if matches!(message, Outbound::Frame(_)) {
                    entry.stats.queued.fetch_add(1, Relaxed);
                }
                // A send fails only when the connection task has already ended; its socket is
                // gone and the core hears of it through close_connection.
                let _ = entry.tx.send(message);
            }
        }
    }

    /// Registers a new connection, or refuses it over the per-IP limit (`maxClientCnxns`).
    fn register(
        &self,
        peer: SocketAddr,
        tx: mpsc::UnboundedSender<Outbound>,
    ) -> Option<(ConnId, Arc<ConnStats>)> {
        let mut conns = self.conns.lock();
        let limit = self.config.max_client_cnxns;
        if limit > 0 {
            let same_ip = conns
                .values()
                .filter(|c| c.stats.peer.ip() == peer.ip())
                .count();
            if same_ip >= limit {
                return None;
            }
        }
        let id = self.next_conn.fetch_add(1, Relaxed);
        let stats = Arc::new(ConnStats::new(peer, self.clock.now().wall_ms));
        conns.insert(
            id,
            ConnEntry {
                tx,
                stats: stats.clone(),
            },
        );
        Some((id, stats))
    }

    fn unregister(&self, conn: ConnId) {
        self.core.lock().close_connection(conn);
        self.conns.lock().remove(&conn);
    }

    pub(crate) fn connection_stats(&self) -> Vec<(ConnId, Arc<ConnStats>)> {
        let mut all: Vec<_> = self
            .conns
            .lock()
            .iter()
            .map(|(id, c)| (*id, c.stats.clone()))
            .collect();
        all.sort_by_key(|(id, _)| *id);
        all
    }

    pub(crate) fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    pub(crate) fn wake_ticker(&self) {
        self.ticker.notify_one();
    }
}

/// Entry point for building and starting a server.
#[derive(Debug)]
pub struct Server;

impl Server {
    /// A builder with ZooKeeper's defaults, listening on 127.0.0.1 and a free port.
    pub fn builder() -> ServerBuilder {
        ServerBuilder {
            config: Config::default(),
            listener: None,
            shutdown: None,
        }
    }
}

/// Settings for a server; [`ServerBuilder::start`] starts it.
#[derive(Debug)]
pub struct ServerBuilder {
    config: Config,
    listener: Option<TcpListener>,
    shutdown: Option<CancellationToken>,
}

impl ServerBuilder {
    /// `tickTime` (default 2000 ms); also sets the session timeout bounds to 2 and 20 ticks.
    pub fn tick_time(mut self, tick: Duration) -> Self {
        self.config.set_tick_time(tick);
        self
    }

    /// `minSessionTimeout` and `maxSessionTimeout`.
    pub fn session_timeout_bounds(mut self, min: Duration, max: Duration) -> Self {
        self.config.core.min_session_timeout_ms = min.as_millis().min(u32::MAX as u128) as u32;
        self.config.core.max_session_timeout_ms = max.as_millis().min(u32::MAX as u128) as u32;
        self
    }

    /// The port to bind (0, the default, picks a free one).
    pub fn port(mut self, port: u16) -> Self {
        self.config.port = port;
        self
    }

    /// The address to bind (default 127.0.0.1).
    pub fn bind(mut self, addr: IpAddr) -> Self {
        self.config.bind = addr;
        self
    }

    /// Serve on a listener the caller already bound; `port` and `bind` are then ignored.
    pub fn listener(mut self, listener: TcpListener) -> Self {
        self.listener = Some(listener);
        self
    }

    /// A super user from a `user:password` credential: its digest becomes the superDigest.
    pub fn super_user(mut self, credential: &str) -> Self {
        self.config.core.super_digest =
            Some(crate::core::acl::digest_identity(credential.as_bytes()));
        self
    }

    /// The superDigest as ZooKeeper configures it: `user:base64(sha1(user:password))`.
    pub fn super_digest(mut self, digest: impl Into<String>) -> Self {
        self.config.core.super_digest = Some(digest.into());
        self
    }

    /// `jute.maxbuffer`: the largest frame accepted (default 1,048,575).
    pub fn max_buffer(mut self, bytes: usize) -> Self {
        self.config.max_buffer = bytes;
        self
    }

    /// `maxClientCnxns`: connections per client IP (default 60; 0 for no limit).
    pub fn max_client_connections(mut self, n: usize) -> Self {
        self.config.max_client_cnxns = n;
        self
    }

    /// Answer every four-letter word (ZooKeeper answers only `srvr` by default).
    pub fn all_four_letter_words(mut self) -> Self {
        self.config.four_letter_words = crate::config::FourLetterWhitelist::All;
        self
    }

    /// `znode.container.checkIntervalMs`: how often containers and TTL nodes are reaped
    /// (default 60 s).
    pub fn container_check_interval(mut self, interval: Duration) -> Self {
        self.config.core.container_check_interval_ms = interval.as_millis() as u64;
        self
    }

    /// Replace the whole configuration (for example one read from `zoo.cfg`).
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Mutate the configuration in place.
    pub fn with_config(mut self, f: impl FnOnce(&mut Config)) -> Self {
        f(&mut self.config);
        self
    }

    /// A token the caller cancels to stop the server; [`ServerHandle::shutdown`] cancels it
    /// too.
    pub fn shutdown_token(mut self, token: CancellationToken) -> Self {
        self.shutdown = Some(token);
        self
    }

    /// Binds (unless given a listener) and starts serving. Ready when it returns: a client may
    /// connect at once.
    ///
    /// # Errors
    /// The bind error, e.g. `AddrInUse` for a taken port.
    pub async fn start(self) -> io::Result<ServerHandle> {
        let listener = match self.listener {
            Some(l) => l,
            None => TcpListener::bind((self.config.bind, self.config.port)).await?,
        };
        let local_addr = listener.local_addr()?;
        let clock = Clock::new();
        let mut core_config = self.config.core.clone();
        // Session passwords must not be guessable from the session id: seed them from the
        // OS-seeded hasher std gives every RandomState.
        core_config.password_seed ^= {
            use std::hash::{BuildHasher, Hasher};
            std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish()
        };
        let core = Core::new(core_config, clock.now());
        let shared = Arc::new(Shared {
            core: Mutex::new(core),
            conns: Mutex::new(HashMap::new()),
            next_conn: AtomicU64::new(1),
            config: self.config,
            stats: ServerStats::default(),
            clock,
            ticker: Notify::new(),
            started: Instant::now(),
        });
        let shutdown = self.shutdown.unwrap_or_default();
        let tracker = TaskTracker::new();
        tracker.spawn(accept_loop(
            listener,
            shared.clone(),
            shutdown.clone(),
            tracker.clone(),
        ));
        tracker.spawn(tick_loop(shared.clone(), shutdown.clone()));
        Ok(ServerHandle {
            shared,
            local_addr,
            shutdown,
            tracker,
        })
    }
}

async fn accept_loop(
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
                let (tx, rx) = mpsc::unbounded_channel();
                let Some((id, stats)) = shared.register(peer, tx) else {
                    tracing::warn!(%peer, "too many connections from this address; closing");
                    drop(socket);
                    continue;
                };
                let _ = socket.set_nodelay(true);
                tracker.spawn(conn::run(
                    shared.clone(),
                    id,
                    socket,
                    rx,
                    stats,
                    shutdown.clone(),
                ));
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

/// Calls the core's `tick` at its next deadline: session expiry and container/TTL reaping.
async fn tick_loop(shared: Arc<Shared>, shutdown: CancellationToken) {
    loop {
        let deadline = shared.core.lock().next_deadline();
        let sleep = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(shared.clock.instant_at(at)).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = shared.ticker.notified() => continue,
            _ = sleep => shared.with_core(|core, now| core.tick(now)),
        }
    }
}

/// A running server. Dropping it does not stop the server; call [`ServerHandle::shutdown`] or
/// cancel the token given to the builder.
pub struct ServerHandle {
    shared: Arc<Shared>,
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

    /// Expires a session now, exactly as its timeout would: ephemerals deleted, watches fired,
    /// its connection closed so that the client learns of it on its next contact.
    pub fn expire_session(&self, session: SessionId) {
        self.shared
            .with_core(|core, now| core.expire_session(session, now));
    }

    /// The sessions the server knows, with their ephemerals.
    pub fn sessions(&self) -> Vec<crate::core::SessionInfo> {
        self.shared.core.lock().sessions()
    }

    /// Runs a four-letter word as if a client had sent it, whitelist or not; for tests and
    /// tooling.
    pub fn four_letter_word(&self, word: shepherd_protocol::FourLetterWord) -> String {
        admin::render(&self.shared, word)
    }

    /// Runs `f` with the core locked, for inspection. Do not hold on to anything it borrows.
    pub fn inspect<T>(&self, f: impl FnOnce(&Core) -> T) -> T {
        f(&self.shared.core.lock())
    }
}
