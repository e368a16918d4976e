//! Four-letter words (docs/protocol.md §14): the text each admin command prints, in ZooKeeper's formats, so that
//! `zkServer.sh status`, monitoring agents and Prometheus exporters read Shepherd unchanged.
//!
//! Everything here reads state; only `crst` and `srst` reset counters. The reading is
//! `report.rs`'s: counters for single figures, bounded slices for lists, nothing walked or
//! read from disk under the core lock. The whitelist rule is
//! ZooKeeper's: a known word that is not whitelisted answers a fixed sentence.

use std::fmt::Write;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use shepherd_protocol::FourLetterWord;

use crate::shell::ensemble::member::Role;
use crate::shell::observe::report::{self, Figure, full_version};
use crate::shell::state::shared::Shared;

/// The answer to a word received on the wire of ensemble member `member` (1 for a single
/// server), whitelist applied.
pub(crate) fn answer(shared: &Shared, member: u64, word: FourLetterWord) -> String {
    if word == FourLetterWord::TelnetClose {
        return String::new();
    }
    if !shared.config.four_letter_words.allows(word) {
        return format!(
            "{} is not executed because it is not in the whitelist.\n",
            word.name()
        );
    }
    render(shared, member, word)
}

/// [`answer`], off the async workers for the words that list state.
///
/// Those walk the core a slice at a time, but building and formatting a million lines takes
/// seconds of CPU: on an async worker that would stall every connection task queued behind it.
/// They run on a blocking thread instead, one at a time server-wide (`Shared::walks`), so that
/// a flood of them costs one answer's memory, not one per connection. Cancellation safe: the
/// permit travels with the blocking job, so a dropped future leaves the walk to finish (and its
/// answer to be dropped) while the next waits for it.
pub(crate) async fn answer_off_workers(
    shared: &Arc<Shared>,
    member: u64,
    word: FourLetterWord,
) -> String {
    if !walks_state(word) {
        return answer(shared, member, word);
    }
    let Ok(permit) = Arc::clone(&shared.walks).acquire_owned().await else {
        return String::new();
    };
    let shared = Arc::clone(shared);
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        answer(&shared, member, word)
    })
    .await
    .unwrap_or_default()
}

/// The words whose answer grows with the state: one line per watch, session or connection.
pub(crate) fn walks_state(word: FourLetterWord) -> bool {
    matches!(
        word,
        FourLetterWord::Wchc
            | FourLetterWord::Wchp
            | FourLetterWord::Dump
            | FourLetterWord::Cons
            | FourLetterWord::Stat
    )
}

/// The answer to a word as member `member` gives it, whitelist or not.
pub(crate) fn render(shared: &Shared, member: u64, word: FourLetterWord) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_word(shared, member, word, &mut out);
    out
}

/// What a ZooKeeper server that is not running answers most words with (3.8's
/// `AbstractFourLetterCommand.ZK_NOT_SERVING`): an ensemble member while it is LOOKING.
const NOT_SERVING: &str = "This ZooKeeper instance is not currently serving requests";

fn write_word(
    shared: &Shared,
    member: u64,
    word: FourLetterWord,
    out: &mut String,
) -> std::fmt::Result {
    // As a 3.8 peer with no running server answers them, measured on a member of three left
    // alone: `ruok`, `envi` and the trace masks as ever, `isro` "null", `hash` this line
    // without a newline, the rest with one.
    if !shared.members.serves(member) {
        match word {
            FourLetterWord::Ruok
            | FourLetterWord::Envi
            | FourLetterWord::Gtmk
            | FourLetterWord::Stmk
            | FourLetterWord::TelnetClose => {}
            FourLetterWord::Isro => {
                out.push_str("null");
                return Ok(());
            }
            FourLetterWord::Hash => {
                out.push_str(NOT_SERVING);
                return Ok(());
            }
            _ => return writeln!(out, "{NOT_SERVING}"),
        }
    }
    match word {
        FourLetterWord::Ruok => out.push_str("imok"),
        FourLetterWord::Isro => out.push_str("rw"),
        FourLetterWord::Srvr => {
            writeln!(out, "Zookeeper version: {}", full_version())?;
            write_server_stats(shared, member, out)?;
        }
        FourLetterWord::Stat => {
            writeln!(out, "Zookeeper version: {}", full_version())?;
            writeln!(out, "Clients:")?;
            for conn in report::connections(shared) {
                writeln!(
                    out,
                    " /{}[1](queued={},recved={},sent={})",
                    conn.peer, conn.queued, conn.received, conn.sent
                )?;
            }
            writeln!(out)?;
            write_server_stats(shared, member, out)?;
        }
        FourLetterWord::Cons => write_cons(shared, out)?,
        FourLetterWord::Mntr => write_mntr(shared, member, out)?,
        FourLetterWord::Conf => {
            for entry in report::configuration(shared, member) {
                writeln!(out, "{}={}", entry.text_key, text(&entry.value))?;
            }
            write_quorum_conf(shared, member, out)?;
        }
        FourLetterWord::Envi => {
            writeln!(out, "Environment:")?;
            for (key, value) in report::environment() {
                writeln!(out, "{key}={value}")?;
            }
        }
        FourLetterWord::Wchs => {
            let summary = report::watch_summary(shared);
            writeln!(
                out,
                "{} connections watching {} paths",
                summary.connections, summary.paths
            )?;
            writeln!(out, "Total watches:{}", summary.total)?;
        }
        FourLetterWord::Wchc => {
            for (session, paths) in report::watches_by_session(shared) {
                writeln!(out, "0x{session:x}")?;
                for path in paths {
                    writeln!(out, "\t{path}")?;
                }
            }
            writeln!(out)?;
        }
        FourLetterWord::Wchp => {
            for (path, sessions) in report::watches_by_path(shared) {
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
            for (_, conn) in shared.router().connection_stats() {
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

/// A figure as the text windows print it; doubles as Java's `Double.toString` prints the small
/// values mntr shows (`0.0`, `1.5`).
fn text(figure: &Figure) -> String {
    match figure {
        Figure::Int(n) => n.to_string(),
        Figure::Float(x) => java_double(*x),
        Figure::Text(t) => t.clone(),
    }
}

/// What a quorum member's `conf` adds (ZooKeeper 3.8 `QuorumZooKeeperServer.dumpConf`): the
/// quorum settings, then `membership: ` and the dynamic configuration. Nothing for a single
/// server. `initLimit` and `syncLimit` are ZooKeeper's sample configuration's, as nothing here
/// waits on them.
fn write_quorum_conf(shared: &Shared, member: u64, out: &mut String) -> std::fmt::Result {
    let Some((quorum, election)) = shared.members.peer_ports(member) else {
        return Ok(());
    };
    if shared.members.len() <= 1 {
        return Ok(());
    }
    writeln!(out, "initLimit=10")?;
    writeln!(out, "syncLimit=5")?;
    writeln!(out, "electionAlg=3")?;
    writeln!(out, "electionPort={election}")?;
    writeln!(out, "quorumPort={quorum}")?;
    writeln!(out, "peerType=0")?;
    writeln!(out, "membership: ")?;
    out.push_str(&shared.members.dynamic_config());
    Ok(())
}

fn write_server_stats(shared: &Shared, member: u64, out: &mut String) -> std::fmt::Result {
    let s = report::server_summary(shared);
    writeln!(
        out,
        "Latency min/avg/max: {}/{:.4}/{}",
        s.min_latency, s.avg_latency, s.max_latency
    )?;
    writeln!(out, "Received: {}", s.packets_received)?;
    writeln!(out, "Sent: {}", s.packets_sent)?;
    writeln!(out, "Connections: {}", s.connections)?;
    writeln!(out, "Outstanding: {}", report::outstanding(shared))?;
    writeln!(out, "Zxid: 0x{:x}", s.zxid)?;
    let role = shared.members.role(member);
    writeln!(out, "Mode: {}", role.name())?;
    writeln!(out, "Node count: {}", s.node_count)?;
    if role == Role::Leader {
        // ZooKeeper's leader adds its proposal sizes; none is ever sent here (-1: none yet).
        writeln!(out, "Proposal sizes last/min/max: -1/-1/-1")?;
    }
    Ok(())
}

fn write_cons(shared: &Shared, out: &mut String) -> std::fmt::Result {
    for conn in report::connections(shared) {
        write!(
            out,
            " /{}[1](queued={},recved={},sent={}",
            conn.peer, conn.queued, conn.received, conn.sent
        )?;
        if let Some((session, timeout)) = conn.session {
            write!(
                out,
                ",sid=0x{session:x},lop={},est={},to={timeout}",
                conn.last_op, conn.established_ms
            )?;
        }
        writeln!(out, ")")?;
    }
    writeln!(out)
}

/// mntr (docs/protocol.md §14): the figures of [`report::monitor`], then the summaries as
/// ZooKeeper's `AvgMinMaxCounter` (`zk_{avg,min,max,cnt,sum}_<name>`) and, for the latencies,
/// `AvgMinMaxPercentileCounter` (also `zk_p{50,95,99,999}_<name>`) print them.
fn write_mntr(shared: &Shared, member: u64, out: &mut String) -> std::fmt::Result {
    let monitor = report::monitor(shared, member);
    for (key, _, value) in &monitor.figures {
        writeln!(out, "zk_{key}\t{}", text(value))?;
    }
    for (name, summary) in &monitor.triggers {
        writeln!(out, "zk_avg_{name}\t{}", java_double(summary.avg()))?;
        writeln!(out, "zk_min_{name}\t{}", summary.min)?;
        writeln!(out, "zk_max_{name}\t{}", summary.max)?;
        writeln!(out, "zk_cnt_{name}\t{}", summary.count)?;
        writeln!(out, "zk_sum_{name}\t{}", summary.sum)?;
    }
    for (name, reading) in &monitor.latencies {
        writeln!(out, "zk_avg_{name}\t{}", java_double(reading.avg_ms()))?;
        writeln!(out, "zk_min_{name}\t{}", reading.min_ms)?;
        writeln!(out, "zk_max_{name}\t{}", reading.max_ms)?;
        writeln!(out, "zk_cnt_{name}\t{}", reading.count)?;
        writeln!(out, "zk_sum_{name}\t{}", reading.sum_ms.round())?;
        for (label, q) in [("50", 0.5), ("95", 0.95), ("99", 0.99), ("999", 0.999)] {
            writeln!(
                out,
                "zk_p{label}_{name}\t{}",
                reading.quantile_ms(q).round()
            )?;
        }
    }
    Ok(())
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

fn write_dump(shared: &Shared, out: &mut String) -> std::fmt::Result {
    let dump = report::session_dump(shared);
    writeln!(out, "SessionTracker dump:")?;
    let sessions: usize = dump.expiry.values().map(Vec::len).sum();
    writeln!(out, "Session Sets ({})/({}):", dump.expiry.len(), sessions)?;
    for (at, ids) in &dump.expiry {
        writeln!(out, "{} expire at {}:", ids.len(), at)?;
        for id in ids {
            writeln!(out, "\t0x{id:x}")?;
        }
    }
    writeln!(out, "ephemeral nodes dump:")?;
    writeln!(out, "Sessions with Ephemerals ({}):", dump.ephemerals.len())?;
    for (id, paths) in &dump.ephemerals {
        writeln!(out, "0x{id:x}:")?;
        for path in paths {
            writeln!(out, "\t{path}")?;
        }
    }
    writeln!(out, "Connections dump:")?;
    let conns = report::connections(shared);
    writeln!(out, "Connections Sets (1)/({}):", conns.len())?;
    for conn in conns {
        let session = conn.session.map_or(0, |(id, _)| id);
        writeln!(out, "\tip: /{} sessionId: 0x{session:x}", conn.peer)?;
    }
    Ok(())
}
