//! Exit codes for what the user got wrong (2) and for a ZooKeeper that is not there (1).

use shepherd_testkit::servers;

use crate::{run, shepherd};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_a_usage_error() {
    for server in servers().await {
        let c = &server.connect;
        for args in [
            &["setacl", "/", "world:anyone"][..],
            &["create", "/x", "--acl", "world:anyone:rz"],
            &["ls", "/", "--auth", "nocolon"],
            &["create", "-e", "-c", "/x"],
            &["delete", "-r", "-v", "1", "/x"],
            &["ls", "relative"],
            &["load", "/nonexistent/dump.jsonl"],
        ] {
            let ran = run(c, args).await;
            assert_eq!(ran.code, Some(2), "{args:?}: {ran:?}");
            assert!(ran.stderr.starts_with("error"), "{args:?}: {ran:?}");
        }
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_server_is_a_connection_loss() {
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let output = shepherd()
        .args([
            "ls",
            "/",
            "--server",
            &format!("127.0.0.1:{port}"),
            "--connect-timeout",
            "2000",
        ])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: ConnectionLoss: 127.0.0.1:"),
        "{stderr}"
    );
}
