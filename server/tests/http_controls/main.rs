//! The test controls over HTTP (docs/test-controls.md), through real loopback sockets and
//! hyper's client: the token rule, the loopback rule, every endpoint against what a client
//! sees (ensemble members included), and bodies of every wrong shape answered 400 with nothing
//! applied.
//!
//! Every wait is bounded and waits on an event (a reply, a status change).

mod bodies;
mod http;
mod in_process;
mod inspection;
mod members;
mod sessions;
mod token;
mod zookeeper_commands;

use serde_json::Value;
use shepherd_server::Server;

use crate::http::Got;

/// A server with its test controls on a free loopback port.
async fn server() -> Server {
    Server::builder()
        .test_controls(([127, 0, 0, 1], 0).into())
        .start()
        .await
        .expect("server starts")
}

/// Calls the test controls of `server` with its token.
async fn call(server: &Server, method: &str, path: &str, body: &str) -> Got {
    let addr = server.controls().http_addr().expect("test controls on");
    let token = server.controls().http_token().expect("a token");
    let auth = format!("Bearer {token}");
    http::call(addr, method, path, Some(&auth), body.as_bytes()).await
}

/// Calls and expects `status`, returning the JSON answer.
async fn expect(server: &Server, method: &str, path: &str, body: &str, status: u16) -> Value {
    let got = call(server, method, path, body).await;
    assert_eq!(got.status, status, "{method} {path} {body}: {}", got.body);
    got.json()
}

/// A session id as the controls write it.
fn hex(id: i64) -> String {
    format!("0x{:x}", id as u64)
}
