//! Fault rules, the sequence counter and the inspection endpoints over HTTP, each checked
//! against what a client sees.

use serde_json::json;
use shepherd_client::{CreateOptions, Error};
use shepherd_protocol::{CreateMode, ErrorCode};
use shepherd_testkit::{connect, within};

use crate::{expect, hex, server};

#[tokio::test]
async fn fault_rules_are_added_listed_fired_and_removed() {
    let server = server().await;
    let client = connect(&server.connect_string()).await;
    let rule = json!({
        "fault": "reject", "error": "NoAuth", "opcode": "Create", "path_prefix": "/locks",
        "times": 2, "session": client.session_id(),
    });
    let added = expect(&server, "POST", "/faults", &rule.to_string(), 201).await;
    let id = added["id"].as_u64().expect("an id");
    let delay = json!({"fault": "delay", "delay_ms": 5, "opcode": "GetData"});
    let second = expect(&server, "POST", "/faults", &delay.to_string(), 201).await;
    assert_ne!(second["id"], added["id"]);

    let refused = client
        .create("/locks", b"", &CreateOptions::persistent())
        .await;
    assert!(
        matches!(&refused, Err(e) if e.keeper_code() == Some(ErrorCode::NoAuth)),
        "{refused:?}"
    );
    let listed = expect(&server, "GET", "/faults", "", 200).await;
    assert_eq!(
        listed["faults"][0],
        json!({
            "id": id, "fired": 1, "fault": "reject", "error": "NoAuth", "opcode": "Create",
            "path_prefix": "/locks", "times": 2, "session": hex(client.session_id()),
        })
    );
    assert_eq!(listed["faults"][1]["delay_ms"], 5);
    assert_eq!(listed["faults"][1]["times"], "once");

    expect(&server, "DELETE", &format!("/faults/{id}"), "", 200).await;
    expect(&server, "DELETE", &format!("/faults/{id}"), "", 404).await;
    expect(&server, "DELETE", "/faults/x", "", 400).await;
    client
        .create("/locks", b"", &CreateOptions::persistent())
        .await
        .expect("no rule left for creates");
    expect(&server, "DELETE", "/faults", "", 200).await;
    let listed = expect(&server, "GET", "/faults", "", 200).await;
    assert_eq!(listed["faults"], json!([]));
}

#[tokio::test]
async fn an_apply_then_drop_rule_cuts_the_connection_after_the_write() {
    let server = server().await;
    let client = connect(&server.connect_string()).await;
    let rule = json!({"fault": "apply_then_drop", "opcode": "Create", "path_prefix": "/lost"});
    expect(&server, "POST", "/faults", &rule.to_string(), 201).await;
    let lost = client
        .create("/lost", b"", &CreateOptions::persistent())
        .await;
    assert!(matches!(lost, Err(Error::ConnectionLoss)), "{lost:?}");
    // Applied all the same.
    let tree = expect(&server, "GET", "/tree", "", 200).await;
    let paths: Vec<&str> = tree["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter_map(|n| n["path"].as_str())
        .collect();
    assert!(paths.contains(&"/lost"), "{paths:?}");
}

#[tokio::test]
async fn the_sequence_counter_names_the_next_sequential_child() {
    let server = server().await;
    let client = connect(&server.connect_string()).await;
    client
        .create("/q", b"", &CreateOptions::persistent())
        .await
        .expect("create");
    let set = expect(
        &server,
        "POST",
        "/sequence",
        r#"{"path": "/q", "value": 41}"#,
        200,
    )
    .await;
    assert_eq!(set, json!({"path": "/q", "value": 41}));
    let name = client
        .create(
            "/q/n-",
            b"",
            &CreateOptions::new(CreateMode::PersistentSequential),
        )
        .await
        .expect("create");
    assert_eq!(name.0, "/q/n-0000000041");
    let missing = r#"{"path": "/none", "value": 1}"#;
    expect(&server, "POST", "/sequence", missing, 404).await;
}

#[tokio::test]
async fn tree_watches_and_notification_counts() {
    let server = server().await;
    let writer = connect(&server.connect_string()).await;
    let watcher = connect(&server.connect_string()).await;
    writer
        .create("/d", b"abc", &CreateOptions::persistent())
        .await
        .expect("create");
    let (_, _, fired) = watcher.get_data_w("/d").await.expect("watch");

    let watches = expect(&server, "GET", "/watches", "", 200).await;
    assert_eq!(
        watches["watches"],
        json!([{
            "path": "/d", "kind": "data", "mode": "standard",
            "session": hex(watcher.session_id()),
            "connection": watches["watches"][0]["connection"],
        }])
    );
    let tree = expect(&server, "GET", "/tree", "", 200).await;
    let node = tree["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .find(|n| n["path"] == "/d")
        .expect("/d listed")
        .clone();
    assert_eq!(node["stat"]["dataLength"], 3);
    assert_eq!(node["stat"]["version"], 0);
    assert_eq!(node["stat"]["ephemeralOwner"], "0x0");
    assert!(
        node["stat"]["czxid"]
            .as_str()
            .is_some_and(|z| z.starts_with("0x"))
    );

    writer.set_data("/d", b"x", None).await.expect("set");
    within("NodeDataChanged", fired).await.expect("event");
    let counts = expect(&server, "GET", "/notifications", "", 200).await;
    assert_eq!(counts["total"], 1);
    assert_eq!(counts["NodeDataChanged"], 1);
    assert_eq!(counts["NodeCreated"], 0);
    assert_eq!(counts["per_session"][hex(watcher.session_id())], 1);
}
