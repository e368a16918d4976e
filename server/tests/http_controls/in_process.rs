//! `Controls::call`, the controls in-process: the same status and JSON as the same
//! request over HTTP, and it acts on the server as the HTTP call does, with or without the
//! listener on.

use serde_json::Value;
use shepherd_server::Server;

use crate::{call, expect, server};

#[tokio::test]
async fn answers_as_http_does() {
    let server = server().await;
    let calls = [
        ("GET", "/faults", ""),
        ("GET", "/members", ""),
        ("GET", "/sessions", ""),
        ("GET", "/sessions/0x1", ""),
        ("GET", "/nowhere", ""),
        ("PATCH", "/tree", ""),
        ("POST", "/faults", "{\"fault\": \"explode\"}"),
        ("POST", "/faults", "["),
        (
            "POST",
            "/sequence",
            "{\"path\": \"/missing\", \"value\": 3}",
        ),
        ("DELETE", "/faults/9", ""),
        ("POST", "/members/7/stop", ""),
    ];
    for (method, path, body) in calls {
        let over_http = call(&server, method, path, body).await;
        let (status, text) = server.controls().call(method, path, body.as_bytes()).await;
        assert_eq!(status, over_http.status, "{method} {path} {body}");
        let in_process: Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(in_process, over_http.json(), "{method} {path} {body}");
    }
}

#[tokio::test]
async fn acts_on_the_server_without_the_listener() {
    let server = Server::builder().start().await.expect("server starts");
    assert!(server.controls().http_addr().is_none());
    let rule = b"{\"fault\": \"delay\", \"delay_ms\": 5}";
    let (status, text) = server.controls().call("POST", "/faults", rule).await;
    assert_eq!((status, text.as_str()), (201, "{\"id\":1}"));
    let (status, text) = server.controls().call("GET", "/faults", b"").await;
    assert_eq!(status, 200);
    let listed: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(listed["faults"][0]["delay_ms"], 5);
    let (status, _) = server.controls().call("NOT A METHOD", "/faults", b"").await;
    assert_eq!(status, 405);
    let big = vec![b' '; 64 * 1024 + 1];
    let (status, _) = server.controls().call("POST", "/faults", &big).await;
    assert_eq!(status, 413);
    // Over HTTP too, on a server with the listener: the in-process call's rule is listed.
    let with_http = crate::server().await;
    with_http.controls().call("POST", "/faults", rule).await;
    let listed = expect(&with_http, "GET", "/faults", "", 200).await;
    assert_eq!(listed["faults"].as_array().map(Vec::len), Some(1));
}
