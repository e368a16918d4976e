//! The token and loopback rules: off by default, loopback only, and no call without the exact
//! bearer token.

use std::io::ErrorKind;

use shepherd_server::Server;

use crate::http::call;
use crate::{expect, server};

#[tokio::test]
async fn off_by_default() {
    let server = Server::builder().start().await.expect("server starts");
    assert_eq!(server.controls().http_addr(), None);
    assert_eq!(server.controls().http_token(), None);
}

#[tokio::test]
async fn only_loopback_addresses_are_accepted() {
    for addr in ["0.0.0.0:0", "192.0.2.1:0", "[::]:0"] {
        let refused = Server::builder()
            .test_controls(addr.parse().expect("address"))
            .start()
            .await
            .expect_err(addr);
        assert_eq!(refused.kind(), ErrorKind::InvalidInput, "{addr}");
        assert!(refused.to_string().contains("loopback"), "{refused}");
    }
}

#[tokio::test]
async fn every_call_needs_the_exact_bearer_token() {
    let server = server().await;
    let addr = server.controls().http_addr().expect("on");
    assert!(addr.ip().is_loopback());
    let token = server.controls().http_token().expect("token").to_string();
    assert_eq!(token.len(), 64);
    let mut wrong = token.clone().into_bytes();
    wrong[0] = if wrong[0] == b'a' { b'b' } else { b'a' };
    let wrong = String::from_utf8(wrong).expect("ascii");
    let refused = [
        None,
        Some(String::new()),
        Some(token.clone()),
        Some(format!("Basic {token}")),
        Some(format!("Bearer {wrong}")),
        Some(format!("Bearer {token}x")),
        Some("Bearer ".to_string()),
    ];
    for authorization in &refused {
        // Even a control that would act, on a path that does not exist: 401 comes first.
        for (method, path) in [
            ("GET", "/sessions"),
            ("DELETE", "/faults"),
            ("GET", "/nope"),
        ] {
            let got = call(addr, method, path, authorization.as_deref(), b"").await;
            assert_eq!(got.status, 401, "{authorization:?} {method} {path}");
            assert_eq!(got.www_authenticate.as_deref(), Some("Bearer"));
            assert!(got.json()["error"].is_string());
        }
    }
    let got = call(
        addr,
        "GET",
        "/sessions",
        Some(&format!("Bearer {token}")),
        b"",
    )
    .await;
    assert_eq!(got.status, 200, "{}", got.body);
    assert_eq!(got.content_type, "application/json");
    // A second server has a token of its own.
    let other = crate::server().await;
    assert_ne!(
        other.controls().http_token(),
        server.controls().http_token()
    );
    expect(&server, "GET", "/sessions", "", 200).await;
}
