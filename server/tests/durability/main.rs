//! Durability and restarts, through real sockets: `Server::restart` in memory and with a
//! data directory, the durability gate (nothing observable before the disk has it), recovery
//! of the tree, the sessions and the zxid, and the start-up errors of a data directory.
//!
//! Every wait is bounded and waits on an event (a reply, a close, a core predicate); the only
//! fixed waits are short ones that check that nothing arrives while the log is frozen.

mod disk;
mod gate;
mod memory;

use shepherd_protocol::{ConnectRequest, CreateMode, Reply};
use shepherd_server::{Server, ServerBuilder};
use shepherd_testkit::{Peer, create, hello, reply_header};
use tokio::net::TcpStream;

/// A server on a free port with every four-letter word.
fn builder() -> ServerBuilder {
    Server::builder().all_four_letter_words()
}

/// A session of `timeout_ms` that never pings, and its password.
async fn session(server: &Server, timeout_ms: i32) -> (Peer, Vec<u8>) {
    let mut peer = Peer::tcp(server.local_addr()).await;
    let response = peer
        .handshake(&ConnectRequest {
            timeout: timeout_ms,
            ..hello()
        })
        .await
        .expect("a session");
    (peer, response.passwd.unwrap_or_default())
}

/// Reconnects to session `id` with `passwd`, having seen `last_zxid`: the peer, and the
/// timeout the server answered with (0 when it says the session expired).
async fn resume(server: &Server, id: i64, passwd: &[u8], last_zxid: i64) -> (Peer<TcpStream>, i32) {
    let mut peer = Peer::tcp(server.local_addr()).await;
    let response = peer
        .handshake(&ConnectRequest {
            session_id: id,
            passwd: Some(passwd.to_vec()),
            last_zxid_seen: last_zxid,
            timeout: 30_000,
            ..hello()
        })
        .await
        .expect("an answer to the reconnect");
    (peer, response.timeout)
}

/// Creates `path` and returns the zxid of the reply.
async fn create_node(peer: &mut Peer, path: &str, mode: CreateMode) -> i64 {
    let reply = peer.call(&create(path, b"d", mode)).await;
    assert!(matches!(reply, Reply::Ok(..)), "create {path}: {reply:?}");
    reply_header(&reply).zxid
}

fn exists_in(server: &Server, path: &str) -> bool {
    server.controls().dump_tree().iter().any(|n| n.path == path)
}
