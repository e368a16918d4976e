//! The AdminServer (`/commands`) and the HTTP server behind it, through real loopback sockets:
//! each command's fields against ZooKeeper 3.8's (the answers of Debian's 3.8.0 with its
//! AdminServer on, kept in `zk38/`), the values following the server's state, ZooKeeper's
//! error JSON, and the listener's life (off by default, shared with `/metrics`, stopped by
//! shutdown).

mod durable_windows;
mod fields;
mod http;
mod lifecycle;
mod values;

use std::net::SocketAddr;

use serde_json::Value;
use shepherd_client::{Client, CreateOptions, OneshotWatcher};
use shepherd_server::Server;

/// Port 0 on loopback.
fn any_port() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// A server with its AdminServer on a free port.
async fn server() -> Server {
    Server::builder()
        .admin_server(any_port())
        .start()
        .await
        .expect("server starts")
}

/// The state the `zk38/` answers were taken in: one session with an ephemeral under `/p1`
/// and data, child and exists watches on two paths. The watchers must stay alive.
async fn seeded(server: &Server) -> (Client, Vec<OneshotWatcher>) {
    let client = Client::connect(&server.connect_string())
        .await
        .expect("client connects");
    client
        .create("/p1", b"hello", &CreateOptions::persistent())
        .await
        .expect("create /p1");
    client
        .create("/p1/eph", b"x", &CreateOptions::ephemeral())
        .await
        .expect("create /p1/eph");
    let (_, _, data) = client.get_data_w("/p1").await.expect("getData watch");
    let (_, exists) = client.exists_w("/p1/none").await.expect("exists watch");
    (client, vec![data, exists])
}

/// GETs `/commands/<name>` and parses its JSON.
async fn command(addr: SocketAddr, name: &str) -> Value {
    let got = http::get(addr, &format!("/commands/{name}")).await;
    assert_eq!(got.status, 200, "{name}: {}", got.body);
    assert_eq!(got.content_type, "application/json", "{name}");
    serde_json::from_str(&got.body).unwrap_or_else(|e| panic!("{name}: {e}: {}", got.body))
}
