//! Our field names against ZooKeeper 3.8's, command by command: the answers of Debian's
//! ZooKeeper 3.8.0 with its AdminServer on, taken in the state [`seeded`](super::seeded)
//! builds, are in `zk38/<command>.json`. Every difference must be one named here (and in
//! docs/operations.md); a field added or lost on either side fails the test.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{command, seeded, server};

/// Fields whose keys are data (session ids, paths, times), not names: compared as values only.
const DATA_KEYED: &[&str] = &[
    "expiry_time_to_session_ids",
    "session_id_to_ephemeral_paths",
    "session_id_to_watched_paths",
    "path_to_session_ids",
    "current_config",
];

/// Every field name of a JSON answer, dotted (`server_stats.uptime`, `connections[].sid`),
/// arrays by their first element.
fn names(value: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let name = format!("{prefix}{key}");
                out.insert(name.clone());
                if !DATA_KEYED.contains(&key.as_str()) {
                    names(inner, &format!("{name}."), out);
                }
            }
        }
        Value::Array(items) => {
            if let Some(first) = items.first() {
                names(first, &format!("{}[].", prefix.trim_end_matches('.')), out);
            }
        }
        _ => {}
    }
}

fn zk38(command: &str) -> Value {
    let path = format!(
        "{}/tests/admin_server/zk38/{command}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// (command, fields only ZooKeeper has, fields only Shepherd has).
const DIFFERENCES: &[(&str, &[&str], &[&str])] = &[
    ("configuration", &[], &[]),
    (
        "connections",
        &[
            "connections[].interest_ops",
            "connections[].last_cxid",
            "connections[].last_zxid",
            "connections[].last_response_time",
            "connections[].last_latency",
            "connections[].min_latency",
            "connections[].avg_latency",
            "connections[].max_latency",
        ],
        &[],
    ),
    ("dirs", &[], &[]),
    ("dump", &[], &[]),
    ("initial_configuration", &[], &[]),
    ("is_read_only", &[], &[]),
    ("last_snapshot", &[], &[]),
    ("leader", &[], &[]),
    ("ruok", &[], &[]),
    ("server_stats", SERVER_STATS_ONLY_ZK, &[]),
    ("voting_view", &[], &[]),
    ("watch_summary", &[], &[]),
    ("watches", &[], &[]),
    ("watches_by_path", &[], &[]),
    ("zabstate", &[], &[]),
];

/// What `server_stats` (and so `stats`) leaves out: response-size, auth-failure and TLS
/// counters Shepherd does not keep.
const SERVER_STATS_ONLY_ZK: &[&str] = &[
    "client_response",
    "client_response.last_buffer_size",
    "client_response.min_buffer_size",
    "client_response.max_buffer_size",
    "server_stats.client_response_stats",
    "server_stats.client_response_stats.last_buffer_size",
    "server_stats.client_response_stats.min_buffer_size",
    "server_stats.client_response_stats.max_buffer_size",
    "server_stats.auth_failed_count",
    "server_stats.non_mtlsremote_conn_count",
    "server_stats.non_mtlslocal_conn_count",
];

fn sorted(names: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    out.sort();
    out
}

fn diff(ours: &Value, theirs: &Value) -> (Vec<String>, Vec<String>) {
    let (mut a, mut b) = (BTreeSet::new(), BTreeSet::new());
    names(ours, "", &mut a);
    names(theirs, "", &mut b);
    (
        b.difference(&a).cloned().collect(),
        a.difference(&b).cloned().collect(),
    )
}

#[tokio::test]
async fn every_command_has_zookeepers_field_names_or_a_named_difference() {
    let server = server().await;
    let _state = seeded(&server).await;
    let addr = server.admin_addr().expect("admin server on");
    for (name, only_zk, only_ours) in DIFFERENCES {
        let (missing, extra) = diff(&command(addr, name).await, &zk38(name));
        assert_eq!(
            missing,
            sorted(only_zk),
            "{name}: fields only ZooKeeper has"
        );
        assert_eq!(extra, sorted(only_ours), "{name}: fields only Shepherd has");
    }
    // stats = server_stats + brief connections.
    let (missing, extra) = diff(&command(addr, "stats").await, &zk38("stats"));
    let mut expected = sorted(SERVER_STATS_ONLY_ZK);
    expected.push("connections[].interest_ops".into());
    expected.sort();
    assert_eq!(missing, expected, "stats: fields only ZooKeeper has");
    assert!(
        extra.is_empty(),
        "stats: fields only Shepherd has: {extra:?}"
    );
    server.shutdown().await;
}

/// monitor and environment: ZooKeeper's are supersets (JVM and pipeline figures); ours must be
/// a subset of its names, plus Shepherd's own `last_zxid`.
#[tokio::test]
async fn monitor_and_environment_use_only_zookeepers_names() {
    let server = server().await;
    let _state = seeded(&server).await;
    let addr = server.admin_addr().expect("admin server on");
    let (_, extra) = diff(&command(addr, "monitor").await, &zk38("monitor"));
    assert_eq!(
        extra,
        ["last_zxid"],
        "monitor: names ZooKeeper does not have"
    );
    let (_, extra) = diff(&command(addr, "environment").await, &zk38("environment"));
    assert!(extra.is_empty(), "environment: {extra:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn unknown_command_answers_zookeepers_error_json() {
    let server = server().await;
    let addr = server.admin_addr().expect("admin server on");
    assert_eq!(command(addr, "nosuch").await, zk38("nosuch"));
    server.shutdown().await;
}
