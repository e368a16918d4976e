//! The in-process ensemble (docs/ensemble.md): n client endpoints over one state, through real
//! loopback sockets.
//!
//! `members` drives the handle's member controls (stop, start, partition, leadership);
//! `words` reads what each member reports (four-letter words, the AdminServer, and
//! `/zookeeper/config`); `failover` moves real clients (shepherd-client and the
//! `zookeeper-client` crate) between members with their sessions intact.
//!
//! Every wait is bounded and waits on an event (a status change, a server predicate); the
//! partition tests run in virtual time, advanced past the clients' read timeouts.

mod failover;
mod members;
mod words;

use shepherd_server::Server;

/// An ensemble of `n` members that answers every four-letter word.
async fn ensemble(n: usize) -> Server {
    Server::builder()
        .members(n)
        .all_four_letter_words()
        .start()
        .await
        .expect("the ensemble starts")
}

/// A member's client address as a connect string.
fn addr_of(server: &Server, id: u64) -> String {
    server
        .members()
        .addr(id)
        .expect("a member of the ensemble")
        .to_string()
}
