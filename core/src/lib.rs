//! The deterministic core: the znode tree, sessions, watches, and the application of requests.
//!
//! The core owns every piece of replicated-looking state and nothing else: no sockets, no tokio,
//! no clock reads. Time comes in as [`Now`]; bytes come in as frame payloads; what comes out is
//! an ordered list of [`Action`]s for the shell to carry out (send this payload to that
//! connection, close that connection).
//!
//! Invariants it keeps:
//! * one total order: every call is applied to completion before the next, and every write,
//!   successful or not, takes the next zxid (reference docs/protocol.md §3.3);
//! * the actions of one call are in delivery order, and notifications for a change are queued
//!   before any reply that reveals it (docs/protocol.md §9.6): the shell must enqueue them in that order;
//! * the same sequence of calls with the same inputs yields the same actions, so tests can drive
//!   expiry, TTLs and container reaping by passing time in.
//!
//! [`Core`]'s public methods come in three groups, one `impl` block each: the inputs
//! (`inputs.rs`: connections, requests, time), the read-only queries (`queries.rs`), and the
//! test controls (`controls.rs`: setters and dumps). Behind the inputs, each concept has its
//! file: the handshake, request dispatch, the tree operations and multi, the transaction
//! record, watch delivery, teardown of connections and sessions, and the reaper; below them
//! the tree, the session table, the watch tables, paths and ACLs.

pub mod acl;
mod acl_table;
mod action;
mod arena;
mod auth_policy;
mod children;
mod controls;
mod delivery;
mod diagnostics;
mod digest;
mod dispatch;
mod handshake;
mod ids;
mod inputs;
mod java_int;
mod log;
mod metrics;
mod multi;
mod node;
mod now;
mod ops;
mod owner;
mod path;
mod path_index;
mod peek;
mod queries;
mod reaper;
mod replay;
mod restore;
mod sasl;
mod session;
mod short;
mod snapshot;
mod teardown;
#[cfg(test)]
mod tests;
mod tree;
mod txn;
mod views;
mod watch;

use std::collections::HashMap;
use std::net::IpAddr;

use shepherd_protocol::sasl::DigestMd5Server;
use shepherd_protocol::txn::TxnEntry;

pub use action::Action;
pub use auth_policy::AuthPolicy;
pub use diagnostics::{SessionCursor, SessionRow, WatchCursor, WatchSummary};
pub use ids::{ConnId, SessionId};
pub use inputs::Swept;
pub use metrics::{CoreMetrics, NotificationCounts, TriggerSummary};
pub use now::Now;
pub use peek::{RequestPeek, peek};
pub use replay::ReplayError;
pub use restore::{Restore, RestoreError};
use session::Sessions;
pub use snapshot::{OPEN_ACL_UNSAFE_ID, SnapshotCursor};
use tree::Tree;
pub use views::{NodeInfo, SessionInfo, WatchInfo, WatchKind, WatchMode};
use watch::WatchTable;

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
    /// `zookeeper.extendedTypesEnabled`: allows TTL nodes. Off by default, as on ZooKeeper
    /// 3.8: a TTL create is then Unimplemented (the connection stays open).
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
    /// The key of every session password: a password is the first 16 bytes of
    /// HMAC-SHA256(secret, session id as 8 big-endian bytes), so it is a pure function of the
    /// id (the core reads no randomness) and survives a restart with the same secret. A shell
    /// must pass 32 random bytes (kept in the data directory for a durable server).
    pub session_secret: [u8; 32],
    /// Mixed into every SASL nonce beside `session_secret` (`sasl.rs`). The shell draws 32 new
    /// bytes from the OS at every process start: the session secret is kept in the data
    /// directory, so without this a restarted server whose wall clock went back could derive a
    /// nonce it had already issued.
    pub boot_salt: [u8; 32],
    /// Record every txn as ZooKeeper 3.8 logs it (and keep the tree digest), for
    /// [`Core::take_log`]. Off by default: an in-memory server does no such work.
    pub log_txns: bool,
    /// SASL users, `superUser` and `enforce.auth` (`sasl.rs`); nothing by default.
    pub auth: AuthPolicy,
}

impl Default for CoreConfig {
    fn default() -> Self {
        CoreConfig {
            tick_time_ms: 2000,
            min_session_timeout_ms: 4000,
            max_session_timeout_ms: 40000,
            super_digest: None,
            extended_types_enabled: false,
            container_check_interval_ms: 60_000,
            container_max_per_minute: 10_000,
            max_never_used_interval_ms: 0,
            initial_zxid: 0,
            session_secret: [0x5e; 32],
            boot_salt: [0; 32],
            log_txns: false,
            auth: AuthPolicy::default(),
        }
    }
}

/// Where a connection comes from; the `ip` identity of every connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnInfo {
    /// The peer's address.
    pub addr: IpAddr,
    /// The ensemble member it came in on (1 for a single server): a session it creates carries
    /// it in its id's top byte, as a ZooKeeper peer's `myid` is in the ids it hands out.
    pub member: u8,
}

/// A connection the core knows: where it comes from, its session once connected, and its auth
/// identities (which always start with `ip:<address>`, docs/protocol.md §6.10; at most
/// [`acl::MAX_IDENTITIES`], §12.5).
#[derive(Debug)]
struct Conn {
    session: Option<SessionId>,
    /// The member it came in on ([`ConnInfo::member`]).
    member: u8,
    identities: acl::Identities,
    /// Its SASL exchange, once one has begun (`sasl.rs`).
    sasl: Option<Box<DigestMd5Server>>,
}

/// The deterministic ZooKeeper server state machine. See the module documentation; its
/// methods are grouped into inputs, queries and test controls.
#[derive(Debug)]
pub struct Core {
    config: CoreConfig,
    /// The last zxid handed out (docs/protocol.md §3.3).
    zxid: i64,
    tree: Tree,
    sessions: Sessions,
    conns: HashMap<ConnId, Conn>,
    /// The data-watch manager: data, exist, persistent and recursive watches.
    data_watches: WatchTable,
    /// The child-watch manager: child, persistent and (3.8) recursive watches.
    child_watches: WatchTable,
    metrics: CoreMetrics,
    /// When the container/TTL reaper next runs (monotonic ms, docs/protocol.md §8.3).
    next_container_check: u64,
    /// Txns logged and not yet taken (`log.rs`); empty unless `config.log_txns`.
    log: Vec<TxnEntry>,
}

impl Core {
    /// A fresh server: the initial tree of docs/protocol.md §16, no sessions, the first session id derived from
    /// `now.wall_ms` as standalone ZooKeeper does (docs/protocol.md §2.5).
    pub fn new(config: CoreConfig, now: Now) -> Core {
        let sessions = Core::new_sessions(&config, now);
        let zxid = config.initial_zxid;
        Core::assemble(config, now, Tree::new(), sessions, zxid)
    }

    /// An empty session table whose ids start from `now` (docs/protocol.md §2.5).
    fn new_sessions(config: &CoreConfig, now: Now) -> Sessions {
        Sessions::new(now.wall_ms, config.tick_time_ms, config.session_secret)
    }

    /// A core around a tree and sessions (fresh, or restored from a snapshot), at `zxid`.
    fn assemble(
        config: CoreConfig,
        now: Now,
        mut tree: Tree,
        sessions: Sessions,
        zxid: i64,
    ) -> Core {
        if config.log_txns {
            tree.start_digest();
        }
        Core {
            zxid,
            tree,
            sessions,
            conns: HashMap::new(),
            data_watches: WatchTable::default(),
            child_watches: WatchTable::default(),
            metrics: CoreMetrics::default(),
            next_container_check: now
                .mono_ms
                .saturating_add(config.container_check_interval_ms),
            log: Vec::new(),
            config,
        }
    }
}
