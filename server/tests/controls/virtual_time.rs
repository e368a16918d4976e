//! Virtual time: with a paused tokio clock, session timeouts and the reaper run when time is
//! advanced, in no wall time.

use std::time::Duration;

use shepherd_protocol::{
    Acl, CreateMode, CreateRequest, CreateTTLRequest, DeleteRequest, EventType, Reply, Request,
};
use shepherd_testkit::{create, exists, within};

use crate::{exists_in, raw, server};

/// A 30-second session that never pings expires when virtual time passes its timeout; the
/// test waits on events (the watcher's NodeDeleted, the core's session table), never on wall
/// time.
#[tokio::test(start_paused = true)]
async fn virtual_time_expires_a_silent_session_in_no_wall_time() {
    let server = server().await;
    let mut silent = raw(&server, 30_000).await;
    silent
        .call(&create("/eph", b"d", CreateMode::Ephemeral))
        .await;
    // The watcher's 40 s timeout outlives the advance below.
    let mut watcher = raw(&server, 40_000).await;
    watcher.call(&exists("/eph", true)).await;

    let wall = std::time::Instant::now();
    tokio::time::advance(Duration::from_secs(33)).await;
    let id = silent.session_id();
    within(
        "the expiry",
        server.wait_for(|core| core.session_timeout(id).is_none()),
    )
    .await;
    match watcher.next().await.unwrap() {
        Reply::Event(_, e) => assert_eq!(
            (e.event_type, e.path.as_str()),
            (EventType::NodeDeleted, "/eph")
        ),
        other => panic!("{other:?}"),
    }
    // No wall-clock bound: that the 30 s session expired at all under `advance` is the proof,
    // since the test's clock is paused and only `advance` moves it.
    println!(
        "virtual-time expiry of a 30 s session took {:?} of wall time",
        wall.elapsed()
    );
    assert!(!exists_in(&server, "/eph"));
    assert!(server.controls().session(watcher.session_id()).is_some());
    // Closed without a reply.
    assert!(silent.next().await.is_none());
}

/// A freeze is a partition: nothing touches the session, so it expires on its own timeout; the
/// close reaches the client only when the partition heals.
#[tokio::test(start_paused = true)]
async fn a_frozen_session_expires_on_its_timeout_and_learns_it_at_the_thaw() {
    let server = server().await;
    let mut frozen = raw(&server, 30_000).await;
    frozen
        .call(&create("/p", b"d", CreateMode::Ephemeral))
        .await;
    server
        .controls()
        .freeze_session(frozen.session_id())
        .unwrap();
    // Its pings go unread.
    frozen.send(&Request::Ping).await;
    tokio::time::advance(Duration::from_secs(33)).await;
    let id = frozen.session_id();
    within(
        "the expiry",
        server.wait_for(|core| core.session_timeout(id).is_none()),
    )
    .await;
    assert!(!exists_in(&server, "/p"));
    assert!(server.controls().thaw_session(id));
    assert!(frozen.next().await.is_none(), "closed, no reply");
}

/// TTL nodes and emptied containers are reaped when virtual time reaches the reaper's interval.
#[tokio::test(start_paused = true)]
async fn virtual_time_reaps_ttl_nodes_and_containers() {
    let server = server().await;
    let mut raw = raw(&server, 30_000).await;
    raw.call(&Request::CreateTTL(CreateTTLRequest {
        path: "/ttl".into(),
        data: None,
        acl: Acl::open_unsafe(),
        flags: CreateMode::PersistentWithTTL.into(),
        ttl: 5_000,
    }))
    .await;
    raw.call(&Request::CreateContainer(CreateRequest {
        path: "/box".into(),
        data: None,
        acl: Acl::open_unsafe(),
        flags: CreateMode::Container.into(),
    }))
    .await;
    raw.call(&create("/box/x", b"d", CreateMode::Persistent))
        .await;
    raw.call(&Request::Delete(DeleteRequest {
        path: "/box/x".into(),
        version: -1,
    }))
    .await;
    assert!(exists_in(&server, "/ttl") && exists_in(&server, "/box"));
    // The reaper runs every 60 s by default.
    tokio::time::advance(Duration::from_secs(61)).await;
    within("the reaper", async {
        server
            .wait_for(|core| {
                let tree = core.dump_tree();
                !tree.iter().any(|n| n.path == "/ttl" || n.path == "/box")
            })
            .await
    })
    .await;
}
