//! When the container/TTL reaper runs, end to end through the shell's ticker under tokio's
//! paused clock: a TTL node or an emptied container goes on the reaper's first run after it
//! became deletable, as on ZooKeeper 3.8, not when the ticker next happens to wake for
//! something else (a session's expiry, tens of seconds later).
//!
//! The client is a raw wire peer over an in-memory pipe, so the only timers are the server's
//! and the test's own bounded waits; with the clock paused, tokio jumps it to the earliest
//! timer whenever every task is idle, which makes each run's virtual time exact.

use std::time::Duration;

use shepherd_protocol::{
    Acl, ConnectRequest, CreateMode, CreateRequest, CreateTTLRequest, DeleteRequest, EventType,
    Reply, Request,
};
use shepherd_server::Server;
use shepherd_testkit::{Peer, create, exists, hello};
use tokio::time::Instant;

/// The reaper's interval (`znode.container.checkIntervalMs`, as `.ci/real-zk.sh` sets it).
const INTERVAL: Duration = Duration::from_millis(1000);

/// The next frame, which must be this node's NodeDeleted event.
async fn node_deleted(peer: &mut Peer<tokio::io::DuplexStream>, path: &str) {
    match peer.next().await {
        Some(Reply::Event(_, e)) => {
            assert_eq!(
                (e.event_type, e.path.as_str()),
                (EventType::NodeDeleted, path)
            );
        }
        other => panic!("expected NodeDeleted for {path}, got {other:?}"),
    }
}

/// A 1.5 s TTL node created just after the server starts goes at the second run (2 s), an
/// emptied container at the run after its last child went; before the ticker read the
/// reaper's schedule after requests, both waited for the session's deadline (~40 s).
#[tokio::test(start_paused = true)]
async fn ttl_nodes_and_containers_go_on_the_reapers_next_run() {
    let server = Server::builder()
        .container_check_interval(INTERVAL)
        .extended_types(true)
        .start()
        .await
        .expect("server starts");
    let started = Instant::now();
    let (client, served) = tokio::io::duplex(64 * 1024);
    server.serve_io(served);
    let mut peer = Peer::new(client);
    // The longest session the default bounds allow: its expiry is far beyond every run here.
    let request = ConnectRequest {
        timeout: 40_000,
        ..hello()
    };
    peer.handshake(&request).await.expect("a session");

    peer.call(&Request::CreateTTL(CreateTTLRequest {
        path: "/ttl".into(),
        data: None,
        acl: Acl::open_unsafe(),
        flags: CreateMode::PersistentWithTTL.into(),
        ttl: 1500,
    }))
    .await;
    peer.call(&exists("/ttl", true)).await;
    node_deleted(&mut peer, "/ttl").await;
    // Runs at 1 s (alive for 1 s, under its TTL) and 2 s (past it): gone at the second.
    assert_eq!(started.elapsed(), 2 * INTERVAL, "deleted at the run at 2 s");

    peer.call(&Request::CreateContainer(CreateRequest {
        path: "/box".into(),
        data: None,
        acl: Acl::open_unsafe(),
        flags: CreateMode::Container.into(),
    }))
    .await;
    peer.call(&create("/box/x", b"", CreateMode::Persistent))
        .await;
    peer.call(&Request::Delete(DeleteRequest {
        path: "/box/x".into(),
        version: -1,
    }))
    .await;
    peer.call(&exists("/box", true)).await;
    node_deleted(&mut peer, "/box").await;
    assert_eq!(started.elapsed(), 3 * INTERVAL, "deleted at the run at 3 s");
}
