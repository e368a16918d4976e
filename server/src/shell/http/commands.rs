//! The AdminServer's commands: `/commands/<name>` answers ZooKeeper 3.8's JSON for each
//! command that has a meaning in a standalone in-memory server, with ZooKeeper's field names.
//! The figures come from [`report`], the same gathering the four-letter words print.
//!
//! Every answer has `command` (the primary name) and `error` (null, or a message), as
//! ZooKeeper's `CommandResponse` does; an unknown name answers `Unknown command: <name>`.
//! docs/operations.md lists every field that differs from ZooKeeper's, and why.

use serde_json::{Map, Value, json};

use crate::shell::observe::report::{self, Figure};
use crate::shell::state::shared::Shared;

/// The commands served, each as (primary name, aliases), in the order of `/commands`
/// (ZooKeeper's `Commands.java`, which lists primary names sorted).
pub(crate) const COMMANDS: &[(&str, &[&str])] = &[
    ("configuration", &["conf", "config"]),
    ("connections", &["cons"]),
    ("dirs", &[]),
    ("dump", &[]),
    ("environment", &["env", "envi"]),
    ("initial_configuration", &["icfg"]),
    ("is_read_only", &["isro"]),
    ("last_snapshot", &["lsnp"]),
    ("leader", &["lead"]),
    ("monitor", &["mntr"]),
    ("ruok", &[]),
    ("server_stats", &["srvr"]),
    ("stats", &["stat"]),
    ("voting_view", &[]),
    ("watch_summary", &["wchs"]),
    ("watches", &["wchc"]),
    ("watches_by_path", &["wchp"]),
    ("zabstate", &[]),
];

/// The primary name of a command known by `name` or an alias.
fn primary(name: &str) -> Option<&'static str> {
    COMMANDS
        .iter()
        .find(|(primary, aliases)| *primary == name || aliases.contains(&name))
        .map(|(primary, _)| *primary)
}

/// Whether the command's answer grows with the state (`dump`, or the twin of a four-letter word
/// that lists it): those are built off the async workers, one at a time (`http/mod.rs`).
pub(crate) fn walks_state(name: &str) -> bool {
    let Some(command) = primary(name) else {
        return false;
    };
    command == "dump"
        || COMMANDS
            .iter()
            .filter(|(primary, _)| *primary == command)
            .flat_map(|(_, aliases)| aliases.iter())
            .filter_map(|alias| shepherd_protocol::FourLetterWord::from_name(alias))
            .any(crate::shell::observe::admin::walks_state)
}

/// `/commands`: the list of links ZooKeeper's servlet prints.
pub(crate) fn list() -> String {
    COMMANDS
        .iter()
        .map(|(name, _)| format!("<a href=\"/commands/{name}\">{name}</a>\n<br/>\n"))
        .collect()
}

/// The JSON answer to `/commands/<name>`, as member 1 gives it (the AdminServer is one for the
/// whole server; see [`run_for`]).
pub(crate) fn run(shared: &Shared, name: &str) -> Value {
    run_for(shared, 1, name)
}

/// The JSON answer to `/commands/<name>` as ensemble member `member` gives it: its mode in
/// `server_stats`, `stats` and `monitor`, its id and port in `configuration`, and the quorum
/// commands (`leader`, `zabstate`) answered as a quorum member answers them.
pub(crate) fn run_for(shared: &Shared, member: u64, name: &str) -> Value {
    let Some(command) = primary(name) else {
        return json!({ "command": name, "error": format!("Unknown command: {name}") });
    };
    let mut out = Map::new();
    match command {
        "configuration" => {
            for entry in report::configuration(shared, member) {
                if let Some(key) = entry.json_key {
                    out.insert(key.into(), figure(entry.value));
                }
            }
        }
        "connections" => {
            let rows = report::connections(shared).into_iter().map(connection);
            out.insert("connections".into(), rows.collect());
            out.insert("secure_connections".into(), json!([]));
        }
        "dirs" => {
            out.insert("datadir_size".into(), json!(0));
            out.insert("logdir_size".into(), json!(0));
        }
        "dump" => {
            let dump = report::session_dump(shared);
            let expiry: Map<_, _> = dump
                .expiry
                .into_iter()
                .map(|(at, ids)| (at.to_string(), json!(ids)))
                .collect();
            let ephemerals: Map<_, _> = dump
                .ephemerals
                .into_iter()
                .map(|(id, paths)| (id.to_string(), json!(paths)))
                .collect();
            out.insert("expiry_time_to_session_ids".into(), expiry.into());
            out.insert("session_id_to_ephemeral_paths".into(), ephemerals.into());
        }
        "environment" => {
            for (key, value) in report::environment() {
                out.insert(key.into(), value.into());
            }
        }
        "initial_configuration" => {
            let text = shared.config.initial_configuration.clone();
            out.insert("initial_configuration".into(), json!(text));
        }
        "is_read_only" => {
            out.insert("read_only".into(), json!(false));
        }
        "last_snapshot" => {
            // Before any snapshot exists, and always in memory, ZooKeeper's answer is -1 twice.
            let (zxid, timestamp) = report::last_snapshot(shared).unwrap_or((-1, -1));
            out.insert("zxid".into(), json!(format!("{zxid:x}")));
            out.insert("timestamp".into(), json!(timestamp));
        }
        "leader" if shared.members.len() <= 1 => {
            // A standalone ZooKeeper answers this, with no null "error".
            return json!({ "command": command, "error": "server is not initialized" });
        }
        "leader" => {
            let leader = shared.members.leader();
            let leader_ip = leader
                .and_then(|id| shared.members.addr(id))
                .map_or(String::new(), |a| a.ip().to_string());
            out.insert("is_leader".into(), json!(leader == Some(member)));
            out.insert("leader_id".into(), json!(leader.unwrap_or(0)));
            out.insert("leader_ip".into(), json!(leader_ip));
        }
        "monitor" => monitor(shared, member, &mut out),
        "ruok" => {}
        "server_stats" => server_stats(shared, member, &mut out),
        "stats" => {
            server_stats(shared, member, &mut out);
            let rows = report::connections(shared).into_iter().map(|c| {
                json!({
                    "remote_socket_address": c.peer.to_string(),
                    "outstanding_requests": c.queued,
                    "packets_received": c.received,
                    "packets_sent": c.sent,
                })
            });
            out.insert("connections".into(), rows.collect());
            out.insert("secure_connections".into(), json!([]));
        }
        "voting_view" => {
            out.insert("current_config".into(), json!({}));
        }
        "watch_summary" => {
            let summary = report::watch_summary(shared);
            out.insert("num_connections".into(), json!(summary.connections));
            out.insert("num_paths".into(), json!(summary.paths));
            out.insert("num_total_watches".into(), json!(summary.total));
        }
        "watches" => {
            let by_session: Map<_, _> = report::watches_by_session(shared)
                .into_iter()
                .map(|(id, paths)| (id.to_string(), json!(paths)))
                .collect();
            out.insert("session_id_to_watched_paths".into(), by_session.into());
        }
        "watches_by_path" => {
            let by_path: Map<_, _> = report::watches_by_path(shared)
                .into_iter()
                .map(|(path, ids)| (path, json!(ids)))
                .collect();
            out.insert("path_to_session_ids".into(), by_path.into());
        }
        "zabstate" if shared.members.len() > 1 => {
            let zxid = shared.query(|core| core.last_zxid());
            out.insert("myid".into(), json!(member));
            let leads = shared.members.leader() == Some(member);
            out.insert("is_leader".into(), json!(leads));
            out.insert("voting".into(), json!(true));
            out.insert("last_zxid".into(), json!(format!("0x{zxid:x}")));
            out.insert("zab_epoch".into(), json!(zxid >> 32));
            out.insert("zab_counter".into(), json!(zxid & 0xffff_ffff));
            out.insert("zabstate".into(), json!("broadcast"));
        }
        "zabstate" => {
            out.insert("voting".into(), json!(false));
            out.insert("zabstate".into(), json!(""));
        }
        _ => {}
    }
    out.insert("command".into(), command.into());
    out.insert("error".into(), Value::Null);
    Value::Object(out)
}

fn figure(value: Figure) -> Value {
    match value {
        Figure::Int(n) => n.into(),
        Figure::Float(x) => x.into(),
        Figure::Text(t) => t.into(),
    }
}

fn connection(c: report::ConnectionRow) -> Value {
    let mut row = json!({
        "remote_socket_address": c.peer.to_string(),
        "outstanding_requests": c.queued,
        "packets_received": c.received,
        "packets_sent": c.sent,
    });
    if let (Some((session, timeout)), Value::Object(map)) = (c.session, &mut row) {
        map.insert("session_id".into(), json!(session));
        map.insert("last_operation".into(), json!(c.last_op));
        map.insert("established".into(), json!(c.established_ms));
        map.insert("session_timeout".into(), json!(timeout));
    }
    row
}

fn server_stats(shared: &Shared, member: u64, out: &mut Map<String, Value>) {
    let s = report::server_summary(shared);
    out.insert("version".into(), json!(report::full_version()));
    out.insert("read_only".into(), json!(false));
    out.insert(
        "server_stats".into(),
        json!({
            "packets_sent": s.packets_sent,
            "packets_received": s.packets_received,
            "fsync_threshold_exceed_count": 0,
            "data_dir_size": 0,
            "log_dir_size": 0,
            "provider_null": false,
            "server_state": shared.members.role(member).name(),
            "last_processed_zxid": s.zxid,
            "outstanding_requests": report::outstanding(shared),
            "avg_latency": s.avg_latency,
            "max_latency": s.max_latency,
            "min_latency": s.min_latency,
            "num_alive_client_connections": s.connections,
            "uptime": s.uptime_ms,
        }),
    );
    out.insert("node_count".into(), json!(s.node_count));
}

/// mntr's keys without the `zk_` prefix, summaries spelled out as ZooKeeper's JSON has them.
fn monitor(shared: &Shared, member: u64, out: &mut Map<String, Value>) {
    let monitor = report::monitor(shared, member);
    for (key, _, value) in monitor.figures {
        out.insert(key.into(), figure(value));
    }
    for (name, s) in monitor.triggers {
        out.insert(format!("avg_{name}"), json!(s.avg()));
        out.insert(format!("min_{name}"), json!(s.min));
        out.insert(format!("max_{name}"), json!(s.max));
        out.insert(format!("cnt_{name}"), json!(s.count));
        out.insert(format!("sum_{name}"), json!(s.sum));
    }
    for (name, r) in monitor.latencies {
        out.insert(format!("avg_{name}"), json!(r.avg_ms()));
        out.insert(format!("min_{name}"), json!(r.min_ms));
        out.insert(format!("max_{name}"), json!(r.max_ms));
        out.insert(format!("cnt_{name}"), json!(r.count));
        out.insert(format!("sum_{name}"), json!(r.sum_ms.round() as u64));
        for (label, q) in [("50", 0.5), ("95", 0.95), ("99", 0.99), ("999", 0.999)] {
            out.insert(
                format!("p{label}_{name}"),
                json!(r.quantile_ms(q).round() as u64),
            );
        }
    }
}
