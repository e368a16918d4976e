//! The values behind the names: each command reports the server's state as it is, through
//! every alias ZooKeeper accepts.

use serde_json::{Value, json};

use super::http::get;
use super::{command, seeded, server};

#[tokio::test]
async fn commands_report_the_seeded_state() {
    let server = server().await;
    let (client, _watchers) = seeded(&server).await;
    let addr = server.admin_addr().expect("admin server on");
    let session = client.session_id();

    let wchs = command(addr, "wchs").await;
    assert_eq!(wchs["command"], "watch_summary");
    assert_eq!(wchs["num_connections"], 1);
    assert_eq!(wchs["num_paths"], 2);
    assert_eq!(wchs["num_total_watches"], 2);

    let wchc = command(addr, "watches").await;
    // ZooKeeper lists a session's paths in hash order; Shepherd in its own: compare sorted.
    let mut paths: Vec<String> =
        serde_json::from_value(wchc["session_id_to_watched_paths"][session.to_string()].clone())
            .unwrap();
    paths.sort();
    assert_eq!(paths, ["/p1", "/p1/none"]);
    assert_eq!(
        wchc["session_id_to_watched_paths"]
            .as_object()
            .map(|o| o.len()),
        Some(1)
    );
    let wchp = command(addr, "wchp").await;
    assert_eq!(wchp["path_to_session_ids"]["/p1"], json!([session]));

    let dump = command(addr, "dump").await;
    assert_eq!(
        dump["session_id_to_ephemeral_paths"],
        json!({ session.to_string(): ["/p1/eph"] })
    );

    let cons = command(addr, "cons").await;
    let conn = &cons["connections"][0];
    assert_eq!(conn["session_id"], session);
    assert_eq!(conn["last_operation"], "EXIS");
    assert_eq!(cons["secure_connections"], json!([]));

    let srvr = command(addr, "srvr").await;
    assert_eq!(srvr["command"], "server_stats");
    assert_eq!(srvr["error"], Value::Null);
    // /, /zookeeper, /zookeeper/config, /zookeeper/quota, /p1, /p1/eph, and the "" alias.
    assert_eq!(srvr["node_count"], 7);
    assert_eq!(srvr["server_stats"]["num_alive_client_connections"], 1);
    assert_eq!(srvr["server_stats"]["server_state"], "standalone");

    let mntr = command(addr, "mntr").await;
    assert_eq!(mntr["command"], "monitor");
    assert_eq!(mntr["ephemerals_count"], 1);
    assert_eq!(mntr["watch_count"], 2);
    // create, create: two transactions; getData, exists: two reads (pings may add more).
    assert_eq!(
        mntr["cnt_updatelatency"], 2,
        "two creates; the handshake is not counted"
    );
    assert!(mntr["cnt_readlatency"].as_u64() >= Some(2), "{mntr}");

    assert_eq!(command(addr, "ruok").await["error"], Value::Null);
    assert_eq!(command(addr, "isro").await["read_only"], false);
    assert_eq!(command(addr, "lsnp").await["zxid"], "ffffffffffffffff");
    assert_eq!(command(addr, "conf").await["command"], "configuration");
    assert_eq!(command(addr, "envi").await["command"], "environment");
    assert_eq!(
        command(addr, "lead").await["error"],
        "server is not initialized"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn the_command_list_links_every_primary_name() {
    let server = server().await;
    let addr = server.admin_addr().expect("admin server on");
    let list = get(addr, "/commands").await;
    assert_eq!(list.status, 200);
    for name in [
        "configuration",
        "connections",
        "dirs",
        "dump",
        "environment",
        "initial_configuration",
        "is_read_only",
        "last_snapshot",
        "leader",
        "monitor",
        "ruok",
        "server_stats",
        "stats",
        "voting_view",
        "watch_summary",
        "watches",
        "watches_by_path",
        "zabstate",
    ] {
        let link = format!("<a href=\"/commands/{name}\">{name}</a>");
        assert!(
            list.body.contains(&link),
            "{name} missing from {}",
            list.body
        );
    }
    server.shutdown().await;
}

#[tokio::test]
async fn initial_configuration_is_the_zoo_cfg_text() {
    let mut config = shepherd_server::Config::default();
    config.apply_zoo_cfg("tickTime=500\n").expect("zoo.cfg");
    let server = shepherd_server::Server::builder()
        .config(config)
        .admin_server(super::any_port())
        .start()
        .await
        .expect("server starts");
    let addr = server.admin_addr().expect("admin server on");
    let icfg = command(addr, "icfg").await;
    assert_eq!(icfg["initial_configuration"], "tickTime=500\n");
    assert_eq!(command(addr, "conf").await["tick_time"], 500);
    server.shutdown().await;
}

/// A durable server reports its data directory and its newest snapshot, where it used to call
/// itself in memory (`/dev/null/in-memory`, no snapshot).
#[tokio::test]
async fn a_durable_server_reports_its_data_directory_and_last_snapshot() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let server = shepherd_server::Server::builder()
        .data_dir(dir.path())
        .admin_server(super::any_port())
        .start()
        .await
        .expect("server starts");
    let addr = server.admin_addr().expect("admin server on");
    let conf = command(addr, "conf").await;
    let version_2 = dir.path().join("version-2").display().to_string();
    assert_eq!(conf["data_dir"], version_2.as_str(), "{conf}");
    assert_eq!(conf["data_log_dir"], version_2.as_str(), "{conf}");
    // The clean snapshot taken at start, at the server's first zxid.
    let snapshot = command(addr, "last_snapshot").await;
    let zxid = snapshot["zxid"].as_str().unwrap_or_default();
    assert!(
        i64::from_str_radix(zxid, 16).is_ok_and(|z| z >= 0),
        "{snapshot}"
    );
    assert!(
        snapshot["timestamp"].as_i64().is_some_and(|t| t > 0),
        "{snapshot}"
    );
    server.shutdown().await;
    let memory = super::server().await;
    let addr = memory.admin_addr().expect("admin server on");
    assert_eq!(
        command(addr, "last_snapshot").await["zxid"],
        "ffffffffffffffff"
    );
    memory.shutdown().await;
}
