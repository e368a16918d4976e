//! `dump` and `load`: a subtree as JSON lines (parents first, base64 or UTF-8 data, stat, ACL,
//! ephemeral flag) and back; existing nodes fail or are skipped; ephemerals are skipped with a
//! note.

use shepherd_client::{Acl, CreateMode, CreateOptions, Id, perms};
use shepherd_testkit::on_both_servers;
use shepherd_testkit::{connect, unique, within};

use crate::{run, run_with_input};

fn lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dump_then_load_restores_the_tree(server) {
        let root = unique("cli-dump");
        let c = &server.connect;
        let client = connect(c).await;
        let p = CreateOptions::persistent();
        client.create(&root, b"top", &p).await.unwrap();
        client
            .create(&format!("{root}/bin"), &[0, 159, 255], &p)
            .await
            .unwrap();
        let read_only = p.clone().with_acl(vec![Acl {
            perms: perms::READ | perms::DELETE,
            id: Id::new("world", "anyone"),
        }]);
        client
            .create(&format!("{root}/ro"), b"r", &read_only)
            .await
            .unwrap();
        client.create(&format!("{root}/a"), b"", &p).await.unwrap();
        client
            .create(&format!("{root}/a/b"), b"text", &p)
            .await
            .unwrap();
        let eph = CreateOptions::new(CreateMode::Ephemeral);
        client
            .create(&format!("{root}/eph"), b"", &eph)
            .await
            .unwrap();

        let dump = run(c, &["dump", &root]).await;
        let nodes = lines(dump.ok());
        let paths: Vec<&str> = nodes.iter().map(|n| n["path"].as_str().unwrap()).collect();
        let want: Vec<String> = ["", "/a", "/a/b", "/bin", "/eph", "/ro"]
            .iter()
            .map(|s| format!("{root}{s}"))
            .collect();
        assert_eq!(paths, want, "{}", server.name);
        assert_eq!(nodes[0]["encoding"], "base64");
        assert_eq!(nodes[0]["data"], "dG9w");
        assert_eq!(nodes[4]["ephemeral"], true);
        assert_eq!(
            nodes[4]["stat"]["ephemeralOwner"],
            format!("{:#x}", client.session_id())
        );
        assert_eq!(nodes[5]["acl"][0]["perms"], "dr");
        let utf8 = lines(run(c, &["dump", "--utf8", &root]).await.ok());
        assert_eq!(utf8[2]["data"], "text");
        assert_eq!(utf8[2]["encoding"], "utf8");
        assert_eq!(utf8[3]["encoding"], "base64", "binary data stays base64");

        run(c, &["delete", "-r", &root]).await.ok();
        let loaded = run_with_input(c, &["load"], Some(dump.stdout.clone().into_bytes())).await;
        assert_eq!(
            loaded.ok(),
            "created 5 nodes; skipped 0 existing, 1 ephemeral\n"
        );
        assert!(
            loaded
                .stderr
                .contains(&format!("note: skipped ephemeral {root}/eph")),
            "{loaded:?}"
        );
        assert_eq!(
            client.get_data(&format!("{root}/bin")).await.unwrap().0,
            [0, 159, 255]
        );
        assert_eq!(
            client.get_acl(&format!("{root}/ro")).await.unwrap().0,
            read_only.acl
        );
        let again = lines(run(c, &["dump", &root]).await.ok());
        let strip =
            |n: &serde_json::Value| (n["path"].clone(), n["data"].clone(), n["acl"].clone());
        let before: Vec<_> = nodes
            .iter()
            .filter(|n| n["ephemeral"] == false)
            .map(strip)
            .collect();
        let after: Vec<_> = again.iter().map(strip).collect();
        assert_eq!(before, after);

        // Loaded again: existing nodes fail the load, or are skipped.
        let input = Some(dump.stdout.clone().into_bytes());
        let failed = run_with_input(c, &["load", "-"], input.clone()).await;
        assert_eq!(failed.code, Some(1));
        assert!(
            failed
                .stderr
                .contains(&format!("error: NodeExists: {root}")),
            "{failed:?}"
        );
        let skipped = run_with_input(c, &["load", "--existing", "skip", "--json"], input).await;
        assert_eq!(skipped.json()["existing"], 5);
        server.shutdown().await;
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_bad_dump_line_is_a_usage_error_naming_its_line(server) {
        let root = unique("cli-badload");
        let input = format!(
            "{{\"path\":\"{root}\",\"data\":\"\",\"encoding\":\"utf8\",\"stat\":{{\"czxid\":0,\"mzxid\":0,\"ctime\":0,\"mtime\":0,\"version\":0,\"cversion\":0,\"aversion\":0,\"ephemeralOwner\":0,\"dataLength\":0,\"numChildren\":0,\"pzxid\":0}},\"acl\":[],\"ephemeral\":false}}\nnot json\n"
        );
        let ran = run_with_input(&server.connect, &["load"], Some(input.into_bytes())).await;
        assert_eq!(ran.code, Some(2), "{ran:?}");
        assert!(ran.stderr.starts_with("error: line 2:"), "{ran:?}");
        server.shutdown().await;
    }
}

on_both_servers! {
    /// A dump line's `kind` (container, TTL with its `ttl`) is created as such, and an ephemeral
    /// line becomes persistent with `--ephemerals persistent`. The kinds show by what the server
    /// does with them: the reaper (1 s here and on `.ci/real-zk.sh`'s ZooKeeper) removes the
    /// emptied container and the expired TTL node, and leaves the plain node beside them.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn load_creates_containers_ttl_nodes_and_ephemerals_as_asked(server) {
        let root = unique("cli-kinds");
        let line = |path: &str, extra: &str, ephemeral: bool| {
            format!(
                "{{\"path\":\"{root}{path}\",\"data\":\"\",\"encoding\":\"utf8\",\"stat\":{{\"czxid\":0,\"mzxid\":0,\"ctime\":0,\"mtime\":0,\"version\":0,\"cversion\":0,\"aversion\":0,\"ephemeralOwner\":0,\"dataLength\":0,\"numChildren\":0,\"pzxid\":0}},\"acl\":[],\"ephemeral\":{ephemeral}{extra}}}\n"
            )
        };
        let input = [
            line("", "", false),
            line("/box", ",\"kind\":\"container\"", false),
            line("/box/item", "", false),
            line("/short", ",\"kind\":\"ttl\",\"ttl\":1", false),
            line("/was-ephemeral", "", true),
        ]
        .concat();
        let c = &server.connect;
        let loaded = run_with_input(
            c,
            &["load", "--ephemerals", "persistent"],
            Some(input.into_bytes()),
        )
        .await;
        assert_eq!(
            loaded.ok(),
            "created 5 nodes; skipped 0 existing, 0 ephemeral\n",
            "{}",
            server.name
        );
        let client = connect(c).await;
        let owner = client
            .exists(&format!("{root}/was-ephemeral"))
            .await
            .unwrap();
        assert_eq!(owner.map(|s| s.ephemeral_owner), Some(0), "persistent now");
        // Emptied, the container goes; the TTL node, never touched, expires.
        for path in ["/box", "/short"] {
            let path = format!("{root}{path}");
            if path.ends_with("/box") {
                client.delete(&format!("{path}/item"), None).await.unwrap();
            }
            let (stat, watcher) = client.exists_w(&path).await.unwrap();
            if stat.is_some() {
                within(&format!("{path} reaped"), watcher).await.unwrap();
            }
        }
        assert!(
            client.exists(&root).await.unwrap().is_some(),
            "the plain node stays"
        );
        // A ttl line without its ttl is refused, naming the line.
        let bad = run_with_input(
            c,
            &["load"],
            Some(line("/t", ",\"kind\":\"ttl\"", false).into_bytes()),
        )
        .await;
        assert_eq!(bad.code, Some(2), "{bad:?}");
        assert!(bad.stderr.contains("line 1: a ttl node needs"), "{bad:?}");
        server.shutdown().await;
    }
}
