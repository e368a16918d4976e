//! `ls`, `tree`, `get` and `stat`: what they print, as text and JSON, and `NoNode` (exit 1)
//! for a missing node.

use shepherd_client::CreateOptions;
use shepherd_testkit::on_both_servers;
use shepherd_testkit::{connect, unique};

use crate::run;

/// `root` with children `b`, `a` (data "x") and `a/c`.
async fn seed(connect_string: &str, root: &str) -> shepherd_client::Client {
    let client = connect(connect_string).await;
    let p = CreateOptions::persistent();
    client.create(root, b"top", &p).await.expect("root");
    client
        .create(&format!("{root}/b"), b"", &p)
        .await
        .expect("b");
    client
        .create(&format!("{root}/a"), b"x", &p)
        .await
        .expect("a");
    client
        .create(&format!("{root}/a/c"), b"", &p)
        .await
        .expect("c");
    client
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ls_lists_sorted_children_and_json_carries_the_stat(server) {
        let root = unique("cli-ls");
        let _client = seed(&server.connect, &root).await;
        let ran = run(&server.connect, &["ls", &root]).await;
        assert_eq!(ran.ok(), "a\nb\n", "{}", server.name);
        let json = run(&server.connect, &["ls", "--json", &root]).await.json();
        assert_eq!(json["children"], serde_json::json!(["a", "b"]));
        assert_eq!(json["stat"]["numChildren"], 2, "{}", server.name);
        let with_stat = run(&server.connect, &["ls", "-s", &root]).await;
        assert!(with_stat.ok().contains("numChildren = 2"), "{with_stat:?}");
        server.shutdown().await;
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn tree_draws_the_subtree_in_order(server) {
        let root = unique("cli-tree");
        let _client = seed(&server.connect, &root).await;
        let ran = run(&server.connect, &["tree", &root]).await;
        assert_eq!(
            ran.ok(),
            format!("{root}\n├── a\n│   └── c\n└── b\n"),
            "{}",
            server.name
        );
        let lines = run(&server.connect, &["tree", "--json", &root]).await;
        let paths: Vec<String> = lines
            .ok()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["path"].to_string())
            .collect();
        assert_eq!(
            paths,
            [
                &root,
                &format!("{root}/a"),
                &format!("{root}/a/c"),
                &format!("{root}/b")
            ]
            .map(|p| format!("{p:?}"))
        );
        server.shutdown().await;
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn get_and_stat_print_data_and_stat_and_fail_with_no_node(server) {
        let root = unique("cli-get");
        let client = seed(&server.connect, &root).await;
        let (_, stat) = client.get_data(&root).await.expect("stat");
        assert_eq!(run(&server.connect, &["get", &root]).await.ok(), "top\n");
        let json = run(&server.connect, &["get", "--json", &root]).await.json();
        assert_eq!(json["data"], "top");
        assert_eq!(json["encoding"], "utf8");
        assert_eq!(
            json["stat"]["czxid"],
            format!("{:#x}", stat.czxid),
            "{}",
            server.name
        );
        let text = run(&server.connect, &["stat", &root]).await;
        assert!(
            text.ok().contains(&format!("cZxid = 0x{:x}\n", stat.czxid))
                && text.ok().contains("dataLength = 3\n")
                && text.ok().contains("numChildren = 2\n"),
            "{text:?}"
        );
        let json = run(&server.connect, &["stat", "--json", &root])
            .await
            .json();
        assert_eq!(json["stat"]["mzxid"], format!("{:#x}", stat.mzxid));
        for command in ["get", "stat", "ls"] {
            let missing = format!("{root}/nope");
            let ran = run(&server.connect, &[command, &missing]).await;
            assert_eq!(ran.code, Some(1), "{command}: {ran:?}");
            assert_eq!(ran.stderr.trim(), format!("error: NoNode: {missing}"));
            assert!(ran.stdout.is_empty());
        }
        server.shutdown().await;
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_chroot_in_the_server_string_is_honoured(server) {
        let root = unique("cli-chroot");
        let _client = seed(&server.connect, &root).await;
        let chrooted = format!("{}{root}", server.connect);
        assert_eq!(run(&chrooted, &["ls", "/"]).await.ok(), "a\nb\n");
        assert_eq!(run(&chrooted, &["get", "/a"]).await.ok(), "x\n");
        server.shutdown().await;
    }
}
