//! The test controls of `Server`, through real sockets: the shepherd-client crate where a
//! client's view matters, a raw peer where exact bytes and ordering do.
//!
//! One module per kind of control: sessions and connections (expire, close, freeze), fault
//! rules, virtual time, and seeding and inspection (counters, zxids, notification accounting).
//!
//! Every wait is bounded and waits on an event (a reply, a status change, a core predicate);
//! the only fixed waits are short ones that check that nothing arrives.

mod faults;
mod inspection;
mod sessions;
mod virtual_time;

use shepherd_server::Server;
use shepherd_testkit::Peer;

/// A server with every four-letter word and TTL nodes (off by default, as on ZooKeeper).
async fn server() -> Server {
    Server::builder()
        .all_four_letter_words()
        .extended_types(true)
        .start()
        .await
        .expect("server starts")
}

/// A session spoken to with hand-built frames: it never pings unless told to.
async fn raw(server: &Server, timeout_ms: i32) -> Peer {
    Peer::session(server.local_addr(), timeout_ms, 0)
        .await
        .expect("a session")
}

fn exists_in(server: &Server, path: &str) -> bool {
    server.controls().dump_tree().iter().any(|n| n.path == path)
}
