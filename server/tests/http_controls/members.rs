//! Ensemble members over HTTP: listing, stopping, starting, partitioning and healing, with the
//! member each session came in on.

use serde_json::json;
use shepherd_server::{MemberState, Server};
use shepherd_testkit::{connect, within};

use crate::{expect, hex};

async fn ensemble(n: usize) -> Server {
    Server::builder()
        .members(n)
        .test_controls(([127, 0, 0, 1], 0).into())
        .start()
        .await
        .expect("ensemble starts")
}

#[tokio::test]
async fn members_are_listed_with_their_state_and_the_leader() {
    let server = ensemble(3).await;
    let listed = expect(&server, "GET", "/members", "", 200).await;
    let members = listed["members"].as_array().expect("a list");
    assert_eq!(members.len(), 3);
    for (i, member) in members.iter().enumerate() {
        let id = i as u64 + 1;
        assert_eq!(member["id"], id);
        assert_eq!(member["state"], "up");
        let addr = server.members().addr(id).expect("an address").to_string();
        assert_eq!(member["addr"], addr);
    }
    assert_eq!(listed["leader"], json!(server.members().leader()));

    let single = crate::server().await;
    let listed = expect(&single, "GET", "/members", "", 200).await;
    assert_eq!(listed["members"].as_array().map(Vec::len), Some(1));
    assert_eq!(listed["leader"], json!(null));
}

#[tokio::test]
async fn stop_start_partition_and_heal() {
    let server = ensemble(3).await;
    let addr = server.members().addr(2).expect("member 2").to_string();
    let client = connect(&addr).await;
    let session = expect(
        &server,
        "GET",
        &format!("/sessions/{}", hex(client.session_id())),
        "",
        200,
    )
    .await;
    assert_eq!(session["member"], 2);

    let stopped = expect(&server, "POST", "/members/2/stop", "", 200).await;
    assert_eq!(stopped["state"], "stopped");
    assert_eq!(server.members().state(2), Some(MemberState::Stopped));
    assert!(
        tokio::net::TcpStream::connect(&addr).await.is_err(),
        "port 2 is closed"
    );
    let started = expect(&server, "POST", "/members/2/start", "", 200).await;
    assert_eq!(started["state"], "up");
    assert!(
        tokio::net::TcpStream::connect(&addr).await.is_ok(),
        "port 2 is open again"
    );

    let partitioned = expect(&server, "POST", "/members/3/partition", "", 200).await;
    assert_eq!(partitioned["state"], "partitioned");
    assert_eq!(server.members().state(3), Some(MemberState::Partitioned));
    let healed = expect(&server, "POST", "/members/3/heal", "", 200).await;
    assert_eq!(healed["state"], "up");

    for path in [
        "/members/4/stop",
        "/members/0/start",
        "/members/9/partition",
    ] {
        expect(&server, "POST", path, "", 404).await;
    }
    expect(&server, "POST", "/members/x/stop", "", 400).await;
    expect(&server, "POST", "/members/1/explode", "", 404).await;
    expect(&server, "GET", "/members/1/stop", "", 405).await;
}

/// `POST /members/{id}/elect` and ControllerService's `/command/electnewleader` force an
/// election; `GET /members` names each member's role, `looking` while the election runs.
#[tokio::test(start_paused = true)]
async fn elections_are_forced_and_roles_listed() {
    let server = Server::builder()
        .members(3)
        .test_controls(([127, 0, 0, 1], 0).into())
        .test_controls_open_commands(true)
        .start()
        .await
        .expect("ensemble starts");
    let roles = |listed: &serde_json::Value| -> Vec<String> {
        listed["members"]
            .as_array()
            .expect("a list")
            .iter()
            .map(|m| m["role"].as_str().unwrap_or("none").to_string())
            .collect()
    };
    let listed = expect(&server, "GET", "/members", "", 200).await;
    assert_eq!(roles(&listed), ["follower", "follower", "leader"]);

    let epoch = server.controls().last_zxid() >> 32;
    expect(&server, "POST", "/members/1/elect", "", 200).await;
    let looking = expect(&server, "GET", "/members", "", 200).await;
    assert_eq!(roles(&looking), ["looking", "looking", "looking"]);
    assert_eq!(looking["leader"], json!(null));
    within("the election", server.members().until_serving()).await;
    let listed = expect(&server, "GET", "/members", "", 200).await;
    assert_eq!(roles(&listed), ["leader", "follower", "follower"]);
    assert_eq!(
        server.controls().last_zxid() >> 32,
        epoch + 1,
        "a new epoch"
    );

    // The election's own choice: the highest id up.
    let addr = server.controls().http_addr().expect("test controls on");
    let got = crate::http::call(addr, "GET", "/command/electnewleader", None, b"").await;
    assert_eq!(got.status, 200, "{}", got.body);
    within("the election", server.members().until_serving()).await;
    assert_eq!(server.members().leader(), Some(3));

    expect(&server, "POST", "/members/2/stop", "", 200).await;
    let listed = expect(&server, "GET", "/members", "", 200).await;
    assert_eq!(
        listed["members"][1]["role"],
        json!(null),
        "a stopped member has none"
    );
    expect(&server, "POST", "/members/2/elect", "", 409).await;
    expect(&server, "POST", "/members/7/elect", "", 404).await;
    let isolated = expect(&server, "POST", "/members/1/isolate", "", 200).await;
    assert_eq!(isolated["state"], "isolated");
    expect(&server, "POST", "/members/7/isolate", "", 404).await;
    server.shutdown().await;
}
