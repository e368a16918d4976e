//! The HTTP listener's life: off unless asked for, one listener when the AdminServer and
//! `/metrics` share an address, unknown paths and methods refused, a silent peer stalling
//! nobody, and nothing served after shutdown.

use std::net::SocketAddr;

use shepherd_server::Server;
use tokio::io::AsyncWriteExt;

use super::any_port;
use super::http::get;

#[tokio::test]
async fn both_are_off_by_default() {
    let server = Server::builder().start().await.expect("server starts");
    assert_eq!(server.admin_addr(), None);
    assert_eq!(server.metrics_addr(), None);
    server.shutdown().await;
}

#[tokio::test]
async fn one_listener_serves_both_on_the_same_address() {
    // Take a free port, release it, and ask for both endpoints on it.
    let probe = std::net::TcpListener::bind(any_port()).expect("probe");
    let addr: SocketAddr = probe.local_addr().expect("addr");
    drop(probe);
    let server = Server::builder()
        .admin_server(addr)
        .metrics_server(addr)
        .start()
        .await
        .expect("server starts");
    assert_eq!(server.admin_addr(), Some(addr));
    assert_eq!(server.metrics_addr(), Some(addr));
    assert_eq!(get(addr, "/commands/ruok").await.status, 200);
    assert_eq!(get(addr, "/metrics").await.status, 200);
    server.shutdown().await;
}

#[tokio::test]
async fn each_listener_serves_only_its_own_endpoint() {
    let server = Server::builder()
        .admin_server(any_port())
        .metrics_server(any_port())
        .start()
        .await
        .expect("server starts");
    let (admin, metrics) = (server.admin_addr().unwrap(), server.metrics_addr().unwrap());
    assert_ne!(admin, metrics);
    assert_eq!(get(admin, "/metrics").await.status, 404);
    assert_eq!(get(metrics, "/commands/ruok").await.status, 404);
    assert_eq!(get(admin, "/nowhere").await.status, 404);
    server.shutdown().await;
}

#[tokio::test]
async fn a_silent_peer_does_not_stall_other_requests() {
    let server = super::server().await;
    let addr = server.admin_addr().expect("admin server on");
    // Half a request head, never finished.
    let mut silent = tokio::net::TcpStream::connect(addr).await.expect("connect");
    silent.write_all(b"GET /commands/ru").await.expect("write");
    assert_eq!(get(addr, "/commands/ruok").await.status, 200);
    server.shutdown().await;
    drop(silent);
}

#[tokio::test]
async fn nothing_is_served_after_shutdown() {
    let server = super::server().await;
    let addr = server.admin_addr().expect("admin server on");
    server.shutdown().await;
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "the listener is closed"
    );
}
