//! What the operations windows report: the figures behind the four-letter words (`admin.rs`),
//! the AdminServer's JSON and `/metrics` (`http/`), gathered once here so that every window
//! shows the same numbers under ZooKeeper's names and each only chooses its format.
//!
//! Invariants: gathering only reads (the core through [`Shared::query`], never holding its lock
//! while rendering); figures that come from one read of the core agree with each other. Under
//! the core lock there is no file-system read and no walk of the state: single figures come
//! from counters the core keeps up to date, and the words that list state (`cons`, `wchc`,
//! `wchp`, `dump`) read it in slices of at most [`SLICE`] items, one short read each.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;

use shepherd_protocol::OpCode;

use crate::core::{TriggerSummary, WatchSummary};
use crate::shell::ensemble::member;
use crate::shell::state::latency::LatencyReading;
use crate::shell::state::shared::Shared;

/// The most items one read of the core lists for the words that walk state: at most a few
/// hundred microseconds of copying under the lock, while a walk of a million watches still
/// takes only a thousand reads.
pub(crate) const SLICE: usize = 1024;

/// The version we report: ZooKeeper's, so clients that gate features on it enable all of 3.8,
/// and only `[A-Za-z0-9.-]` so that strict parsers (go-zookeeper's) accept it.
pub(crate) const VERSION: &str = concat!("3.8.0-shepherd-", env!("CARGO_PKG_VERSION"));
/// The build date ZooKeeper prints after its version.
pub(crate) const BUILT_ON: &str = "01/01/2026 00:00 GMT";

/// `version, built on date`, as srvr, mntr and envi print it.
pub(crate) fn full_version() -> String {
    format!("{VERSION}, built on {BUILT_ON}")
}

/// One figure: a whole number, a double, or text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Figure {
    Int(i64),
    Float(f64),
    Text(String),
}

impl Figure {
    fn count(n: impl TryInto<i64>) -> Figure {
        Figure::Int(n.try_into().unwrap_or(i64::MAX))
    }
}

/// How ZooKeeper's metrics system registers a monitor figure (`ServerMetrics`, the gauges of
/// `ZooKeeperServer.registerMetrics`), which decides its Prometheus type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Gauge,
    Counter,
    /// Printed by mntr but not a metric (version, state), or Shepherd's own.
    Text,
}

/// Server-wide figures (`srvr`, `stat`, `server_stats`).
#[derive(Debug, Clone)]
pub(crate) struct ServerSummary {
    pub packets_received: u64,
    pub packets_sent: u64,
    pub min_latency: u64,
    pub avg_latency: f64,
    pub max_latency: u64,
    pub connections: usize,
    pub zxid: i64,
    /// ZooKeeper's count: the real nodes plus the root's "" alias.
    pub node_count: usize,
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub uptime_ms: u64,
}

pub(crate) fn server_summary(shared: &Shared) -> ServerSummary {
    let (min_latency, avg_latency, max_latency) = shared.stats.latency_ms();
    let (zxid, nodes) = shared.query(|core| (core.last_zxid(), core.node_count()));
    ServerSummary {
        packets_received: shared.stats.packets_received.load(Relaxed),
        packets_sent: shared.stats.packets_sent.load(Relaxed),
        min_latency,
        avg_latency,
        max_latency,
        connections: shared.router().connections(),
        zxid,
        node_count: nodes + 1,
        uptime_ms: u64::try_from(shared.uptime().as_millis()).unwrap_or(u64::MAX),
    }
}

/// One connection (`cons`, `stat`, `connections`).
#[derive(Debug, Clone)]
pub(crate) struct ConnectionRow {
    pub peer: SocketAddr,
    pub queued: u64,
    pub received: u64,
    pub sent: u64,
    /// (session id, negotiated timeout ms), once the handshake is done.
    pub session: Option<(i64, i32)>,
    /// ZooKeeper's short name of the last opcode, `NA` before any.
    pub last_op: &'static str,
    pub established_ms: i64,
}

pub(crate) fn connections(shared: &Shared) -> Vec<ConnectionRow> {
    let conns = shared.router().connection_stats();
    let mut sessions = Vec::with_capacity(conns.len());
    for slice in conns.chunks(SLICE) {
        shared.query(|core| {
            sessions.extend(slice.iter().map(|(id, _)| {
                let session = core.connection_session(*id)?;
                Some((session, core.session_timeout(session).unwrap_or(0)))
            }));
        });
    }
    conns
        .into_iter()
        .zip(sessions)
        .map(|((_, conn), session)| ConnectionRow {
            peer: conn.peer,
            queued: conn.queued.load(Relaxed),
            received: conn.received.load(Relaxed),
            sent: conn.sent.load(Relaxed),
            session,
            last_op: i32::try_from(conn.last_op.load(Relaxed))
                .ok()
                .and_then(|op| OpCode::try_from(op).ok())
                .map_or("NA", short_op_name),
            established_ms: conn.established_ms,
        })
        .collect()
}

/// The short names `cons` prints for `lop` (ZooKeeper's `Request.op2String`).
fn short_op_name(op: OpCode) -> &'static str {
    match op {
        OpCode::Create | OpCode::Create2 | OpCode::CreateContainer | OpCode::CreateTTL => "CREA",
        OpCode::Delete => "DELE",
        OpCode::Exists => "EXIS",
        OpCode::GetData => "GETD",
        OpCode::SetData => "SETD",
        OpCode::GetACL => "GETA",
        OpCode::SetACL => "SETA",
        OpCode::GetChildren | OpCode::GetChildren2 => "GETC",
        OpCode::Sync => "SYNC",
        OpCode::Ping => "PING",
        OpCode::Multi => "MULT",
        OpCode::MultiRead => "MLTR",
        OpCode::Auth => "AUTH",
        OpCode::SetWatches | OpCode::SetWatches2 => "SETW",
        OpCode::CloseSession => "CLOS",
        OpCode::CreateSession => "SESS",
        _ => op.name(),
    }
}

/// The data-table watch figures (`wchs`, `watch_summary`; docs/protocol.md §14.3), from the
/// core's counters.
pub(crate) fn watch_summary(shared: &Shared) -> WatchSummary {
    shared.query(|core| core.data_watch_summary())
}

/// Every data-table watch as (session, path), read a slice at a time (see [`SLICE`]). Each
/// word groups them one way only, so that a million watches are copied once, not twice.
fn watch_rows(shared: &Shared) -> Vec<(i64, String)> {
    let mut cursor = shared.query(|core| core.data_watch_cursor());
    let mut all = Vec::new();
    while !shared.query(|core| core.data_watch_slice(&mut cursor, SLICE, &mut all)) {}
    all.into_iter()
        .map(|(_, session, path)| (session, path))
        .collect()
}

/// The data-table watches by session (`wchc`, `watches`; docs/protocol.md §14.3).
pub(crate) fn watches_by_session(shared: &Shared) -> BTreeMap<i64, Vec<String>> {
    let mut out: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for (session, path) in watch_rows(shared) {
        out.entry(session).or_default().push(path);
    }
    out
}

/// The data-table watches by path (`wchp`, `watches_by_path`; docs/protocol.md §14.3).
pub(crate) fn watches_by_path(shared: &Shared) -> BTreeMap<String, Vec<i64>> {
    let mut out: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for (session, path) in watch_rows(shared) {
        out.entry(path).or_default().push(session);
    }
    out
}

/// Sessions by expiry bucket, and their ephemerals (`dump`).
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionDump {
    /// Expiry bucket (monotonic ms) to the sessions in it.
    pub expiry: BTreeMap<u64, Vec<i64>>,
    /// Sessions with ephemerals, to their paths.
    pub ephemerals: BTreeMap<i64, Vec<String>>,
}

/// Reads the sessions and their ephemerals a slice at a time (see [`SLICE`]).
pub(crate) fn session_dump(shared: &Shared) -> SessionDump {
    let mut cursor = crate::core::SessionCursor::default();
    let (mut sessions, mut ephemerals) = (Vec::new(), Vec::new());
    while !shared
        .query(|core| core.session_slice(&mut cursor, SLICE, &mut sessions, &mut ephemerals))
    {}
    let mut out = SessionDump::default();
    for (id, expires_at) in sessions {
        out.expiry.entry(expires_at).or_default().push(id);
    }
    for (id, path) in ephemerals {
        out.ephemerals.entry(id).or_default().push(path);
    }
    out
}

/// One configuration entry: the 4lw `conf` key, the AdminServer's key (ZooKeeper leaves some
/// out of the JSON), and the value.
pub(crate) struct ConfEntry {
    pub text_key: &'static str,
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub json_key: Option<&'static str>,
    pub value: Figure,
}

pub(crate) fn configuration(shared: &Shared, member: u64) -> Vec<ConfEntry> {
    let c = &shared.config;
    // An ensemble member prints its own client port and id; a single server what it was
    // configured with, and id 0 as a standalone ZooKeeper does.
    let ensemble = shared.members.len() > 1;
    let (port, id) = match shared.members.addr(member) {
        Some(addr) if ensemble => (addr.port(), member),
        _ => (c.port, 0),
    };
    let entry = |text_key, json_key, value| ConfEntry {
        text_key,
        json_key,
        value,
    };
    // ZooKeeper's FileTxnSnapLog directories (`…/version-2`) and the bytes of the files in
    // them; an in-memory server has none, and says so in the path.
    let (snap_dir, log_dir) = match &shared.durable {
        Some(durable) => (
            Some(durable.dir.snap_dir().to_path_buf()),
            Some(durable.dir.log_dir().to_path_buf()),
        ),
        None => (None, None),
    };
    let dir = |dir: &Option<std::path::PathBuf>| {
        Figure::Text(
            dir.as_ref()
                .map_or("/dev/null/in-memory".into(), |d| d.display().to_string()),
        )
    };
    let size = |dir: &Option<std::path::PathBuf>| {
        Figure::Int(dir.as_deref().map_or(0, directory_bytes) as i64)
    };
    vec![
        entry("clientPort", Some("client_port"), Figure::count(port)),
        entry("secureClientPort", None, Figure::Int(-1)),
        entry("dataDir", Some("data_dir"), dir(&snap_dir)),
        entry("dataDirSize", None, size(&snap_dir)),
        entry("dataLogDir", Some("data_log_dir"), dir(&log_dir)),
        entry("dataLogSize", None, size(&log_dir)),
        entry(
            "tickTime",
            Some("tick_time"),
            Figure::count(c.core.tick_time_ms),
        ),
        entry(
            "maxClientCnxns",
            Some("max_client_cnxns"),
            Figure::count(c.max_client_cnxns),
        ),
        entry(
            "minSessionTimeout",
            Some("min_session_timeout"),
            Figure::count(c.core.min_session_timeout_ms),
        ),
        entry(
            "maxSessionTimeout",
            Some("max_session_timeout"),
            Figure::count(c.core.max_session_timeout_ms),
        ),
        entry(
            "clientPortListenBacklog",
            Some("client_port_listen_backlog"),
            Figure::Int(-1),
        ),
        entry("serverId", Some("server_id"), Figure::count(id)),
    ]
}

/// Messages a durable server holds until their writes are on disk: ZooKeeper's outstanding
/// requests. 0 in memory, where nothing waits.
pub(crate) fn outstanding(shared: &Shared) -> usize {
    shared.router().backlog().map_or(0, |b| b.messages())
}

/// The bytes of the files directly in `dir` (ZooKeeper's `getDataDirSize`); 0 when it cannot be
/// read.
fn directory_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .filter_map(|e| e.ok()?.metadata().ok())
            .filter(std::fs::Metadata::is_file)
            .map(|m| m.len())
            .sum()
    })
}

/// The newest snapshot of a durable server: its zxid and when it was written (ms since the
/// epoch), as ZooKeeper's `last_snapshot` reports them; `None` in memory or before any.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn last_snapshot(shared: &Shared) -> Option<(i64, i64)> {
    let durable = shared.durable.as_ref()?;
    let (zxid, path) = durable.dir.snapshots().ok()?.pop()?;
    let written = std::fs::metadata(&path).and_then(|m| m.modified()).ok()?;
    let ms = written
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    Some((zxid, ms))
}

/// `envi`: ZooKeeper's `Environment.list` keys that have a meaning outside a JVM.
pub(crate) fn environment() -> Vec<(&'static str, String)> {
    let mut out = vec![
        ("zookeeper.version", full_version()),
        ("host.name", "localhost".to_string()),
        ("java.version", "none (shepherd, Rust)".to_string()),
        ("java.io.tmpdir", std::env::temp_dir().display().to_string()),
        ("os.name", std::env::consts::OS.to_string()),
        ("os.arch", std::env::consts::ARCH.to_string()),
    ];
    if let Ok(release) = std::fs::read_to_string("/proc/sys/kernel/osrelease") {
        out.push(("os.version", release.trim().to_string()));
    }
    for (key, var) in [("user.name", "USER"), ("user.home", "HOME")] {
        if let Ok(value) = std::env::var(var) {
            out.push((key, value));
        }
    }
    if let Ok(dir) = std::env::current_dir() {
        out.push(("user.dir", dir.display().to_string()));
    }
    out
}

/// mntr (docs/protocol.md §14): ZooKeeper 3.8's names and meanings for what Shepherd measures.
pub(crate) struct Monitor {
    /// Single figures, in mntr's order.
    pub figures: Vec<(&'static str, Kind, Figure)>,
    /// The watch-trigger summaries (`*_watch_count`), ZooKeeper's BASIC summaries.
    pub triggers: Vec<(&'static str, TriggerSummary)>,
    /// `readlatency` and `updatelatency`, ZooKeeper's ADVANCED summaries.
    pub latencies: Vec<(&'static str, LatencyReading)>,
}

/// Real 3.8 prints about 450 keys, most about its request pipeline, quorum, snapshots and TLS;
/// those we have no honest value for are left out rather than printed as zeros. The
/// file-descriptor keys appear where the OS lets us count (Linux), as ZooKeeper prints them only
/// on Unix. `last_zxid` is Shepherd's own.
///
/// As ensemble member `member`, the state is `leader` or `follower` with ZooKeeper's quorum
/// keys (`peer_state`, `quorum_size`, and the leader's `learners`, `synced_followers` and the
/// rest, counting the other members that are up as its synced followers); a single server is
/// `standalone`.
pub(crate) fn monitor(shared: &Shared, member: u64) -> Monitor {
    let (min, avg, max) = shared.stats.latency_ms();
    let packets_received = shared.stats.packets_received.load(Relaxed);
    let packets_sent = shared.stats.packets_sent.load(Relaxed);
    let connections = shared.router().connections();
    let uptime = shared.uptime().as_millis();
    // Read from /proc before the core lock is taken: no file-system reads under it.
    let fds = file_descriptors();
    let latencies = vec![
        ("readlatency", shared.stats.read_latency.read()),
        ("updatelatency", shared.stats.update_latency.read()),
    ];
    let role = shared.members.role(member);
    let quorum = quorum_figures(shared, role, uptime);
    // One read of the core, so that its figures agree with each other.
    shared.query(|core| {
        let metrics = core.metrics();
        use Figure::{Float, Int, Text};
        use Kind::{Counter, Gauge};
        let mut figures = vec![
            ("version", Kind::Text, Text(full_version())),
            ("server_state", Kind::Text, Text(role.name().into())),
            ("avg_latency", Gauge, Float(avg)),
            ("max_latency", Gauge, Figure::count(max)),
            ("min_latency", Gauge, Figure::count(min)),
            ("packets_received", Gauge, Figure::count(packets_received)),
            ("packets_sent", Gauge, Figure::count(packets_sent)),
            ("num_alive_connections", Gauge, Figure::count(connections)),
            // Requests are applied as they are read; what waits is what a durable server holds
            // for its disk (`route/backlog.rs`).
            (
                "outstanding_requests",
                Gauge,
                Figure::count(outstanding(shared)),
            ),
            ("znode_count", Gauge, Figure::count(core.node_count() + 1)),
            ("watch_count", Gauge, Figure::count(core.watch_count())),
            (
                "ephemerals_count",
                Gauge,
                Figure::count(core.ephemerals_count()),
            ),
            (
                "approximate_data_size",
                Gauge,
                Figure::count(core.approximate_data_size()),
            ),
        ];
        figures.extend(quorum.iter().cloned());
        if let Some((open, max_fds)) = fds {
            figures.push(("open_file_descriptor_count", Gauge, Figure::count(open)));
            figures.push(("max_file_descriptor_count", Gauge, Figure::count(max_fds)));
        }
        figures.extend([
            ("uptime", Gauge, Figure::count(uptime)),
            (
                "global_sessions",
                Gauge,
                Figure::count(core.session_count()),
            ),
            // Standalone servers have no local sessions.
            ("local_sessions", Gauge, Int(0)),
            ("watch_bytes", Counter, Figure::count(metrics.watch_bytes)),
            ("last_zxid", Kind::Text, Int(core.last_zxid())),
        ]);
        Monitor {
            figures,
            triggers: vec![
                ("node_created_watch_count", metrics.node_created_triggers),
                ("node_deleted_watch_count", metrics.node_deleted_triggers),
                ("node_changed_watch_count", metrics.node_changed_triggers),
                ("node_children_watch_count", metrics.node_children_triggers),
            ],
            latencies,
        }
    })
}

/// The keys a quorum member's mntr adds (ZooKeeper 3.8 `QuorumPeer`, `Leader` and
/// `LeaderZooKeeperServer` metrics): none for a single server.
fn quorum_figures(
    shared: &Shared,
    role: member::Role,
    uptime: u128,
) -> Vec<(&'static str, Kind, Figure)> {
    use Figure::{Int, Text};
    use Kind::Gauge;
    let n = shared.members.len();
    let peer_state = match role {
        member::Role::Standalone => return Vec::new(),
        member::Role::Leader => "leading - broadcast",
        member::Role::Follower => "following - broadcast",
        member::Role::Looking => "looking - election",
    };
    let mut out = vec![
        ("peer_state", Kind::Text, Text(peer_state.into())),
        ("quorum_size", Gauge, Figure::count(n)),
    ];
    if role == member::Role::Leader {
        let followers = shared
            .members
            .ids()
            .into_iter()
            .filter(|id| Some(*id) != shared.members.leader())
            .filter(|id| {
                shared.members.is_stopped(*id) == Some(false) && !shared.frozen.is_partitioned(*id)
            })
            .count();
        out.extend([
            ("learners", Gauge, Figure::count(followers)),
            ("synced_followers", Gauge, Figure::count(followers)),
            ("synced_non_voting_followers", Gauge, Int(0)),
            ("synced_observers", Gauge, Int(0)),
            ("pending_syncs", Gauge, Int(0)),
            // No proposals are sent: ZooKeeper's value before the first.
            ("last_proposal_size", Gauge, Int(-1)),
            ("leader_uptime", Gauge, Figure::count(uptime)),
        ]);
    }
    out
}

/// (open, soft limit) file descriptors of this process, where the OS tells us (Linux).
fn file_descriptors() -> Option<(usize, u64)> {
    let open = std::fs::read_dir("/proc/self/fd").ok()?.count();
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    let soft = line.split_whitespace().nth(3)?.parse().ok()?;
    Some((open, soft))
}
