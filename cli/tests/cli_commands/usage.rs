//! Exit codes for what the user got wrong (2) and for a ZooKeeper that is not there (1).

use shepherd_testkit::on_both_servers;
use shepherd_testkit::unique;

use crate::{run, shepherd};

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn bad_input_is_a_usage_error(server) {
        let c = &server.connect;
        for args in [
            &["setacl", "/", "world:anyone"][..],
            &["create", "/x", "--acl", "world:anyone:rz"],
            &["ls", "/", "--auth", "nocolon"],
            &["create", "-e", "-c", "/x"],
            &["delete", "-r", "-v", "1", "/x"],
            &["ls", "relative"],
            &["load", "/nonexistent/dump.jsonl"],
            // Paths the Java client refuses; the server would answer a bare NoNode.
            &["create", "/a/"],
            &["get", "/a//b"],
            &["ls", "/zookeeper/"],
            &["tree", "/a/../b"],
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

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn misleading_errors_get_a_hint_naming_the_cause(server) {
        let c = &server.connect;
        // A sequential create may end in '/': the server appends the number.
        let queue = unique("cli-queue");
        run(c, &["create", &queue]).await.ok();
        let made = run(c, &["create", "-s", &format!("{queue}/")]).await;
        assert!(
            made.ok().starts_with(&format!("Created {queue}/0")),
            "{made:?}"
        );
        // A missing chroot: NoNode, and the hint says it is the chroot.
        let chroot = unique("cli-no-chroot");
        let ran = run(&format!("{c}{chroot}"), &["ls", "/"]).await;
        assert_eq!(ran.code, Some(1), "{}: {ran:?}", server.name);
        assert!(
            ran.stderr.contains(&format!(
                "hint: the chroot {chroot} of --server does not exist"
            )),
            "{ran:?}"
        );
        // A chroot that exists: a plain NoNode, no hint.
        let ran = run(&format!("{c}{queue}"), &["get", "/nope"]).await;
        assert_eq!(ran.stderr.trim(), "error: NoNode: /nope", "{ran:?}");
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ttl_node_on_a_server_without_extended_types_names_the_key() {
    // The server's default: extended types off, as on ZooKeeper.
    let server = shepherd_server::Server::builder()
        .start()
        .await
        .expect("a server");
    let ran = run(
        &server.connect_string(),
        &["create", "-t", "1000", &unique("cli-ttl")],
    )
    .await;
    assert_eq!(ran.code, Some(1), "{ran:?}");
    assert!(ran.stderr.starts_with("error: Unimplemented: "), "{ran:?}");
    assert!(ran.stderr.contains("extendedTypesEnabled=true"), "{ran:?}");
    server.shutdown().await;
}
