//! Hostile clients, one attack per file, against an embedded server: over real sockets, or over
//! in-memory pipes of a chosen size where a peer must stop reading exactly (`pipe.rs`). Each test
//! asserts that the attacker is closed or limited **and** that another session's requests still
//! succeed meanwhile.
//!
//! Every wait is bounded and waits on an event (a reply, a close, an answer to a word); none
//! sleeps for a condition. How long an attack holds the core lock is measured, not asserted
//! here.

mod auth_flood;
mod forged_session;
mod huge_acl;
mod loris;
mod mntr_poll;
mod pipe;
mod setwatches_flood;
mod slow_reader;
mod stuck_expiry;

use shepherd_protocol::{Reply, Request};
use shepherd_server::Server;
use shepherd_testkit::{Peer, create, get_data, reply_header};
// Every four-letter word on, the builder's defaults otherwise.
use shepherd_testkit::all_words_server as server;

/// A session over TCP, spoken to with hand-built frames.
async fn session(server: &Server) -> Peer {
    Peer::session(server.local_addr(), 30_000, 0)
        .await
        .expect("a session")
}

/// The error code of a reply (0 for success).
fn err(reply: &Reply) -> i32 {
    reply_header(reply).err
}

/// A bystander's round trip: a create and a read of it both succeed.
async fn bystander_is_served(peer: &mut Peer, path: &str) {
    let created = peer
        .call(&create(
            path,
            b"ok",
            shepherd_protocol::CreateMode::Persistent,
        ))
        .await;
    assert_eq!(err(&created), 0, "the bystander's create of {path}");
    let read = peer.call(&get_data(path)).await;
    assert_eq!(err(&read), 0, "the bystander's read of {path}");
}

/// Sends `request` without waiting; for pipelined floods.
async fn send(peer: &mut Peer, request: &Request) {
    peer.send(request).await;
}
