//! In memory: a restart keeps the tree and the sessions, and a fresh server's zxids start from
//! the clock's epoch.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use shepherd_protocol::CreateMode;
use shepherd_testkit::within;

use crate::{builder, create_node, exists_in, resume, session};

/// A fresh server's first zxid carries the wall clock's seconds in its epoch (high 32 bits),
/// so it is above anything an earlier run handed out.
#[tokio::test]
async fn a_fresh_servers_zxid_epoch_is_the_clock() {
    let before = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let server = builder().start().await.unwrap();
    let after = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let epoch = server.controls().last_zxid() >> 32;
    assert!((before..=after).contains(&epoch), "epoch {epoch}");
    assert_eq!(
        server.controls().last_zxid() & 0xffff_ffff,
        0,
        "the counter starts at 0"
    );
    let (mut peer, _) = session(&server, 10_000).await;
    let zxid = create_node(&mut peer, "/n", CreateMode::Persistent).await;
    assert!(zxid >> 32 == epoch && zxid > epoch << 32, "{zxid:x}");
    server.shutdown().await;
    // An explicit initial zxid wins.
    let server = builder().initial_zxid(7).start().await.unwrap();
    assert_eq!(server.controls().last_zxid(), 7);
    server.shutdown().await;
}

/// A restart drops every connection and keeps the tree and the sessions: the client resumes
/// with its id and password on the same port, its ephemeral still there, and zxids go on.
#[tokio::test]
async fn an_in_memory_restart_keeps_the_tree_and_the_sessions() {
    let server = builder().start().await.unwrap();
    let addr = server.local_addr();
    let (mut peer, passwd) = session(&server, 10_000).await;
    let id = peer.session_id();
    create_node(&mut peer, "/kept", CreateMode::Persistent).await;
    let last = create_node(&mut peer, "/mine", CreateMode::Ephemeral).await;

    within("the restart", server.restart()).await.unwrap();
    assert!(peer.closed().await, "the old connection is dropped");
    assert_eq!(server.local_addr(), addr, "the same port");
    assert!(exists_in(&server, "/kept") && exists_in(&server, "/mine"));

    let (mut resumed, timeout) = resume(&server, id, &passwd, last).await;
    assert!(timeout > 0, "the session is resumed, not expired");
    let next = create_node(&mut resumed, "/after", CreateMode::Persistent).await;
    assert_eq!(next, last + 1, "zxids go on");
    let owned = server
        .controls()
        .session(id)
        .expect("the session lives")
        .ephemerals;
    assert_eq!(owned, ["/mine"]);
    server.shutdown().await;
}

/// After a restart a session's timeout counts from the restart: one whose client never comes
/// back expires a full timeout later, and its ephemeral goes with it.
#[tokio::test(start_paused = true)]
async fn a_session_not_resumed_expires_a_timeout_after_the_restart() {
    let server = builder().start().await.unwrap();
    let (mut peer, _) = session(&server, 10_000).await;
    let id = peer.session_id();
    create_node(&mut peer, "/gone", CreateMode::Ephemeral).await;
    // Most of the timeout passes before the restart, which gives the session a full one again.
    tokio::time::advance(Duration::from_secs(8)).await;
    within("the restart", server.restart()).await.unwrap();
    tokio::time::advance(Duration::from_secs(8)).await;
    assert!(
        server.controls().session(id).is_some(),
        "alive 16 s after its last contact"
    );
    tokio::time::advance(Duration::from_secs(5)).await;
    within(
        "the expiry",
        server.wait_for(|core| core.session_timeout(id).is_none()),
    )
    .await;
    assert!(!exists_in(&server, "/gone"));
    server.shutdown().await;
}
