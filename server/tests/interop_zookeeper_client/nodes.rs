//! Reading and writing single nodes: delete, exists, getData and setData with versions; then
//! children, descendants, ephemerals and sync.

use crate::*;
use shepherd_testkit::on_both_servers;

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn delete_checks_version_and_children(server) {
        everywhere(server, "delete", delete_checks_version_and_children_on).await;
    }
}

async fn delete_checks_version_and_children_on(ctx: Ctx) {
    let client = ctx.client().await;
    let d = ctx.path("d");
    client.create(&d, b"", &PERSISTENT).await.unwrap();
    let (child, _) = client
        .create(&ctx.path("d/c"), b"", &PERSISTENT)
        .await
        .unwrap();
    assert_eq!(client.delete(&d, None).await.unwrap_err(), Error::NotEmpty);
    assert_eq!(
        client.delete(&ctx.path("d/c"), Some(5)).await.unwrap_err(),
        Error::BadVersion
    );
    client.set_data(&ctx.path("d/c"), b"1", None).await.unwrap();
    assert_eq!(
        client.delete(&ctx.path("d/c"), Some(0)).await.unwrap_err(),
        Error::BadVersion
    );
    client.delete(&ctx.path("d/c"), Some(1)).await.unwrap();
    assert_eq!(
        client.delete(&ctx.path("d/c"), None).await.unwrap_err(),
        Error::NoNode
    );
    assert_eq!(
        client
            .delete(&ctx.path("missing/c"), None)
            .await
            .unwrap_err(),
        Error::NoNode
    );
    let (children, parent) = client.get_children(&d).await.unwrap();
    assert!(children.is_empty());
    assert_eq!((parent.num_children, parent.cversion), (0, 2));
    assert!(parent.pzxid > child.czxid, "delete moves pzxid: {parent:?}");
    let later = client.set_data(&d, b"x", None).await.unwrap();
    assert!(parent.pzxid < later.mzxid);
    assert_eq!(later.pzxid, parent.pzxid, "setData leaves pzxid alone");
    // System nodes cannot be deleted: the server answers BadArguments (docs/protocol.md §6.3).
    assert_eq!(
        client.delete("/zookeeper", None).await.unwrap_err(),
        Error::BadArguments(&"server error")
    );
    assert_eq!(
        client.delete("/", None).await.unwrap_err(),
        Error::BadArguments(&"can not delete root node")
    );
    client.delete(&d, Some(1)).await.unwrap();
    assert_eq!(client.check_stat(&d).await.unwrap(), None);
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn exists_get_and_set_data(server) {
        everywhere(server, "data", exists_get_and_set_data_on).await;
    }
}

async fn exists_get_and_set_data_on(ctx: Ctx) {
    let client = ctx.client().await;
    let n = ctx.path("n");
    assert_eq!(client.check_stat(&n).await.unwrap(), None);
    assert_eq!(client.get_data(&n).await.unwrap_err(), Error::NoNode);
    assert_eq!(
        client.set_data(&n, b"x", None).await.unwrap_err(),
        Error::NoNode
    );

    let (created, _) = client.create(&n, b"", &PERSISTENT).await.unwrap();
    assert_eq!(client.get_data(&n).await.unwrap(), (Vec::new(), created));
    assert_eq!(client.check_stat(&n).await.unwrap(), Some(created));

    let first = client.set_data(&n, b"abc", None).await.unwrap();
    assert_eq!(
        first,
        Stat {
            mzxid: first.mzxid,
            mtime: first.mtime,
            version: 1,
            data_length: 3,
            ..created
        }
    );
    assert!(first.mzxid > created.mzxid);
    assert!(first.mtime >= created.mtime);
    // Same data again: the version still moves.
    let second = client.set_data(&n, b"abc", None).await.unwrap();
    assert_eq!(second.version, 2);
    assert!(second.mzxid > first.mzxid);
    assert_eq!(
        client.set_data(&n, b"zz", Some(1)).await.unwrap_err(),
        Error::BadVersion
    );
    let third = client.set_data(&n, b"zz", Some(2)).await.unwrap();
    assert_eq!((third.version, third.data_length), (3, 2));
    assert_eq!(client.get_data(&n).await.unwrap(), (b"zz".to_vec(), third));
    assert_eq!(client.check_stat(&n).await.unwrap(), Some(third));

    // A large value round-trips whole.
    let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let stat = client.set_data(&n, &big, None).await.unwrap();
    assert_eq!(stat.data_length, 200_000);
    assert_eq!(client.get_data(&n).await.unwrap().0, big);
    // Back to empty.
    let stat = client.set_data(&n, b"", None).await.unwrap();
    assert_eq!((stat.version, stat.data_length), (5, 0));
    assert_eq!(client.get_data(&n).await.unwrap().0, Vec::<u8>::new());

    // The root and /zookeeper exist; /zookeeper/config is read-only (docs/protocol.md §6.4, §16).
    assert!(client.check_stat("/").await.unwrap().is_some());
    assert!(client.check_stat("/zookeeper").await.unwrap().is_some());
    assert_eq!(
        client
            .set_data("/zookeeper/config", b"x", None)
            .await
            .unwrap_err(),
        Error::NoAuth
    );
}

// ---- children, descendants, ephemerals, sync ----------------------------------------------

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn children_descendants_and_ephemerals(server) {
        everywhere(server, "children", children_descendants_and_ephemerals_on).await;
    }
}

async fn children_descendants_and_ephemerals_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    let p = ctx.path("p");
    client.create(&p, b"pp", &PERSISTENT).await.unwrap();
    for name in ["b", "a", "c"] {
        client
            .create(&ctx.path(&format!("p/{name}")), b"x", &PERSISTENT)
            .await
            .unwrap();
    }
    client
        .create(&ctx.path("p/a/deep"), b"", &PERSISTENT)
        .await
        .unwrap();

    assert_eq!(
        sorted(client.list_children(&p).await.unwrap()),
        ["a", "b", "c"]
    );
    let (children, stat) = client.get_children(&p).await.unwrap();
    assert_eq!(sorted(children), ["a", "b", "c"]);
    assert_eq!(
        (
            stat.num_children,
            stat.cversion,
            stat.data_length,
            stat.version
        ),
        (3, 3, 2, 0)
    );
    assert_eq!(stat, client.check_stat(&p).await.unwrap().unwrap());
    let (children, leaf) = client.get_children(&ctx.path("p/b")).await.unwrap();
    assert!(children.is_empty());
    assert_eq!((leaf.num_children, leaf.cversion), (0, 0));
    assert_eq!(
        client.list_children(&ctx.path("nope")).await.unwrap_err(),
        Error::NoNode
    );
    assert_eq!(
        client.get_children(&ctx.path("nope")).await.unwrap_err(),
        Error::NoNode
    );

    // getAllChildrenNumber counts every descendant, not the node itself (docs/protocol.md §6.5).
    assert_eq!(client.count_descendants_number(&p).await.unwrap(), 4);
    assert_eq!(client.count_descendants_number(&ctx.root).await.unwrap(), 5);
    assert_eq!(
        client
            .count_descendants_number(&ctx.path("p/b"))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        client
            .count_descendants_number(&ctx.path("nope"))
            .await
            .unwrap_err(),
        Error::NoNode
    );

    // getEphemerals: the caller's own, by string prefix (docs/protocol.md §6.9).
    for name in ["p/ea", "p/eb", "p/a/e"] {
        client
            .create(&ctx.path(name), b"", &EPHEMERAL)
            .await
            .unwrap();
    }
    other
        .create(&ctx.path("p/ec"), b"", &EPHEMERAL)
        .await
        .unwrap();
    assert_eq!(
        sorted(client.list_ephemerals(&ctx.path("p/e")).await.unwrap()),
        [ctx.path("p/ea"), ctx.path("p/eb")]
    );
    assert_eq!(
        sorted(client.list_ephemerals(&ctx.root).await.unwrap()),
        [ctx.path("p/a/e"), ctx.path("p/ea"), ctx.path("p/eb")]
    );
    assert_eq!(
        sorted(client.list_ephemerals("/").await.unwrap()),
        [ctx.path("p/a/e"), ctx.path("p/ea"), ctx.path("p/eb")],
        "the session has no other ephemerals"
    );
    assert_eq!(
        other.list_ephemerals(&ctx.root).await.unwrap(),
        [ctx.path("p/ec")]
    );
    assert_eq!(
        client.list_ephemerals(&ctx.path("nope")).await.unwrap(),
        Vec::<String>::new()
    );
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sync_needs_no_node(server) {
        everywhere(server, "sync", sync_needs_no_node_on).await;
    }
}

async fn sync_needs_no_node_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    client.sync(&ctx.root).await.unwrap();
    client.sync("/").await.unwrap();
    // No existence check (docs/protocol.md §6.8).
    client.sync(&ctx.path("missing/node")).await.unwrap();
    other
        .create(&ctx.path("n"), b"fresh", &PERSISTENT)
        .await
        .unwrap();
    client.sync(&ctx.path("n")).await.unwrap();
    assert_eq!(client.get_data(&ctx.path("n")).await.unwrap().0, b"fresh");
}
