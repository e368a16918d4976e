//! Seeding and inspection: the sequence counter, initial and last zxids, and notification
//! accounting in the server's counters and `mntr`.

use std::collections::HashMap;

use shepherd_client::CreateOptions;
use shepherd_protocol::{CreateMode, FourLetterWord};
use shepherd_server::{ControlError, Server};
use shepherd_testkit::{Peer, connect, create, reply_header, within};

use crate::server;

#[tokio::test]
async fn the_sequence_counter_wraps_past_i32_max() {
    let server = server().await;
    let c = connect(&server.connect_string()).await;
    c.create("/seq", b"", &CreateOptions::persistent())
        .await
        .unwrap();
    server
        .controls()
        .set_sequence_counter("/seq", i32::MAX)
        .unwrap();
    let sequential = CreateOptions::new(CreateMode::PersistentSequential);
    let (a, _) = c.create("/seq/n-", b"", &sequential).await.unwrap();
    let (b, _) = c.create("/seq/n-", b"", &sequential).await.unwrap();
    assert_eq!(a, "/seq/n-2147483647");
    assert_eq!(b, "/seq/n--2147483648");
    assert_eq!(
        server.controls().set_sequence_counter("/nope", 1),
        Err(ControlError::NoNode("/nope".into()))
    );
}

#[tokio::test]
async fn initial_zxid_and_set_last_zxid_govern_which_clients_may_connect() {
    let server = Server::builder().initial_zxid(1_000).start().await.unwrap();
    // A fresh session takes a zxid.
    assert!(
        Peer::session(server.local_addr(), 30_000, 900)
            .await
            .is_some()
    );
    assert_eq!(server.controls().last_zxid(), 1_001);
    assert!(
        Peer::session(server.local_addr(), 30_000, 2_000)
            .await
            .is_none()
    );
    server.controls().set_last_zxid(5_000);
    let mut raw = Peer::session(server.local_addr(), 30_000, 2_000)
        .await
        .unwrap();
    let reply = raw.call(&create("/z", b"d", CreateMode::Persistent)).await;
    assert_eq!(reply_header(&reply).zxid, 5_002);
    let node = server
        .controls()
        .dump_tree()
        .into_iter()
        .find(|n| n.path == "/z")
        .unwrap();
    assert_eq!((node.stat.czxid, node.data_len), (5_002, 1));
}

// ---- Notification accounting ----

fn mntr(server: &Server) -> HashMap<String, String> {
    server
        .controls()
        .four_letter_word(FourLetterWord::Mntr)
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[tokio::test]
async fn notification_counts_and_mntr_watch_summaries() {
    let server = server().await;
    let a = connect(&server.connect_string()).await;
    let b = connect(&server.connect_string()).await;
    a.create("/n", b"", &CreateOptions::persistent())
        .await
        .unwrap();
    let (_, _, wa) = a.get_data_w("/n").await.unwrap();
    let (_, _, wb) = b.get_data_w("/n").await.unwrap();
    a.set_data("/n", b"1", None).await.unwrap();
    within("a's event", wa).await.unwrap();
    within("b's event", wb).await.unwrap();
    let (_, wc) = b.exists_w("/n/c").await.unwrap();
    let _children = b.get_children_w("/n").await.unwrap();
    a.create("/n/c", b"", &CreateOptions::persistent())
        .await
        .unwrap();
    within("b's NodeCreated", wc).await.unwrap();

    let counts = server.controls().notification_counts();
    assert_eq!(counts.node_data_changed, 2);
    assert_eq!(counts.node_created, 1);
    assert_eq!(counts.node_children_changed, 1);
    assert_eq!(counts.total(), 4);
    assert_eq!(counts.session(a.session_id()), 1);
    assert_eq!(counts.session(b.session_id()), 3);

    let m = mntr(&server);
    let get = |k: &str| m.get(k).unwrap_or_else(|| panic!("{k} missing")).as_str();
    // One setData trigger matched two watchers.
    assert_eq!(get("zk_cnt_node_changed_watch_count"), "1");
    assert_eq!(get("zk_sum_node_changed_watch_count"), "2");
    assert_eq!(get("zk_avg_node_changed_watch_count"), "2.0");
    assert_eq!(get("zk_min_node_changed_watch_count"), "2");
    assert_eq!(get("zk_max_node_changed_watch_count"), "2");
    assert_eq!(get("zk_cnt_node_created_watch_count"), "1");
    assert_eq!(get("zk_cnt_node_children_watch_count"), "1");
    assert_eq!(get("zk_cnt_node_deleted_watch_count"), "0");
    assert_eq!(get("zk_avg_node_deleted_watch_count"), "0.0");
    for key in [
        "zk_version",
        "zk_server_state",
        "zk_avg_latency",
        "zk_max_latency",
        "zk_min_latency",
        "zk_packets_received",
        "zk_packets_sent",
        "zk_num_alive_connections",
        "zk_outstanding_requests",
        "zk_znode_count",
        "zk_watch_count",
        "zk_ephemerals_count",
        "zk_approximate_data_size",
        "zk_uptime",
        "zk_global_sessions",
        "zk_local_sessions",
        "zk_watch_bytes",
    ] {
        assert!(m.contains_key(key), "{key} missing");
    }
    if cfg!(target_os = "linux") {
        assert!(get("zk_open_file_descriptor_count").parse::<u64>().unwrap() > 0);
        assert!(get("zk_max_file_descriptor_count").parse::<u64>().unwrap() > 0);
    }
    assert_eq!(get("zk_global_sessions"), "2");
}
