//! `create` in every mode, `set` with a version, `delete` alone, with a version and `-r`.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use shepherd_client::CreateOptions;
use shepherd_testkit::on_both_servers;
use shepherd_testkit::{connect, unique, wait_children, within};

use crate::{run, shepherd};

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn create_makes_every_mode(server) {
        let root = unique("cli-create");
        let client = connect(&server.connect).await;
        let c = &server.connect;
        let ran = run(c, &["create", &root, "data"]).await;
        assert_eq!(ran.ok(), format!("Created {root}\n"));
        assert_eq!(client.get_data(&root).await.unwrap().0, b"data");
        // Sequential: the suffix is printed.
        let ran = run(c, &["create", "-s", &format!("{root}/q-")]).await;
        assert_eq!(
            ran.ok(),
            format!("Created {root}/q-0000000000\n"),
            "{}",
            server.name
        );
        // Container and TTL: created (their stats look persistent).
        run(c, &["create", "-c", &format!("{root}/box")]).await.ok();
        run(c, &["create", "-t", "60000", &format!("{root}/ttl")])
            .await
            .ok();
        let json = run(
            c,
            &[
                "create",
                "--json",
                "-s",
                "-t",
                "60000",
                &format!("{root}/st-"),
            ],
        )
        .await
        .json();
        assert!(
            json["path"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{root}/st-"))
        );
        // Ancestors with -p; the ACL with --acl.
        let deep = format!("{root}/p/q/r");
        run(c, &["create", "-p", "--acl", "world:anyone:cdr", &deep])
            .await
            .ok();
        assert_eq!(client.get_acl(&deep).await.unwrap().0[0].perms, 0b1101);
        // Ephemeral: gone when the command's session ends.
        run(c, &["create", "-e", &format!("{root}/gone")])
            .await
            .ok();
        assert!(
            client
                .exists(&format!("{root}/gone"))
                .await
                .unwrap()
                .is_none()
        );
        // An existing node: NodeExists, exit 1.
        let ran = run(c, &["create", &root]).await;
        assert_eq!(ran.code, Some(1));
        assert_eq!(ran.stderr.trim(), format!("error: NodeExists: {root}"));
        let mut names = client.get_children(&root).await.unwrap();
        names.sort();
        assert_eq!(names.len(), 5, "{names:?}");
        server.shutdown().await;
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_ephemeral_held_lives_until_the_command_is_stopped(server) {
        let root = unique("cli-hold");
        let client = connect(&server.connect).await;
        client
            .create(&root, b"", &CreateOptions::persistent())
            .await
            .unwrap();
        let node = format!("{root}/e");
        let mut child = shepherd()
            .args(["create", "-e", "--hold", &node, "--server", &server.connect])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        let stdout = child.stdout.take().expect("stdout");
        let line = within(
            "the Created line",
            tokio::task::spawn_blocking(move || {
                let mut line = String::new();
                BufReader::new(stdout).read_line(&mut line).map(|_| line)
            }),
        )
        .await
        .unwrap()
        .unwrap();
        assert_eq!(line, format!("Created {node}\n"));
        let stat = client.exists(&node).await.unwrap().expect("held");
        assert_ne!(stat.ephemeral_owner, 0);
        // SIGINT: the command closes its session, and the node goes with it.
        let status = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .expect("kill -INT");
        assert!(status.success());
        let code = within(
            "the held command to exit",
            tokio::task::spawn_blocking(move || child.wait()),
        )
        .await
        .unwrap()
        .unwrap();
        assert_eq!(code.code(), Some(0));
        wait_children(&client, &root, |c| c.is_empty()).await;
        server.shutdown().await;
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn set_checks_the_version_and_delete_removes_subtrees(server) {
        let root = unique("cli-set");
        let client = connect(&server.connect).await;
        let c = &server.connect;
        client
            .create(&root, b"v0", &CreateOptions::persistent())
            .await
            .unwrap();
        assert_eq!(run(c, &["set", &root, "v1"]).await.ok(), "");
        let ran = run(c, &["set", "-v", "0", &root, "v2"]).await;
        assert_eq!(ran.code, Some(1));
        assert_eq!(ran.stderr.trim(), format!("error: BadVersion: {root}"));
        let json = run(c, &["set", "--json", "-v", "1", &root, "v2"])
            .await
            .json();
        assert_eq!(json["stat"]["version"], 2);
        assert_eq!(client.get_data(&root).await.unwrap().0, b"v2");
        for i in 0..3 {
            run(c, &["create", "-p", &format!("{root}/d{i}/x/y")])
                .await
                .ok();
        }
        let ran = run(c, &["delete", &root]).await;
        assert_eq!(ran.code, Some(1));
        assert_eq!(ran.stderr.trim(), format!("error: NotEmpty: {root}"));
        let ran = run(c, &["delete", "-v", "7", &format!("{root}/d0/x/y")]).await;
        assert_eq!(
            ran.stderr.trim(),
            format!("error: BadVersion: {root}/d0/x/y")
        );
        run(c, &["delete", "-v", "0", &format!("{root}/d0/x/y")])
            .await
            .ok();
        let json = run(c, &["delete", "-r", "--json", &root]).await.json();
        assert_eq!(json["deleted"], 9, "{}", server.name);
        assert!(client.exists(&root).await.unwrap().is_none());
        server.shutdown().await;
    }
}
