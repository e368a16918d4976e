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
mod harness;
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
use harness::Harness;
pub use harness::{Fault, FaultId, FaultRule, FaultTimes, HarnessError};
pub use stats::{ConnStats, ServerStats};

/// What a connection task is asked to write.
#[derive(Debug)]
pub(crate) enum Outbound {
    /// One frame payload, without the length prefix.
    Frame(Bytes),
    /// Flush what is queued, then close.
    Close,
    /// Write nothing queued after this before this instant (a delayed reply, `Fault::Delay`).
    Delay(Instant),
}

/// A live connection, as the router sees it.
struct ConnEntry {
    tx: mpsc::UnboundedSender<Outbound>,
    stats: Arc<ConnStats>,
    /// Cancelled to drop the connection at once (a child of the shutdown token).
    kill: CancellationToken,
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
    pub(crate) harness: Harness,
}

impl Shared {
    /// Runs `f` on the core under its lock, and routes the actions it returns before unlocking.
    pub(crate) fn with_core(&self, f: impl FnOnce(&mut Core, Now) -> Vec<Action>) {
        let mut core = self.core.lock();
        let actions = f(&mut core, self.clock.now());
        self.route(actions);
        drop(core);
        self.harness.changed.notify_waiters();
    }

    fn route(&self, actions: Vec<Action>) {
        self.route_outbound(actions.into_iter().map(outbound).collect());
    }

    /// Applies (or not) one request under a fault, routing what results while the core lock is
    /// held, as `with_core` does. Returns true when the connection is now closing: its task must
    /// read no further request.
    pub(crate) fn apply_fault(&self, conn: ConnId, payload: &[u8], fault: Fault) -> bool {
        let mut core = self.core.lock();
        let now = self.clock.now();
        let closing = match fault {
            Fault::Reject(code) => {
                let actions = core.reply_error(conn, payload, code, now);
                self.route(actions);
                false
            }
            Fault::DropBeforeApply => {
                core.close_connection(conn);
                self.route_outbound(vec![(conn, Outbound::Close)]);
                true
            }
            Fault::ApplyThenDrop => {
                let mut routed: Vec<_> = core
                    .request(conn, payload, now)
                    .into_iter()
                    .map(outbound)
                    .collect();
                // The reply and everything after it for this connection go; the notifications
                // this request raised for it (before its reply) stay.
                if let Some(at) = reply_index(&routed, conn) {
                    let mut i = 0;
                    routed.retain(|(c, _)| {
                        i += 1;
                        *c != conn || i - 1 < at
                    });
                }
                routed.retain(|(c, o)| *c != conn || !matches!(o, Outbound::Close));
                routed.push((conn, Outbound::Close));
                core.close_connection(conn);
                self.route_outbound(routed);
                true
            }
            Fault::Delay(delay) => {
                let mut routed: Vec<_> = core
                    .request(conn, payload, now)
                    .into_iter()
                    .map(outbound)
                    .collect();
                if let Some(at) = reply_index(&routed, conn) {
                    routed.insert(at, (conn, Outbound::Delay(Instant::now() + delay)));
                }
                self.route_outbound(routed);
                false
            }
        };
        drop(core);
        self.harness.changed.notify_waiters();
        closing
    }

    /// Drops a session's connection at once, without a reply; the session lives on. The core
    /// forgets the connection (and its watches) now; the socket closes when its task next runs.
    fn kill_session_connection(&self, session: SessionId) -> Result<(), HarnessError> {
        let mut core = self.core.lock();
        if core.session_timeout(session).is_none() {
            return Err(HarnessError::UnknownSession(session));
        }
        let conn = core
            .session_connection(session)
            .ok_or(HarnessError::NotConnected(session))?;
        core.close_connection(conn);
        if let Some(entry) = self.conns.lock().get(&conn) {
            entry.kill.cancel();
        }
        drop(core);
        self.harness.changed.notify_waiters();
        Ok(())
    }

    fn route_outbound(&self, routed: Vec<(ConnId, Outbound)>) {
        if routed.is_empty() {
            return;
        }
        let conns = self.conns.lock();
        for (conn, message) in routed {
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
        kill: CancellationToken,
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
                kill,
            },
        );
        Some((id, stats))
    }

    fn unregister(&self, conn: ConnId) {
        self.core.lock().close_connection(conn);
        self.conns.lock().remove(&conn);
        self.harness.changed.notify_waiters();
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

fn outbound(action: Action) -> (ConnId, Outbound) {
    match action {
        Action::Send(conn, payload) => (conn, Outbound::Frame(Bytes::from(payload))),
        Action::Close(conn) => (conn, Outbound::Close),
    }
}

/// Where this connection's reply is among the routed frames: its last frame that is not a
/// notification (xid -1), if any.
fn reply_index(routed: &[(ConnId, Outbound)], conn: ConnId) -> Option<usize> {
    routed.iter().rposition(|(c, o)| {
        *c == conn
            && matches!(o, Outbound::Frame(p) if p.get(..4) != Some(&(-1i32).to_be_bytes()[..]))
    })
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

    /// The zxid to start from (default 0), so that a fresh in-memory server does not refuse
    /// clients that saw a higher zxid on an earlier one (§2.4 step 2).
    pub fn initial_zxid(mut self, zxid: i64) -> Self {
        self.config.core.initial_zxid = zxid;
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
            harness: Harness::new(),
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
                let kill = shutdown.child_token();
                let Some((id, stats)) = shared.register(peer, tx, kill.clone()) else {
                    tracing::warn!(%peer, "too many connections from this address; closing");
                    drop(socket);
                    continue;
                };
                let _ = socket.set_nodelay(true);
                tracker.spawn(conn::run(shared.clone(), id, socket, rx, stats, kill));
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

    // ---- Sessions and connections -------------------------------------------------------

    /// Expires a session now, exactly as its timeout would: one closeSession txn, its
    /// ephemerals deleted with their events (delivered before this returns, in the core's
    /// order), its connection closed with no reply, so that the client learns of it on its
    /// next contact (a reconnect answered as expired). An unknown session is ignored.
    pub fn expire_session(&self, session: SessionId) {
        self.shared
            .with_core(|core, now| core.expire_session(session, now));
    }

    /// The sessions the server knows, by id, with their ephemerals and the watches of their
    /// current connection.
    pub fn sessions(&self) -> Vec<crate::core::SessionInfo> {
        self.shared.core.lock().sessions()
    }

    /// One session, if the server knows it.
    pub fn session(&self, session: SessionId) -> Option<crate::core::SessionInfo> {
        self.sessions().into_iter().find(|s| s.id == session)
    }

    /// Drops the session's TCP connection at once, without ending the session: what a network
    /// reset does. Nothing more is written to it (queued replies are lost); the connection's
    /// watches are forgotten now, as for any closed socket, and the client is expected to
    /// reconnect, resume the session and re-register them with setWatches.
    ///
    /// # Errors
    /// [`HarnessError::UnknownSession`] or [`HarnessError::NotConnected`].
    pub fn close_connection(&self, session: SessionId) -> Result<(), HarnessError> {
        self.shared.kill_session_connection(session)
    }

    /// Freezes a session, simulating a network partition between it and the server: its
    /// connection stops being read and written (requests and pings stay unread in the socket,
    /// replies and notifications stay queued) and a reconnect of the same session is accepted
    /// but its handshake is held the same way. Other sessions are unaffected.
    ///
    /// The session's own timeout keeps running, as in a real partition: nothing touches it, so
    /// a freeze longer than the timeout expires it (ephemerals deleted, watchers told), and its
    /// connection's queue then ends with the close, delivered at the thaw. The idle-connection
    /// timer is suspended while frozen.
    ///
    /// # Errors
    /// [`HarnessError::UnknownSession`]: only a live session can be frozen.
    pub fn freeze_session(&self, session: SessionId) -> Result<(), HarnessError> {
        if self.shared.core.lock().session_timeout(session).is_none() {
            return Err(HarnessError::UnknownSession(session));
        }
        self.shared.harness.freeze(session);
        Ok(())
    }

    /// Ends a freeze: what was queued is written in order, then the held requests are read and
    /// applied in order. Returns false if the session was not frozen.
    pub fn thaw_session(&self, session: SessionId) -> bool {
        self.shared.harness.thaw(session)
    }

    // ---- Fault rules ----------------------------------------------------------------------

    /// Adds a fault rule; it applies from the next request read. See [`FaultRule`].
    pub fn add_fault(&self, rule: FaultRule) -> FaultId {
        self.shared.harness.add_fault(rule)
    }

    /// Removes a rule. False if it was already removed.
    pub fn remove_fault(&self, id: FaultId) -> bool {
        self.shared.harness.remove_fault(id)
    }

    /// Removes every rule.
    pub fn clear_faults(&self) {
        self.shared.harness.clear_faults();
    }

    /// How many times a rule has fired (`None` once removed).
    pub fn fault_fire_count(&self, id: FaultId) -> Option<u64> {
        self.shared.harness.fired_count(id)
    }

    /// Waits until a rule has fired at least once; resolves at once if it already has. A rule
    /// fires when its request is matched, before the fault is carried out: the effect (a
    /// closed socket, a reply) follows without further waiting on the server side. Returns
    /// false if the rule is unknown or is removed before it fires.
    ///
    /// Cancellation safe. Unbounded: wrap it in a timeout.
    pub async fn fault_fired(&self, id: FaultId) -> bool {
        let Some(mut fired) = self.shared.harness.fired_watch(id) else {
            return false;
        };
        fired.wait_for(|n| *n > 0).await.is_ok()
    }

    // ---- Waiting on the core ----------------------------------------------------------------

    /// Waits until `pred` holds of the core. It is checked now, then after every change of the
    /// core (request, handshake, tick, expiry, closed connection), with the core locked: keep it
    /// quick and do not call back into the handle from it.
    ///
    /// Cancellation safe. Unbounded: wrap it in a timeout. Under `tokio::time::pause` this is
    /// how a test waits for an expiry after `tokio::time::advance`.
    pub async fn wait_for(&self, mut pred: impl FnMut(&Core) -> bool) {
        loop {
            let changed = self.shared.harness.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if pred(&self.shared.core.lock()) {
                return;
            }
            changed.await;
        }
    }

    // ---- Seeding and inspection ---------------------------------------------------------------

    /// Sets a node's sequence counter, the number its next sequential child gets (§8.1); it also
    /// moves the node's cversion. Past `i32::MAX` the counter wraps, as in ZooKeeper.
    ///
    /// # Errors
    /// [`HarnessError::NoNode`].
    pub fn set_sequence_counter(&self, parent: &str, value: i32) -> Result<(), HarnessError> {
        if self.shared.core.lock().set_sequence_counter(parent, value) {
            Ok(())
        } else {
            Err(HarnessError::NoNode(parent.to_string()))
        }
    }

    /// The last zxid handed out.
    pub fn last_zxid(&self) -> i64 {
        self.shared.core.lock().last_zxid()
    }

    /// Sets the last zxid; the next write takes the one after. Clients that saw a higher zxid
    /// are refused (§2.4 step 2); see also [`ServerBuilder::initial_zxid`].
    pub fn set_last_zxid(&self, zxid: i64) {
        self.shared.core.lock().set_last_zxid(zxid);
    }

    /// Every node with its Stat and data length, sorted by path.
    pub fn dump_tree(&self) -> Vec<crate::core::NodeInfo> {
        self.shared.core.lock().dump_tree()
    }

    /// Both watch tables: every registration with its path, table, mode and session.
    pub fn dump_watches(&self) -> Vec<crate::core::WatchInfo> {
        self.shared.core.lock().dump_watches()
    }

    /// Watch notifications delivered so far (after ACL filtering, one per connection per
    /// trigger), by event type and by receiving session.
    pub fn notification_counts(&self) -> crate::core::NotificationCounts {
        self.shared.core.lock().notification_counts()
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
