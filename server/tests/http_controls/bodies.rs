//! Bodies of every wrong shape: each is a 400 (413 when too large) with a JSON error, nothing
//! is applied, and the server goes on answering. Unknown endpoints are 404s, wrong methods
//! 405s that say which are allowed.

use serde_json::json;

use crate::{call, expect, server};

/// Bodies that are not a fault rule or a counter.
const GARBAGE: &[&str] = &[
    "",
    " ",
    "null",
    "[]",
    "42",
    "\"text\"",
    "{",
    "{}",
    "{\"fault\":",
    "\u{0}\u{1}\u{2}",
    "{\"fault\": null}",
    "{\"fault\": \"delay\", \"delay_ms\": \"5\"}",
    "{\"fault\": \"delay\", \"delay_ms\": 1e400}",
    "{\"fault\": \"reject\", \"error\": {}}",
    "{\"fault\": \"apply_then_drop\", \"session\": \"0x\"}",
    "{\"fault\": \"apply_then_drop\", \"session\": 18446744073709551616}",
    "{\"fault\": \"apply_then_drop\", \"opcode\": [1]}",
    "{\"fault\": \"apply_then_drop\", \"times\": -1}",
    "{\"fault\": \"apply_then_drop\", \"extra\": 1}",
    "{\"path\": \"/\", \"value\": 2147483648}",
    "{\"path\": \"/\", \"value\": \"1\"}",
    "{\"path\": \"relative\", \"value\": 1}",
    "{\"path\": \"/a/\", \"value\": 1}",
    "{\"path\": 7, \"value\": 1}",
    "{\"value\": 1}",
    "{\"path\": \"/\"}",
];

#[tokio::test]
async fn garbage_bodies_are_400s_and_apply_nothing() {
    let server = server().await;
    for body in GARBAGE {
        for path in ["/faults", "/sequence"] {
            let got = call(&server, "POST", path, body).await;
            assert_eq!(got.status, 400, "POST {path} {body:?}: {}", got.body);
            assert!(got.json()["error"].is_string(), "{body:?}");
        }
    }
    // Pseudo-random bytes (a fixed xorshift, so a failure repeats), some of them JSON-ish.
    let alphabet: &[u8] = b"{}[]\":,0123456789abcdefx -\\\0\xff";
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for round in 0..200 {
        let len = round % 40;
        let body: Vec<u8> = (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                alphabet[(state % alphabet.len() as u64) as usize]
            })
            .collect();
        let text = String::from_utf8_lossy(&body).into_owned();
        for path in ["/faults", "/sequence"] {
            let got = call(&server, "POST", path, &text).await;
            assert!(
                got.status == 400 || got.status == 404,
                "POST {path} {body:?}: {} {}",
                got.status,
                got.body
            );
        }
    }
    let listed = expect(&server, "GET", "/faults", "", 200).await;
    assert_eq!(listed["faults"], json!([]));
}

#[tokio::test]
async fn an_oversized_body_is_413() {
    let server = server().await;
    let body = format!("{{\"fault\": \"{}\"}}", "x".repeat(100 * 1024));
    let got = call(&server, "POST", "/faults", &body).await;
    assert_eq!(got.status, 413, "{}", got.body);
    expect(&server, "GET", "/faults", "", 200).await;
}

#[tokio::test]
async fn unknown_endpoints_and_wrong_methods() {
    let server = server().await;
    for path in [
        "/",
        "/nope",
        "/sessions/1/2/3",
        "/commands/ruok",
        "/metrics",
    ] {
        expect(&server, "GET", path, "", 404).await;
    }
    for (method, path, allow) in [
        ("POST", "/sessions", "GET"),
        ("DELETE", "/tree", "GET"),
        ("PUT", "/faults", "GET, POST, DELETE"),
        ("GET", "/faults/1", "DELETE"),
        ("GET", "/sessions/0x1/expire", "POST"),
        ("GET", "/sequence", "POST"),
    ] {
        let got = call(&server, method, path, "").await;
        assert_eq!(got.status, 405, "{method} {path}");
        assert_eq!(got.allow.as_deref(), Some(allow), "{method} {path}");
        assert!(got.json()["error"].is_string());
    }
}
