//! ZooKeeper 3.8's `ControllerService` URLs (`/command/<action>[/<parameter>]`) on the test
//! controls: the answers ZooKeeper gives (200 and the command echoed, 404 for an unknown
//! action or a parameter it cannot decode), the token rule and the flag that opens them, and
//! each command's effect as a client sees it. `.ci/controller.sh` compares the same commands
//! with ZooKeeper's own service on the wire.

use std::time::Duration;

use shepherd_client::{CreateOptions, Error, SessionState};
use shepherd_protocol::ErrorCode;
use shepherd_server::Server;
use shepherd_testkit::{connect, wait_state, within};

use crate::http::{self, Got};
use crate::{expect, hex};

/// A server whose `/command/*` answer without the token.
async fn open_server() -> Server {
    Server::builder()
        .test_controls(([127, 0, 0, 1], 0).into())
        .test_controls_open_commands(true)
        .start()
        .await
        .expect("server starts")
}

/// `GET path` without a token, as ZooKeeper's command client sends it.
async fn command(server: &Server, path: &str) -> Got {
    let addr = server.controls().http_addr().expect("test controls on");
    http::call(addr, "GET", path, None, b"").await
}

/// Expects ZooKeeper's 200: the path echoed, as text/html.
async fn ok(server: &Server, path: &str) {
    let got = command(server, path).await;
    assert_eq!(got.status, 200, "{path}: {}", got.body);
    assert_eq!(got.content_type, "text/html;charset=utf-8", "{path}");
    assert_eq!(got.body, format!("{}\n", &path[1..]), "{path}");
}

#[tokio::test]
async fn known_commands_echo_in_any_case_and_the_rest_are_404() {
    let server = open_server().await;
    for path in [
        "/command/ping",
        "/command/PING",
        "/command/Ping/ignored",
        "/command/rejectconnections",
        "/command/electnewleader",
        "/command/closeconnection/0x99",
        "/command/expiresession/12345",
        "/command/adddelay/0",
        "/command/failrequests/0",
        "/command/noresponse/0",
        "/command/reset",
    ] {
        ok(&server, path).await;
    }
    for path in [
        "/command",
        "/command/",
        "/command/nope",
        "/command/closeconnection/zz",
        "/command/closeconnection/",
        "/command/expiresession/0x",
        "/command/adddelay/-5",
        "/command/failrequests/1.5",
    ] {
        let got = command(&server, path).await;
        assert_eq!(got.status, 404, "{path}: {}", got.body);
        assert_eq!(got.content_type, "text/html;charset=iso-8859-1", "{path}");
        assert!(got.body.contains("Error 404 Not Found"), "{}", got.body);
    }
    // Nothing a refused command asked for was done.
    assert!(server.controls().sessions().is_empty());
    let faults = expect(&server, "GET", "/faults", "", 200).await;
    assert_eq!(faults["faults"], serde_json::json!([]));
}

#[tokio::test]
async fn commands_need_the_token_unless_opened_and_other_routes_always_do() {
    let closed = crate::server().await;
    let got = command(&closed, "/command/ping").await;
    assert_eq!(got.status, 401, "{}", got.body);
    let with_token = crate::call(&closed, "GET", "/command/ping", "").await;
    assert_eq!(with_token.status, 200, "{}", with_token.body);

    let open = open_server().await;
    ok(&open, "/command/ping").await;
    let got = command(&open, "/sessions").await;
    assert_eq!(got.status, 401, "only /command/* is opened: {}", got.body);
}

#[tokio::test]
async fn closeconnection_cuts_one_session_or_all_and_the_sessions_live_on() {
    let server = open_server().await;
    let one = connect(&server.connect_string()).await;
    let other = connect(&server.connect_string()).await;
    let (mut one_status, mut other_status) = (one.status_watch(), other.status_watch());

    ok(
        &server,
        &format!("/command/closeconnection/{}", hex(one.session_id())),
    )
    .await;
    wait_state(&mut one_status, SessionState::Disconnected).await;
    wait_state(&mut one_status, SessionState::Connected).await;
    one.get_data("/").await.expect("the session lives on");
    assert_eq!(other_status.borrow().state, SessionState::Connected);

    ok(&server, "/command/CloseConnection").await;
    wait_state(&mut other_status, SessionState::Disconnected).await;
    wait_state(&mut other_status, SessionState::Connected).await;
    other.get_data("/").await.expect("the session lives on");
}

#[tokio::test]
async fn expiresession_ends_the_session_and_an_unknown_one_is_zookeepers_200() {
    let server = open_server().await;
    let doomed = connect(&server.connect_string()).await;
    let bystander = connect(&server.connect_string()).await;
    doomed
        .create("/eph", b"", &CreateOptions::ephemeral())
        .await
        .expect("create");
    let mut status = doomed.status_watch();

    // Decimal, as ZooKeeper's Long.decode reads it.
    ok(
        &server,
        &format!("/command/expiresession/{}", doomed.session_id()),
    )
    .await;
    wait_state(&mut status, SessionState::Expired).await;
    assert!(bystander.exists("/eph").await.expect("exists").is_none());
    // Gone, or never known: 200 and nothing done, at once.
    ok(
        &server,
        &format!("/command/expiresession/{}", doomed.session_id()),
    )
    .await;
    ok(&server, "/command/expiresession/0x7fffffffffffffff").await;
    bystander.get_data("/").await.expect("untouched");

    ok(&server, "/command/expiresession").await;
    let mut status = bystander.status_watch();
    wait_state(&mut status, SessionState::Expired).await;
}

#[tokio::test]
async fn failrequests_fails_that_many_requests_with_apierror_unapplied() {
    let server = open_server().await;
    let client = connect(&server.connect_string()).await;
    ok(&server, "/command/failrequests/2").await;
    for n in 0..2 {
        let got = client
            .create(&format!("/f{n}"), b"", &CreateOptions::persistent())
            .await;
        assert!(
            matches!(got, Err(Error::Keeper(ErrorCode::APIError))),
            "{got:?}"
        );
    }
    client
        .create("/f2", b"", &CreateOptions::persistent())
        .await
        .expect("the third succeeds");
    assert!(
        client.exists("/f0").await.expect("exists").is_none(),
        "applied"
    );

    // Without a count: every request until reset.
    ok(&server, "/command/failrequests").await;
    for _ in 0..3 {
        let got = client.get_data("/").await;
        assert!(
            matches!(got, Err(Error::Keeper(ErrorCode::APIError))),
            "{got:?}"
        );
    }
    ok(&server, "/command/reset").await;
    client.get_data("/").await.expect("reset ends it");
}

#[tokio::test]
async fn adddelay_holds_replies_until_reset_and_noresponse_never_answers() {
    let server = open_server().await;
    let client = connect(&server.connect_string()).await;
    ok(&server, "/command/adddelay/300").await;
    // A reply is held back: nothing within a short wait, then it comes.
    let mut slow = Box::pin(client.get_data("/"));
    let early = tokio::time::timeout(Duration::from_millis(100), &mut slow).await;
    assert!(early.is_err(), "answered before the delay: {early:?}");
    within("the delayed reply", slow).await.expect("answered");
    // A second adddelay replaces the first rule, and reset removes it.
    ok(&server, "/command/adddelay").await;
    let faults = expect(&server, "GET", "/faults", "", 200).await;
    assert_eq!(
        faults["faults"].as_array().map(Vec::len),
        Some(1),
        "{faults}"
    );
    ok(&server, "/command/reset").await;
    let faults = expect(&server, "GET", "/faults", "", 200).await;
    assert_eq!(faults["faults"], serde_json::json!([]));
    client.get_data("/").await.expect("no delay after reset");

    ok(&server, "/command/noresponse/1").await;
    let persistent = CreateOptions::persistent();
    let held = client.create("/applied", b"", &persistent);
    let early = tokio::time::timeout(Duration::from_millis(300), held).await;
    assert!(early.is_err(), "answered: {early:?}");
    // Applied, as ZooKeeper applies it, only the reply withheld.
    let tree = expect(&server, "GET", "/tree", "", 200).await;
    assert!(tree.to_string().contains("/applied"), "{tree}");
}

#[tokio::test]
async fn shutdown_answers_then_begins_the_stop() {
    let server = open_server().await;
    let client = connect(&server.connect_string()).await;
    let mut status = client.status_watch();
    ok(&server, "/command/shutdown").await;
    within("the stop begun", server.stopping()).await;
    server.shutdown().await;
    wait_state(&mut status, SessionState::Disconnected).await;
}
