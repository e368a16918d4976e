//! `getacl`, `setacl`, `addauth`, and `--auth` giving a command's session a credential.

use shepherd_client::CreateOptions;
use shepherd_testkit::on_both_servers;
use shepherd_testkit::{connect, unique};

use crate::run;

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn acls_print_set_and_need_the_credential_they_name(server) {
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

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn addauth_shows_the_sessions_identities(server) {
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

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_unreadable_node_is_marked_and_counted_never_blanks_the_walk(server) {
        let root = unique("cli-partial");
        let c = &server.connect;
        let client = connect(c).await;
        for path in ["", "/open", "/open/leaf", "/sec", "/sec/hidden", "/z"] {
            let path = format!("{root}{path}");
            client
                .create(&path, b"x", &CreateOptions::persistent())
                .await
                .unwrap();
        }
        // /sec is readable by alice only: its listing, data and ACL are refused to others.
        let sec = format!("{root}/sec");
        run(
            c,
            &["setacl", "--auth", "digest:alice:pw", &sec, "auth::cdrwa"],
        )
        .await
        .ok();
        let denied = format!("1 node could not be read (first: NoAuth: {sec})");

        let tree = run(c, &["tree", &root]).await;
        assert_eq!(tree.code, Some(1), "{}: {tree:?}", server.name);
        assert!(
            tree.stdout.contains("leaf") && tree.stdout.contains("z"),
            "{tree:?}"
        );
        assert!(
            tree.stdout.contains("sec  [NoAuth: not listed]"),
            "{tree:?}"
        );
        assert!(!tree.stdout.contains("hidden"), "{tree:?}");
        assert_eq!(tree.stderr.trim(), format!("error: {denied}"));

        let json = run(c, &["tree", "--json", &root]).await;
        assert_eq!(json.code, Some(1));
        let refused: Vec<serde_json::Value> = json
            .stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .filter(|v: &serde_json::Value| v.get("error").is_some())
            .collect();
        assert_eq!(refused.len(), 1, "{json:?}");
        assert_eq!(refused[0]["path"], sec.as_str());
        assert_eq!(refused[0]["error"], "NoAuth");

        let listed = run(c, &["ls", "-R", &root]).await;
        assert_eq!(listed.code, Some(1));
        let lines: Vec<&str> = listed.stdout.lines().collect();
        assert_eq!(lines.len(), 5, "{listed:?}");
        assert!(lines.contains(&format!("{sec}  [NoAuth: not listed]").as_str()));

        let dump = run(c, &["dump", &root]).await;
        assert_eq!(dump.code, Some(1));
        assert_eq!(
            dump.stdout.lines().count(),
            4,
            "root, open, leaf, z: {dump:?}"
        );
        assert_eq!(dump.stderr.trim(), format!("error: {denied}"));

        let locks = run(c, &["locks", &root]).await;
        assert_eq!(locks.code, Some(1));
        assert_eq!(locks.stderr.trim(), format!("error: {denied}"));

        // Deleting needs the whole subtree: refused before anything is deleted.
        let delete = run(c, &["delete", "-r", &root]).await;
        assert_eq!(delete.code, Some(1));
        assert_eq!(delete.stderr.trim(), format!("error: NoAuth: {sec}"));
        assert!(client.exists(&format!("{root}/z")).await.unwrap().is_some());

        // With the credential, everything reads and the exit code is 0.
        let all = run(c, &["tree", "--auth", "digest:alice:pw", &root]).await;
        assert!(all.ok().contains("hidden"));
        server.shutdown().await;
    }
}
