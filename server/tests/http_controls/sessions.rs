//! Sessions and connections over HTTP: listing, expiring, closing and freezing, each checked
//! against what a client sees; ids in hex and in decimal; unknown sessions are 404s.

use std::time::Duration;

use shepherd_client::{CreateOptions, Error, SessionState};
use shepherd_protocol::EventType;
use shepherd_testkit::{connect, wait_state, within};

use crate::{expect, hex, server};

#[tokio::test]
async fn sessions_are_listed_with_hex_ids_and_found_by_hex_or_decimal() {
    let server = server().await;
    let client = connect(&server.connect_string()).await;
    client
        .create("/eph", b"", &CreateOptions::ephemeral())
        .await
        .expect("create");
    let (_, _watch) = client.exists_w("/other").await.expect("exists");
    let id = client.session_id();

    let listed = expect(&server, "GET", "/sessions", "", 200).await;
    let sessions = listed["sessions"].as_array().expect("a list");
    assert_eq!(sessions.len(), 1);
    let session = &sessions[0];
    assert_eq!(session["id"], hex(id));
    assert_eq!(session["connected"], true);
    assert_eq!(session["frozen"], false);
    assert_eq!(session["ephemerals"], serde_json::json!(["/eph"]));
    assert_eq!(session["watches"][0]["path"], "/other");
    assert_eq!(session["watches"][0]["kind"], "data");
    assert_eq!(session["watches"][0]["mode"], "standard");
    assert!(session["timeout_ms"].as_i64().is_some_and(|t| t > 0));

    for name in [
        hex(id),
        id.to_string(),
        hex(id).to_uppercase().replace("0X", "0x"),
    ] {
        let one = expect(&server, "GET", &format!("/sessions/{name}"), "", 200).await;
        assert_eq!(one["id"], hex(id), "{name}");
    }
    let unknown = expect(&server, "GET", "/sessions/0x1", "", 404).await;
    assert!(unknown["error"].as_str().is_some_and(|e| e.contains("0x1")));
    expect(&server, "GET", "/sessions/nope", "", 400).await;
}

#[tokio::test]
async fn expire_ends_the_session_as_its_timeout_would() {
    let server = server().await;
    let doomed = connect(&server.connect_string()).await;
    let observer = connect(&server.connect_string()).await;
    doomed
        .create("/eph", b"", &CreateOptions::ephemeral())
        .await
        .expect("create");
    let (_, gone) = observer.exists_w("/eph").await.expect("exists");
    let mut status = doomed.status_watch();

    let path = format!("/sessions/{}/expire", doomed.session_id());
    let answer = expect(&server, "POST", &path, "", 200).await;
    assert_eq!(answer["expired"], hex(doomed.session_id()));

    assert_eq!(
        within("NodeDeleted", gone).await.expect("event").event_type,
        EventType::NodeDeleted
    );
    wait_state(&mut status, SessionState::Expired).await;
    assert!(matches!(
        doomed.get_data("/").await,
        Err(Error::SessionExpired)
    ));
    // Gone: a second expiry is a 404, and so is every other control on it.
    for action in ["expire", "close", "freeze"] {
        let path = format!("/sessions/{}/{action}", hex(doomed.session_id()));
        expect(&server, "POST", &path, "", 404).await;
    }
}

#[tokio::test]
async fn close_cuts_the_connection_and_the_client_resumes_its_session() {
    let server = server().await;
    let client = connect(&server.connect_string()).await;
    let mut status = client.status_watch();
    let path = format!("/sessions/{}/close", hex(client.session_id()));
    expect(&server, "POST", &path, "", 200).await;
    wait_state(&mut status, SessionState::Disconnected).await;
    wait_state(&mut status, SessionState::Connected).await;
    client.get_data("/").await.expect("the session lives on");
    let listed = expect(&server, "GET", "/sessions", "", 200).await;
    assert_eq!(listed["sessions"][0]["id"], hex(client.session_id()));
}

#[tokio::test]
async fn freeze_holds_everything_until_the_thaw() {
    let server = server().await;
    let client = connect(&server.connect_string()).await;
    let id = hex(client.session_id());
    expect(&server, "POST", &format!("/sessions/{id}/freeze"), "", 200).await;
    let one = expect(&server, "GET", &format!("/sessions/{id}"), "", 200).await;
    assert_eq!(one["frozen"], true);

    // A request sent now is held, not lost: nothing comes back while frozen (a short wait
    // that nothing arrives), and it completes after the thaw.
    let mut held = tokio::spawn(async move {
        let got = client
            .create("/held", b"", &CreateOptions::persistent())
            .await;
        (client, got)
    });
    let early = tokio::time::timeout(Duration::from_millis(300), &mut held).await;
    assert!(early.is_err(), "answered while frozen: {early:?}");
    let tree = expect(&server, "GET", "/tree", "", 200).await;
    assert!(!tree.to_string().contains("/held"), "applied while frozen");
    expect(&server, "POST", &format!("/sessions/{id}/thaw"), "", 200).await;
    let (_client, created) = within("the held create", held).await.expect("task");
    assert_eq!(created.expect("created").0, "/held");
    // Not frozen any more: a second thaw is a conflict.
    expect(&server, "POST", &format!("/sessions/{id}/thaw"), "", 409).await;
    expect(&server, "POST", &format!("/sessions/{id}/melt"), "", 404).await;
}

#[tokio::test]
async fn a_session_without_a_connection_cannot_be_closed() {
    let server = server().await;
    let client = connect(&server.connect_string()).await;
    let id = hex(client.session_id());
    expect(&server, "POST", &format!("/sessions/{id}/freeze"), "", 200).await;
    // Frozen, then cut: the session is kept and has no connection until the client comes back,
    // which the freeze holds.
    expect(&server, "POST", &format!("/sessions/{id}/close"), "", 200).await;
    let listed = expect(&server, "GET", &format!("/sessions/{id}"), "", 200).await;
    assert_eq!(listed["connected"], false);
    expect(&server, "POST", &format!("/sessions/{id}/close"), "", 409).await;
    expect(&server, "POST", &format!("/sessions/{id}/thaw"), "", 200).await;
}
