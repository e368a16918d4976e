//! Four-letter words (docs/protocol.md §14): the text each admin command prints, in ZooKeeper's formats, so that
//! `zkServer.sh status`, monitoring agents and Prometheus exporters read Shepherd unchanged.
//!
//! Everything here reads state; only `crst` and `srst` reset counters. The whitelist rule is
//! ZooKeeper's: a known word that is not whitelisted answers a fixed sentence.

use std::fmt::Write;
use std::sync::atomic::Ordering::Relaxed;

use shepherd_protocol::{FourLetterWord, OpCode};

use super::router::Shared;

/// The version we report: ZooKeeper's, so clients that gate features on it enable all of 3.8,
/// and only `[A-Za-z0-9.-]` so that strict parsers (go-zookeeper's) accept it.
pub(crate) const VERSION: &str = concat!("3.8.0-shepherd-", env!("CARGO_PKG_VERSION"));
const BUILT_ON: &str = "01/01/2026 00:00 GMT";

/// The answer to a word received on the wire, whitelist applied.
pub(super) fn answer(shared: &Shared, word: FourLetterWord) -> String {
    if word == FourLetterWord::TelnetClose {
        return String::new();
    }
    if !shared.config.four_letter_words.allows(word) {
        return format!(
            "{} is not executed because it is not in the whitelist.\n",
            word.name()
        );
    }
    render(shared, word)
}

/// The answer to a word, whitelist or not.
pub(super) fn render(shared: &Shared, word: FourLetterWord) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_word(shared, word, &mut out);
    out
}

fn write_word(shared: &Shared, word: FourLetterWord, out: &mut String) -> std::fmt::Result {
    match word {
        FourLetterWord::Ruok => out.push_str("imok"),
        FourLetterWord::Isro => out.push_str("rw"),
        FourLetterWord::Srvr => {
            writeln!(out, "Zookeeper version: {VERSION}, built on {BUILT_ON}")?;
            write_server_stats(shared, out)?;
        }
        FourLetterWord::Stat => {
            writeln!(out, "Zookeeper version: {VERSION}, built on {BUILT_ON}")?;
            writeln!(out, "Clients:")?;
            for (_, conn) in shared.connection_stats() {
                writeln!(
                    out,
                    " /{}[1](queued={},recved={},sent={})",
                    conn.peer,
                    conn.queued.load(Relaxed),
                    conn.received.load(Relaxed),
                    conn.sent.load(Relaxed)
                )?;
            }
            writeln!(out)?;
            write_server_stats(shared, out)?;
        }
        FourLetterWord::Cons => write_cons(shared, out)?,
        FourLetterWord::Mntr => write_mntr(shared, out)?,
        FourLetterWord::Conf => {
            let c = &shared.config;
            writeln!(out, "clientPort={}", c.port)?;
            writeln!(out, "secureClientPort=-1")?;
            writeln!(out, "dataDir=/dev/null/in-memory")?;
            writeln!(out, "dataDirSize=0")?;
            writeln!(out, "dataLogDir=/dev/null/in-memory")?;
            writeln!(out, "dataLogSize=0")?;
            writeln!(out, "tickTime={}", c.core.tick_time_ms)?;
            writeln!(out, "maxClientCnxns={}", c.max_client_cnxns)?;
            writeln!(out, "minSessionTimeout={}", c.core.min_session_timeout_ms)?;
            writeln!(out, "maxSessionTimeout={}", c.core.max_session_timeout_ms)?;
            writeln!(out, "clientPortListenBacklog=-1")?;
            writeln!(out, "serverId=0")?;
        }
        FourLetterWord::Envi => {
            writeln!(out, "Environment:")?;
            writeln!(out, "zookeeper.version={VERSION}, built on {BUILT_ON}")?;
            writeln!(out, "host.name=localhost")?;
            writeln!(out, "java.version=none (shepherd, Rust)")?;
            writeln!(out, "os.name={}", std::env::consts::OS)?;
            writeln!(out, "os.arch={}", std::env::consts::ARCH)?;
            if let Ok(dir) = std::env::current_dir() {
                writeln!(out, "user.dir={}", dir.display())?;
            }
        }
        FourLetterWord::Wchs => {
            let watches = shared.query(|core| core.data_watches());
            let conns: std::collections::BTreeSet<_> = watches.iter().map(|w| w.0).collect();
            let paths: std::collections::BTreeSet<_> = watches.iter().map(|w| &w.2).collect();
            writeln!(
                out,
                "{} connections watching {} paths",
                conns.len(),
                paths.len()
            )?;
            writeln!(out, "Total watches:{}", watches.len())?;
        }
        FourLetterWord::Wchc => {
            let watches = shared.query(|core| core.data_watches());
            let mut by_session = std::collections::BTreeMap::<i64, Vec<&str>>::new();
            for (_, session, path) in &watches {
                by_session.entry(*session).or_default().push(path);
            }
            for (session, paths) in by_session {
                writeln!(out, "0x{session:x}")?;
                for path in paths {
                    writeln!(out, "\t{path}")?;
                }
            }
            writeln!(out)?;
        }
        FourLetterWord::Wchp => {
            let watches = shared.query(|core| core.data_watches());
            let mut by_path = std::collections::BTreeMap::<&str, Vec<i64>>::new();
            for (_, session, path) in &watches {
                by_path.entry(path).or_default().push(*session);
            }
            for (path, sessions) in by_path {
                writeln!(out, "{path}")?;
                for session in sessions {
                    writeln!(out, "\t0x{session:x}")?;
                }
            }
            writeln!(out)?;
        }
        FourLetterWord::Dump => write_dump(shared, out)?,
        FourLetterWord::Dirs => {
            writeln!(out, "datadir_size: 0")?;
            writeln!(out, "logdir_size: 0")?;
        }
        FourLetterWord::Crst => {
            for (_, conn) in shared.connection_stats() {
                conn.received.store(0, Relaxed);
                conn.sent.store(0, Relaxed);
            }
            writeln!(out, "Connection stats reset.")?;
        }
        FourLetterWord::Srst => {
            shared.stats.reset();
            writeln!(out, "Server stats reset.")?;
        }
        FourLetterWord::Gtmk | FourLetterWord::Stmk => out.push('0'),
        FourLetterWord::Hash => {}
        FourLetterWord::TelnetClose => {}
    }
    Ok(())
}

fn write_server_stats(shared: &Shared, out: &mut String) -> std::fmt::Result {
    let (min, avg, max) = shared.stats.latency_ms();
    let (zxid, nodes) = shared.query(|core| (core.last_zxid(), core.node_count()));
    writeln!(out, "Latency min/avg/max: {min}/{avg:.4}/{max}")?;
    writeln!(
        out,
        "Received: {}",
        shared.stats.packets_received.load(Relaxed)
    )?;
    writeln!(out, "Sent: {}", shared.stats.packets_sent.load(Relaxed))?;
    writeln!(out, "Connections: {}", shared.connection_stats().len())?;
    writeln!(out, "Outstanding: 0")?;
    writeln!(out, "Zxid: 0x{zxid:x}")?;
    writeln!(out, "Mode: standalone")?;
    // ZooKeeper counts the root's "" alias as a node of its own.
    writeln!(out, "Node count: {}", nodes + 1)
}

fn write_cons(shared: &Shared, out: &mut String) -> std::fmt::Result {
    for (id, conn) in shared.connection_stats() {
        let (session, timeout) = shared.query(|core| {
            let session = core.connection_session(id);
            (session, session.and_then(|s| core.session_timeout(s)))
        });
        let lop = i32::try_from(conn.last_op.load(Relaxed))
            .ok()
            .and_then(|op| OpCode::try_from(op).ok())
            .map_or("NA", short_op_name);
        write!(
            out,
            " /{}[1](queued={},recved={},sent={}",
            conn.peer,
            conn.queued.load(Relaxed),
            conn.received.load(Relaxed),
            conn.sent.load(Relaxed)
        )?;
        if let Some(session) = session {
            write!(
                out,
                ",sid=0x{session:x},lop={lop},est={},to={}",
                conn.established_ms,
                timeout.unwrap_or(0)
            )?;
        }
        writeln!(out, ")")?;
    }
    writeln!(out)
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

/// mntr (docs/protocol.md §14): ZooKeeper 3.8's key names and meanings, for the metrics Shepherd can measure.
/// Real 3.8 prints about 450 keys, most about its request pipeline, quorum, snapshots and TLS;
/// those we have no honest value for are left out rather than printed as zeros. Printed:
/// the classic keys, `zk_uptime`, the session counts, `zk_watch_bytes`, and the four watch
/// summaries (`zk_{avg,min,max,cnt,sum}_node_{created,deleted,changed,children}_watch_count`,
/// see [`crate::core::CoreMetrics`]). The file-descriptor keys appear where the OS lets us
/// count (Linux), as ZooKeeper prints them only on Unix. `zk_last_zxid` is Shepherd's own.
fn write_mntr(shared: &Shared, out: &mut String) -> std::fmt::Result {
    let (min, avg, max) = shared.stats.latency_ms();
    // One read of the core, so that the figures agree with each other.
    shared.query(|core| {
        let metrics = core.metrics();
        let sessions = core.sessions().len();
        let mut lines: Vec<(&str, String)> = vec![
            ("version", format!("{VERSION}, built on {BUILT_ON}")),
            ("server_state", "standalone".into()),
            ("avg_latency", java_double(avg)),
            ("max_latency", max.to_string()),
            ("min_latency", min.to_string()),
            (
                "packets_received",
                shared.stats.packets_received.load(Relaxed).to_string(),
            ),
            (
                "packets_sent",
                shared.stats.packets_sent.load(Relaxed).to_string(),
            ),
            (
                "num_alive_connections",
                shared.connection_stats().len().to_string(),
            ),
            // Requests are applied as they are read: none is ever outstanding.
            ("outstanding_requests", "0".into()),
            ("znode_count", (core.node_count() + 1).to_string()),
            ("watch_count", core.watch_count().to_string()),
            ("ephemerals_count", core.ephemerals_count().to_string()),
            (
                "approximate_data_size",
                core.approximate_data_size().to_string(),
            ),
        ];
        if let Some((open, max_fds)) = file_descriptors() {
            lines.push(("open_file_descriptor_count", open.to_string()));
            lines.push(("max_file_descriptor_count", max_fds.to_string()));
        }
        lines.extend([
            ("uptime", shared.uptime().as_millis().to_string()),
            ("global_sessions", sessions.to_string()),
            // Standalone servers have no local sessions.
            ("local_sessions", "0".into()),
            ("watch_bytes", metrics.watch_bytes.to_string()),
            ("last_zxid", core.last_zxid().to_string()),
        ]);
        for (key, value) in lines {
            writeln!(out, "zk_{key}\t{value}")?;
        }
        // Watch triggers, as ZooKeeper's AvgMinMaxCounter summaries print them.
        for (name, summary) in [
            ("node_created_watch_count", metrics.node_created_triggers),
            ("node_deleted_watch_count", metrics.node_deleted_triggers),
            ("node_changed_watch_count", metrics.node_changed_triggers),
            ("node_children_watch_count", metrics.node_children_triggers),
        ] {
            writeln!(out, "zk_avg_{name}\t{}", java_double(summary.avg()))?;
            writeln!(out, "zk_min_{name}\t{}", summary.min)?;
            writeln!(out, "zk_max_{name}\t{}", summary.max)?;
            writeln!(out, "zk_cnt_{name}\t{}", summary.count)?;
            writeln!(out, "zk_sum_{name}\t{}", summary.sum)?;
        }
        Ok(())
    })
}

/// A double as Java's `Double.toString` prints the small values mntr shows: `0.0`, `1.5`.
fn java_double(value: f64) -> String {
    let text = value.to_string();
    if text.contains(['.', 'e', 'N', 'i']) {
        text
    } else {
        format!("{text}.0")
    }
}

/// (open, soft limit) file descriptors of this process, where the OS tells us (Linux).
fn file_descriptors() -> Option<(usize, u64)> {
    let open = std::fs::read_dir("/proc/self/fd").ok()?.count();
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    let soft = line.split_whitespace().nth(3)?.parse().ok()?;
    Some((open, soft))
}

fn write_dump(shared: &Shared, out: &mut String) -> std::fmt::Result {
    let sessions = shared.query(|core| core.sessions());
    writeln!(out, "SessionTracker dump:")?;
    let mut buckets = std::collections::BTreeMap::<u64, Vec<i64>>::new();
    for s in &sessions {
        buckets.entry(s.expires_at_ms).or_default().push(s.id);
    }
    writeln!(
        out,
        "Session Sets ({})/({}):",
        buckets.len(),
        sessions.len()
    )?;
    for (at, ids) in &buckets {
        writeln!(out, "{} expire at {}:", ids.len(), at)?;
        for id in ids {
            writeln!(out, "\t0x{id:x}")?;
        }
    }
    writeln!(out, "ephemeral nodes dump:")?;
    let with_ephemerals: Vec<_> = sessions
        .iter()
        .filter(|s| !s.ephemerals.is_empty())
        .collect();
    writeln!(out, "Sessions with Ephemerals ({}):", with_ephemerals.len())?;
    for s in with_ephemerals {
        writeln!(out, "0x{:x}:", s.id)?;
        for path in &s.ephemerals {
            writeln!(out, "\t{path}")?;
        }
    }
    writeln!(out, "Connections dump:")?;
    let conns = shared.connection_stats();
    writeln!(out, "Connections Sets (1)/({}):", conns.len())?;
    shared.query(|core| {
        for (id, conn) in conns {
            let session = core.connection_session(id).unwrap_or(0);
            writeln!(out, "\tip: /{} sessionId: 0x{session:x}", conn.peer)?;
        }
        Ok(())
    })
}
