//! Clients given every member's connect string fail over with their session intact: when the
//! member they are on stops, and when it is partitioned (virtual time, advanced past the
//! client's read timeout, for shepherd-client; see the `zookeeper-client` case for why not
//! there). Their ephemerals survive, as against a real ensemble.

use std::time::Duration;

use shepherd_client::{Client, CreateOptions, SessionState};
use shepherd_server::Server;
use shepherd_testkit::within;
use zookeeper_client as zk;

use crate::{addr_of, ensemble};

const EPHEMERAL: zk::CreateOptions<'static> =
    zk::CreateMode::Ephemeral.with_acls(zk::Acls::anyone_all());

/// A shepherd-client session on `server`'s members, with an ephemeral `/e`; the member it is
/// on.
async fn shepherd_session(server: &Server) -> (Client, u64) {
    let client = within(
        "connect",
        Client::builder()
            .session_timeout(Duration::from_secs(30))
            .connect_timeout(Duration::from_secs(2))
            .connect(&server.connect_string()),
    )
    .await
    .expect("a session");
    client
        .create("/e", b"", &CreateOptions::ephemeral())
        .await
        .unwrap();
    let member = server
        .members()
        .of_session(client.session_id())
        .expect("the session is on a member");
    (client, member)
}

/// Waits until `client` is connected to another member than `from`, and checks that the
/// session and its ephemeral are intact there.
async fn moved_off(server: &Server, client: &Client, from: u64) {
    let old = addr_of(server, from);
    let mut status = client.status_watch();
    let now = within(
        "a reconnect to another member",
        status.wait_for(|s| s.state == SessionState::Connected && s.host.as_deref() != Some(&old)),
    )
    .await
    .expect("the session lives")
    .clone();
    assert_eq!(now.session_id, client.session_id(), "the same session");
    let to = server.members().of_session(client.session_id());
    assert!(
        to.is_some_and(|to| to != from),
        "on member {to:?} now, not {from}"
    );
    assert!(
        client.exists("/e").await.unwrap().is_some(),
        "its ephemeral survives"
    );
}

#[tokio::test]
async fn shepherd_client_fails_over_when_its_member_stops() {
    let server = ensemble(3).await;
    let (client, from) = shepherd_session(&server).await;
    server.members().stop(from).await.unwrap();
    moved_off(&server, &client, from).await;
    client.close().await.unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn shepherd_client_fails_over_when_its_member_is_partitioned() {
    let server = ensemble(3).await;
    let (client, from) = shepherd_session(&server).await;
    server.members().partition(from).unwrap();
    // Past 2/3 of the 30 s timeout: the client hears nothing and moves on, well before the
    // session's own timeout.
    tokio::time::advance(Duration::from_secs(21)).await;
    moved_off(&server, &client, from).await;
    server.members().heal(from).unwrap();
    client.close().await.unwrap();
    server.shutdown().await;
}

/// A `zookeeper-client` session with an ephemeral `/z`; the member it is on.
async fn zk_session(server: &Server) -> (zk::Client, u64) {
    let client = within(
        "connect",
        zk::Client::connector()
            .with_session_timeout(Duration::from_secs(30))
            .connect(&server.connect_string()),
    )
    .await
    .expect("a session");
    client.create("/z", b"", &EPHEMERAL).await.unwrap();
    let member = server
        .members()
        .of_session(client.session_id().0)
        .expect("the session is on a member");
    (client, member)
}

/// Waits for `client` to be connected again (`states` was taken while it was connected, so
/// its first change is the loss), then checks it is on another member with its session and
/// ephemeral.
async fn zk_moved_off(
    server: &Server,
    client: &zk::Client,
    mut states: zk::StateWatcher,
    from: u64,
) {
    loop {
        let state = within("a session state change", states.changed()).await;
        assert!(!state.is_terminated(), "the session ended: {state:?}");
        if state == zk::SessionState::SyncConnected {
            break;
        }
    }
    let id = client.session_id().0;
    let to = server.members().of_session(id);
    assert!(
        to.is_some_and(|to| to != from),
        "on member {to:?} now, not {from}"
    );
    assert!(
        client.check_stat("/z").await.unwrap().is_some(),
        "its ephemeral survives"
    );
}

#[tokio::test]
async fn zookeeper_client_fails_over_when_its_member_stops() {
    let server = ensemble(3).await;
    let (client, from) = zk_session(&server).await;
    let states = client.state_watcher();
    server.members().stop(from).await.unwrap();
    zk_moved_off(&server, &client, states, from).await;
    server.shutdown().await;
}

/// In wall time, not virtual: the `zookeeper-client` crate measures its connection's idle time
/// with `std::time::Instant`, which a paused tokio clock does not move. A short tick keeps it
/// quick: a 4 s session, lost after 2/5 of it without a reply, as the crate does by default.
#[tokio::test]
async fn zookeeper_client_fails_over_when_its_member_is_partitioned() {
    let server = Server::builder()
        .members(3)
        .tick_time(Duration::from_millis(200))
        .start()
        .await
        .unwrap();
    let client = within(
        "connect",
        zk::Client::connector()
            .with_session_timeout(Duration::from_secs(4))
            .connect(&server.connect_string()),
    )
    .await
    .expect("a session");
    client.create("/z", b"", &EPHEMERAL).await.unwrap();
    let from = server.members().of_session(client.session_id().0).unwrap();
    let states = client.state_watcher();
    server.members().partition(from).unwrap();
    zk_moved_off(&server, &client, states, from).await;
    server.members().heal(from).unwrap();
    server.shutdown().await;
}
