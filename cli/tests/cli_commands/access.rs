//! `getacl`, `setacl`, `addauth`, and `--auth` giving a command's session a credential.

use shepherd_client::CreateOptions;
use shepherd_testkit::{connect, servers, unique};

use crate::run;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acls_print_set_and_need_the_credential_they_name() {
    for server in servers().await {
        let root = unique("cli-acl");
        let c = &server.connect;
        let client = connect(c).await;
        client
            .create(&root, b"secret", &CreateOptions::persistent())
            .await
            .unwrap();
        assert_eq!(
            run(c, &["getacl", &root]).await.ok(),
            "world:anyone:cdrwa\n"
        );
        // auth::cdrwa names the command's own credential: alice alone may read it now.
        run(
            c,
            &["setacl", "--auth", "digest:alice:pw", &root, "auth::cdrwa"],
        )
        .await
        .ok();
        let denied = run(c, &["get", &root]).await;
        assert_eq!(denied.code, Some(1));
        assert_eq!(denied.stderr.trim(), format!("error: NoAuth: {root}"));
        let wrong = run(c, &["get", "--auth", "digest:alice:nope", &root]).await;
        assert_eq!(wrong.code, Some(1), "{}", server.name);
        let allowed = run(c, &["get", "--auth", "digest:alice:pw", &root]).await;
        assert_eq!(allowed.ok(), "secret\n");
        let json = run(c, &["getacl", "--json", "--auth", "digest:alice:pw", &root])
            .await
            .json();
        assert_eq!(json["acl"][0]["scheme"], "digest");
        assert!(json["acl"][0]["id"].as_str().unwrap().starts_with("alice:"));
        assert_eq!(json["acl"][0]["perms"], "cdrwa");
        // A stale ACL version: BadVersion.
        let stale = run(
            c,
            &[
                "setacl",
                "-v",
                "0",
                "--auth",
                "digest:alice:pw",
                &root,
                "world:anyone:r",
            ],
        )
        .await;
        assert_eq!(stale.stderr.trim(), format!("error: BadVersion: {root}"));
        run(
            c,
            &[
                "setacl",
                "-v",
                "1",
                "--auth",
                "digest:alice:pw",
                &root,
                "world:anyone:r",
            ],
        )
        .await
        .ok();
        assert_eq!(run(c, &["getacl", &root]).await.ok(), "world:anyone:r\n");
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn addauth_shows_the_sessions_identities() {
    for server in servers().await {
        let ran = run(&server.connect, &["addauth", "digest", "bob:pw"]).await;
        let lines: Vec<&str> = ran.ok().lines().collect();
        assert!(lines.contains(&"digest:bob"), "{}: {lines:?}", server.name);
        assert!(lines.iter().any(|l| l.starts_with("ip:")), "{lines:?}");
        let json = run(&server.connect, &["addauth", "--json", "digest", "bob:pw"])
            .await
            .json();
        assert!(
            json.as_array()
                .unwrap()
                .iter()
                .any(|i| i["scheme"] == "digest" && i["user"] == "bob")
        );
        server.shutdown().await;
    }
}
