//! Prometheus `/metrics`: ZooKeeper 3.8's metric names and types (its
//! `PrometheusMetricsProvider` over `ServerMetrics` and the gauges `ZooKeeperServer`
//! registers), and values that move with the traffic.

#[path = "admin_server/http.rs"]
mod http;

use std::collections::BTreeMap;
use std::net::SocketAddr;

use shepherd_client::{Client, CreateOptions};
use shepherd_server::Server;

/// ZooKeeper 3.8's name and type for each metric Shepherd serves.
const ZOOKEEPER_METRICS: &[(&str, &str)] = &[
    ("approximate_data_size", "gauge"),
    ("avg_latency", "gauge"),
    ("ephemerals_count", "gauge"),
    ("global_sessions", "gauge"),
    ("local_sessions", "gauge"),
    ("max_latency", "gauge"),
    ("min_latency", "gauge"),
    ("node_changed_watch_count", "summary"),
    ("node_children_watch_count", "summary"),
    ("node_created_watch_count", "summary"),
    ("node_deleted_watch_count", "summary"),
    ("num_alive_connections", "gauge"),
    ("outstanding_requests", "gauge"),
    ("packets_received", "gauge"),
    ("packets_sent", "gauge"),
    ("readlatency", "summary"),
    ("updatelatency", "summary"),
    ("uptime", "gauge"),
    ("watch_bytes", "counter"),
    ("watch_count", "gauge"),
    ("znode_count", "gauge"),
];

async fn server() -> Server {
    Server::builder()
        .metrics_server(SocketAddr::from(([127, 0, 0, 1], 0)))
        .start()
        .await
        .expect("server starts")
}

/// `# TYPE` lines, by metric name.
fn types(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|line| line.strip_prefix("# TYPE "))
        .filter_map(|rest| rest.split_once(' '))
        .map(|(name, kind)| (name.to_string(), kind.to_string()))
        .collect()
}

/// The value of the sample named exactly `sample` (labels included, if any).
fn sample(text: &str, sample: &str) -> f64 {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| line.strip_prefix(sample)?.strip_prefix(' '))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("no sample {sample} in\n{text}"))
}

#[tokio::test]
async fn names_and_types_are_zookeepers() {
    let server = server().await;
    let got = http::get(server.metrics_addr().expect("metrics on"), "/metrics").await;
    assert_eq!(got.status, 200);
    assert_eq!(got.content_type, "text/plain; version=0.0.4; charset=utf-8");
    let mut served = types(&got.body);
    // Counted only where the OS tells (Linux), as ZooKeeper does only on Unix.
    for fd in ["open_file_descriptor_count", "max_file_descriptor_count"] {
        if let Some(kind) = served.remove(fd) {
            assert_eq!(kind, "gauge", "{fd}");
        }
    }
    let expected: BTreeMap<String, String> = ZOOKEEPER_METRICS
        .iter()
        .map(|(name, kind)| (name.to_string(), kind.to_string()))
        .collect();
    assert_eq!(served, expected);
    // ADVANCED summaries carry ZooKeeper's three quantiles.
    for q in ["0.5", "0.9", "0.99"] {
        sample(&got.body, &format!("readlatency{{quantile=\"{q}\"}}"));
    }
    server.shutdown().await;
}

#[tokio::test]
async fn values_move_with_requests() {
    let server = server().await;
    let addr = server.metrics_addr().expect("metrics on");
    let before = http::get(addr, "/metrics").await.body;
    assert_eq!(sample(&before, "updatelatency_count"), 0.0);
    assert_eq!(sample(&before, "num_alive_connections"), 0.0);

    let client = Client::connect(&server.connect_string())
        .await
        .expect("client connects");
    client
        .create("/m", b"data", &CreateOptions::persistent())
        .await
        .expect("create");
    let (_, _, watcher) = client.get_data_w("/m").await.expect("getData watch");
    client.set_data("/m", b"more", None).await.expect("setData");
    tokio::time::timeout(std::time::Duration::from_secs(10), watcher)
        .await
        .expect("the watch fires within 10 s")
        .expect("the watch fires");

    let after = http::get(addr, "/metrics").await.body;
    assert_eq!(
        sample(&after, "updatelatency_count"),
        2.0,
        "create, setData"
    );
    assert!(sample(&after, "readlatency_count") >= 1.0, "getData");
    assert_eq!(sample(&after, "num_alive_connections"), 1.0);
    assert_eq!(sample(&after, "global_sessions"), 1.0);
    assert_eq!(
        sample(&after, "znode_count") - sample(&before, "znode_count"),
        1.0
    );
    assert_eq!(sample(&after, "node_changed_watch_count_count"), 1.0);
    assert_eq!(sample(&after, "node_changed_watch_count_sum"), 1.0);
    assert!(sample(&after, "watch_bytes") > 0.0);
    assert!(sample(&after, "packets_received") > sample(&before, "packets_received"));
    server.shutdown().await;
}
