//! The deterministic core: the znode tree, sessions, watches, and the application of requests.
//!
//! The core owns every piece of replicated-looking state and nothing else: no sockets, no tokio,
//! no clock reads. Time comes in as [`Now`]; bytes come in as frame payloads; what comes out is
//! an ordered list of [`Action`]s for the shell to carry out (send this payload to that
//! connection, close that connection).
//!
//! Invariants it keeps:
//! * one total order: every call is applied to completion before the next, and every write,
//!   successful or not, takes the next zxid (reference §3.3);
//! * the actions of one call are in delivery order, and notifications for a change are queued
//!   before any reply that reveals it (§9.6): the shell must enqueue them in that order;
//! * the same sequence of calls with the same inputs yields the same actions, so tests can drive
//!   expiry, TTLs and container reaping by passing time in.

pub mod acl;
mod delivery;
mod dispatch;
mod handshake;
mod harness;
mod metrics;
mod multi;
mod ops;
mod path;
mod reaper;
mod session;
mod teardown;
#[cfg(test)]
mod tests;
mod tree;
mod txn;
mod watch;

use std::collections::HashMap;
use std::net::IpAddr;

use shepherd_protocol::Id;

pub use harness::{NodeInfo, RequestPeek, WatchInfo, WatchKind, WatchMode, peek};
pub use metrics::{CoreMetrics, NotificationCounts, TriggerSummary};
use session::Sessions;
use tree::Tree;
use watch::WatchTable;

/// A connection, as numbered by the shell. Never reused within one server.
pub type ConnId = u64;

/// A session id, as on the wire.
pub type SessionId = i64;

/// The time of a call. `mono_ms` drives expiry and reaping; `wall_ms` is what ctime and mtime
/// record. A shell under virtual time advances both together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Now {
    /// Monotonic milliseconds since an arbitrary origin.
    pub mono_ms: u64,
    /// Milliseconds since the Unix epoch.
    pub wall_ms: i64,
}

/// Settings the core needs (a subset of zoo.cfg).
#[derive(Debug, Clone)]
pub struct CoreConfig {
    /// `tickTime`, ms: the width of session expiry buckets.
    pub tick_time_ms: u32,
    /// `minSessionTimeout`, ms (default 2 × tick).
    pub min_session_timeout_ms: u32,
    /// `maxSessionTimeout`, ms (default 20 × tick).
    pub max_session_timeout_ms: u32,
    /// `zookeeper.DigestAuthenticationProvider.superDigest`: `user:base64(sha1(user:pw))`.
    pub super_digest: Option<String>,
    /// `zookeeper.extendedTypesEnabled`: allows TTL nodes.
    pub extended_types_enabled: bool,
    /// `znode.container.checkIntervalMs`.
    pub container_check_interval_ms: u64,
    /// `znode.container.maxPerMinute`.
    pub container_max_per_minute: u32,
    /// `znode.container.maxNeverUsedIntervalMs` (0: never reap a container that never had a
    /// child).
    pub max_never_used_interval_ms: u64,
    /// The zxid to start from (0 on a fresh ZooKeeper).
    pub initial_zxid: i64,
    /// Mixed into every session password. Passwords are a pure function of the session id and
    /// this seed (the core reads no randomness); a shell should pass a random value.
    pub password_seed: u64,
}

impl Default for CoreConfig {
    fn default() -> Self {
        CoreConfig {
            tick_time_ms: 2000,
            min_session_timeout_ms: 4000,
            max_session_timeout_ms: 40000,
            super_digest: None,
            extended_types_enabled: true,
            container_check_interval_ms: 60_000,
            container_max_per_minute: 10_000,
            max_never_used_interval_ms: 0,
            initial_zxid: 0,
            password_seed: 0x5eed_5eed_5eed_5eed,
        }
    }
}

/// What the shell must do, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Send this frame payload (without the length prefix) to the connection.
    Send(ConnId, Vec<u8>),
    /// Close the connection once everything queued before this action is flushed.
    Close(ConnId),
}

/// Where a connection comes from; the `ip` identity of every connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnInfo {
    /// The peer's address.
    pub addr: IpAddr,
}

/// One session, as the four-letter words and test harnesses see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// The session id.
    pub id: SessionId,
    /// The negotiated timeout, ms.
    pub timeout_ms: i32,
    /// The monotonic ms of the expiry bucket the session is in.
    pub expires_at_ms: u64,
    /// The connection bound to it, if any.
    pub conn: Option<ConnId>,
    /// The paths of its ephemeral nodes, sorted.
    pub ephemerals: Vec<String>,
    /// The watches of its current connection, both tables, sorted (empty while disconnected:
    /// watches belong to connections, §9.7).
    pub watches: Vec<WatchInfo>,
}

/// A connection the core knows: where it comes from, its session once connected, and its auth
/// identities (which always start with `ip:<address>`, §6.10).
#[derive(Debug)]
struct Conn {
    session: Option<SessionId>,
    identities: Vec<Id>,
}

/// The deterministic ZooKeeper server state machine. See the module documentation.
#[derive(Debug)]
pub struct Core {
    config: CoreConfig,
    /// The last zxid handed out (§3.3).
    zxid: i64,
    tree: Tree,
    sessions: Sessions,
    conns: HashMap<ConnId, Conn>,
    /// The data-watch manager: data, exist, persistent and recursive watches.
    data_watches: WatchTable,
    /// The child-watch manager: child, persistent and (3.8) recursive watches.
    child_watches: WatchTable,
    metrics: CoreMetrics,
    /// When the container/TTL reaper next runs (monotonic ms, §8.3).
    next_container_check: u64,
}

impl Core {
    /// A fresh server: the initial tree of §16, no sessions, the first session id derived from
    /// `now.wall_ms` as standalone ZooKeeper does (§2.5).
    pub fn new(config: CoreConfig, now: Now) -> Core {
        Core {
            zxid: config.initial_zxid,
            tree: Tree::new(),
            sessions: Sessions::new(now.wall_ms, config.tick_time_ms, config.password_seed),
            conns: HashMap::new(),
            data_watches: WatchTable::default(),
            child_watches: WatchTable::default(),
            metrics: CoreMetrics::default(),
            next_container_check: now
                .mono_ms
                .saturating_add(config.container_check_interval_ms),
            config,
        }
    }

    /// The configuration the core runs with.
    pub fn config(&self) -> &CoreConfig {
        &self.config
    }

    /// A TCP connection was accepted (gives the connection its `ip:<addr>` identity).
    pub fn open_connection(&mut self, conn: ConnId, info: ConnInfo) {
        let ip = Id::new("ip", acl::java_host_address(info.addr));
        self.conns.insert(
            conn,
            Conn {
                session: None,
                identities: vec![ip],
            },
        );
    }

    /// The first frame payload of a connection (ConnectRequest bytes, no length prefix).
    /// Returns the actions: Send(conn, ConnectResponse payload) [+ Close(conn) for an invalid
    /// session (§2.4c)], Close(old_conn) first for any other connection bound to that session
    /// (§2.4a), or only Close(conn) (no reply) when undecodable or lastZxidSeen > last zxid
    /// (§2.4 step 2).
    pub fn connect(&mut self, conn: ConnId, payload: &[u8], now: Now) -> Vec<Action> {
        self.handshake(conn, payload, now)
    }

    /// The socket is gone. Drop the connection's watches and identities; the session lives on.
    pub fn close_connection(&mut self, conn: ConnId) {
        self.drop_conn(conn);
    }

    /// Expire due sessions (tick buckets, §13.1-13.2: closeSession txn takes one zxid,
    /// ephemerals deleted with their events, Close(conn) for a still-connected socket with no
    /// reply) and reap containers / TTL nodes (§8.3, §8.4, every container_check_interval_ms,
    /// rate-limited by container_max_per_minute; each reap is a deleteContainer txn taking a
    /// zxid and firing events).
    pub fn tick(&mut self, now: Now) -> Vec<Action> {
        let mut out = Vec::new();
        for id in self.sessions.due(now.mono_ms) {
            self.end_session(id, now, true, &mut out);
        }
        self.reap_if_due(now, &mut out);
        out
    }

    /// The monotonic ms at which tick() next has work (earliest session bucket or next container
    /// check), if any.
    pub fn next_deadline(&self) -> Option<u64> {
        [self.sessions.next_expiry(), self.reaper_deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Expire a session immediately, exactly as a timeout would (for test harnesses). Returns
    /// the actions.
    pub fn expire_session(&mut self, session: SessionId, now: Now) -> Vec<Action> {
        let mut out = Vec::new();
        self.end_session(session, now, true, &mut out);
        out
    }

    /// The last zxid handed out.
    pub fn last_zxid(&self) -> i64 {
        self.zxid
    }

    /// Sets the last zxid (test harnesses: e.g. to exercise the lastZxidSeen refusal).
    pub fn set_last_zxid(&mut self, zxid: i64) {
        self.zxid = zxid;
    }

    /// Sets a node's create counter C, which names its next sequential child (§8.1) and shows
    /// in its cversion. False if the node does not exist.
    pub fn set_sequence_counter(&mut self, path: &str, value: i32) -> bool {
        self.tree.get_mut(path).map(|n| n.creates = value).is_some()
    }

    /// Real nodes, `/` included (4 on a fresh server; the `srvr` count adds ZooKeeper's alias).
    pub fn node_count(&self) -> usize {
        self.tree.len()
    }

    /// Sum of path lengths and data lengths, as ZooKeeper's `approximateDataSize`.
    pub fn approximate_data_size(&self) -> u64 {
        self.tree.data_size()
    }

    /// Number of ephemeral nodes.
    pub fn ephemerals_count(&self) -> usize {
        self.tree.ephemerals_count()
    }

    /// Every live session, by id.
    pub fn sessions(&self) -> Vec<SessionInfo> {
        self.sessions
            .iter()
            .map(|(&id, s)| SessionInfo {
                id,
                timeout_ms: s.timeout_ms,
                expires_at_ms: s.expires_at,
                conn: s.conn,
                ephemerals: self.tree.ephemerals_of(id).cloned().collect(),
                watches: s.conn.map(|conn| self.watches_of(conn)).unwrap_or_default(),
            })
            .collect()
    }

    /// The session a connection is bound to.
    pub fn connection_session(&self, conn: ConnId) -> Option<SessionId> {
        self.conns.get(&conn).and_then(|c| c.session)
    }

    /// A live session's negotiated timeout, ms.
    pub fn session_timeout(&self, session: SessionId) -> Option<i32> {
        self.sessions.get(session).map(|s| s.timeout_ms)
    }

    /// Data-table watches (data, exist, persistent, recursive) as (conn, session, path), sorted
    /// — for wchs/wchc/wchp (§14.3).
    pub fn data_watches(&self) -> Vec<(ConnId, SessionId, String)> {
        let mut all: Vec<_> = self
            .data_watches
            .entries()
            .map(|(conn, path, _)| {
                (
                    conn,
                    self.connection_session(conn).unwrap_or(0),
                    path.to_string(),
                )
            })
            .collect();
        all.sort();
        all
    }

    /// All watches in both tables (mntr zk_watch_count).
    pub fn watch_count(&self) -> usize {
        self.data_watches.count() + self.child_watches.count()
    }

    /// Notification counters.
    pub fn metrics(&self) -> &CoreMetrics {
        &self.metrics
    }
}
