//! create in every mode (persistent, ephemeral, sequential, container, TTL), and the reaping
//! of containers and TTL nodes.

use crate::*;
use shepherd_testkit::on_both_servers;

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn create_in_every_mode(server) {
        everywhere(server, "create", create_in_every_mode_on).await;
    }
}

async fn create_in_every_mode_on(ctx: Ctx) {
    let client = ctx.client().await;
    let me = client.session_id().0;
    let p = ctx.path("p");

    let (stat, sequence) = client.create(&p, b"hello", &PERSISTENT).await.unwrap();
    assert_eq!(sequence.into_i64(), -1);
    assert!(stat.czxid > 0, "{stat:?}");
    assert_eq!(
        stat,
        Stat {
            czxid: stat.czxid,
            mzxid: stat.czxid,
            pzxid: stat.czxid,
            ctime: stat.ctime,
            mtime: stat.ctime,
            version: 0,
            cversion: 0,
            aversion: 0,
            ephemeral_owner: 0,
            data_length: 5,
            num_children: 0,
        }
    );
    assert!(stat.ctime > 0);
    assert_eq!(
        client.get_data(&p).await.unwrap(),
        (b"hello".to_vec(), stat)
    );
    let (children, root) = client.get_children(&ctx.root).await.unwrap();
    assert_eq!(children, vec!["p".to_string()]);
    assert_eq!((root.num_children, root.cversion), (1, 1));
    assert_eq!(root.pzxid, stat.czxid);

    // Children in every mode. The sequence suffix is the parent's count of children ever
    // created, taken before the create (docs/protocol.md §8.1).
    let (a, _) = client
        .create(&ctx.path("p/a"), b"", &PERSISTENT)
        .await
        .unwrap();
    assert_eq!(a.data_length, 0);
    let (s, sequence) = client
        .create(&ctx.path("p/s-"), b"", &SEQUENTIAL)
        .await
        .unwrap();
    assert_eq!(sequence.into_i64(), 1);
    assert_eq!(sequence.to_string(), "0000000001");
    assert_eq!(s.ephemeral_owner, 0);
    let (e, sequence) = client
        .create(
            &ctx.path("p/e-"),
            b"",
            &CreateMode::EphemeralSequential.with_acls(Acls::anyone_all()),
        )
        .await
        .unwrap();
    assert_eq!(sequence.into_i64(), 2);
    assert_eq!(e.ephemeral_owner, me);
    let (eph, _) = client
        .create(&ctx.path("p/eph"), b"x", &EPHEMERAL)
        .await
        .unwrap();
    assert_eq!((eph.ephemeral_owner, eph.data_length), (me, 1));
    // Containers (op 19) and TTL nodes (op 21) show ephemeralOwner 0 to clients (docs/protocol.md §7).
    let (container, _) = client
        .create(&ctx.path("p/box"), b"", &CONTAINER)
        .await
        .unwrap();
    assert_eq!((container.ephemeral_owner, container.version), (0, 0));
    assert_eq!(container.mzxid, container.czxid);
    let (ttl, sequence) = client
        .create(
            &ctx.path("p/ttl"),
            b"t",
            &ttl_options(CreateMode::Persistent, HOUR),
        )
        .await
        .unwrap();
    assert_eq!(sequence.into_i64(), -1);
    assert_eq!((ttl.ephemeral_owner, ttl.data_length), (0, 1));
    let (ttls, sequence) = client
        .create(
            &ctx.path("p/ttls-"),
            b"",
            &ttl_options(CreateMode::PersistentSequential, HOUR),
        )
        .await
        .unwrap();
    assert_eq!(sequence.into_i64(), 6);
    assert_eq!(ttls.ephemeral_owner, 0);
    for (path, created) in [
        ("p/box", container),
        ("p/ttl", ttl),
        ("p/e-0000000002", e),
        ("p/ttls-0000000006", ttls),
    ] {
        assert_eq!(
            client.check_stat(&ctx.path(path)).await.unwrap(),
            Some(created)
        );
    }
    assert_eq!(
        sorted(client.list_children(&p).await.unwrap()),
        [
            "a",
            "box",
            "e-0000000002",
            "eph",
            "s-0000000001",
            "ttl",
            "ttls-0000000006"
        ]
    );
    let (_, parent) = client.get_children(&p).await.unwrap();
    assert_eq!((parent.num_children, parent.cversion), (7, 7));
    assert_eq!(parent.pzxid, ttls.czxid);
    assert_eq!(
        parent.version, 0,
        "child changes leave the data version alone"
    );
    assert_eq!(parent.mzxid, stat.mzxid);

    // A delete raises cversion but not the sequence counter.
    client.delete(&ctx.path("p/a"), None).await.unwrap();
    let (_, sequence) = client
        .create(&ctx.path("p/s-"), b"", &SEQUENTIAL)
        .await
        .unwrap();
    assert_eq!(sequence.into_i64(), 7);
    // A sequential create may end in '/': the name is then the bare suffix (docs/protocol.md §6.1).
    let (_, sequence) = client
        .create(&format!("{p}/"), b"", &SEQUENTIAL)
        .await
        .unwrap();
    assert_eq!(sequence.into_i64(), 8);
    assert_eq!(
        client
            .check_stat(&ctx.path("p/0000000008"))
            .await
            .unwrap()
            .map(|s| s.czxid > 0),
        Some(true)
    );
    let (_, parent) = client.get_children(&p).await.unwrap();
    assert_eq!((parent.num_children, parent.cversion), (8, 10));

    // Errors from the server.
    assert_eq!(
        client.create(&p, b"", &PERSISTENT).await.unwrap_err(),
        Error::NodeExists
    );
    assert_eq!(
        client
            .create(&ctx.path("missing/x"), b"", &PERSISTENT)
            .await
            .unwrap_err(),
        Error::NoNode
    );
    assert_eq!(
        client
            .create(&ctx.path("p/eph/x"), b"", &PERSISTENT)
            .await
            .unwrap_err(),
        Error::NoChildrenForEphemerals
    );
    assert_eq!(
        client
            .create(
                &ctx.path("p/auth"),
                b"",
                &CreateMode::Persistent.with_acls(Acls::creator_all())
            )
            .await
            .unwrap_err(),
        Error::InvalidAcl,
        "auth ACL without an authenticated identity"
    );
    let someone = [acl(Permission::ALL, "world", "someone")];
    assert_eq!(
        client
            .create(
                &ctx.path("p/someone"),
                b"",
                &CreateMode::Persistent.with_acls(Acls::new(&someone))
            )
            .await
            .unwrap_err(),
        Error::InvalidAcl
    );
    let bad_mask = [acl(Permission::ALL, "ip", "127.0.0.1/33")];
    assert_eq!(
        client
            .create(
                &ctx.path("p/mask"),
                b"",
                &CreateMode::Persistent.with_acls(Acls::new(&bad_mask))
            )
            .await
            .unwrap_err(),
        Error::InvalidAcl
    );
    // Errors the crate raises without asking the server.
    assert_eq!(
        client
            .create(
                &ctx.path("p/x"),
                b"",
                &ttl_options(CreateMode::Ephemeral, HOUR)
            )
            .await
            .unwrap_err(),
        Error::BadArguments(&"ttl can only be specified with persistent node")
    );
    assert_eq!(
        client
            .create(
                &ctx.path("p/x"),
                b"",
                &CreateMode::Persistent.with_acls(Acls::new(&[]))
            )
            .await
            .unwrap_err(),
        Error::InvalidAcl
    );
    assert_eq!(
        client.create("/", b"", &PERSISTENT).await.unwrap_err(),
        Error::BadArguments(&"can not create root node")
    );
    // Nothing was created by the failed calls.
    let (_, parent) = client.get_children(&p).await.unwrap();
    assert_eq!((parent.num_children, parent.cversion), (8, 10));

    // Told the server is 3.4, the crate creates with op 1, which returns no Stat.
    let old = within(
        "connect",
        zk::Client::connector()
            .with_server_version(3, 4, 0)
            .connect(&ctx.connect),
    )
    .await
    .unwrap();
    let (stat, _) = old
        .create(&ctx.path("v34"), b"", &PERSISTENT)
        .await
        .unwrap();
    assert_eq!(stat, invalid_stat());
    let (stat, sequence) = old
        .create(&ctx.path("v34s-"), b"", &SEQUENTIAL)
        .await
        .unwrap();
    assert_eq!((stat, sequence.into_i64()), (invalid_stat(), 2));
    assert!(
        old.check_stat(&ctx.path("v34s-0000000002"))
            .await
            .unwrap()
            .is_some()
    );

    // mkdir -p, a crate helper over create.
    client.mkdir(&ctx.path("m/n/o"), &PERSISTENT).await.unwrap();
    client.mkdir(&ctx.path("m/n/o"), &PERSISTENT).await.unwrap();
    assert_eq!(
        client
            .count_descendants_number(&ctx.path("m"))
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        client.mkdir(&ctx.path("q"), &EPHEMERAL).await.unwrap_err(),
        Error::BadArguments(&"directory node must not be ephemeral")
    );
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn container_is_reaped_after_its_last_child_goes(server) {
        everywhere(server,
            "container",
            container_is_reaped_after_its_last_child_goes_on,
        )
        .await;
    }
}

async fn container_is_reaped_after_its_last_child_goes_on(ctx: Ctx) {
    let client = ctx.client().await;
    let container = ctx.path("box");
    client.create(&container, b"", &CONTAINER).await.unwrap();
    client
        .create(&ctx.path("box/child"), b"", &PERSISTENT)
        .await
        .unwrap();
    let (stat, deleted) = client.check_and_watch_stat(&container).await.unwrap();
    assert_eq!(stat.map(|s| s.num_children), Some(1));
    let (_, empty_again) = client.list_and_watch_children(&container).await.unwrap();
    let (_, root_children) = client.list_and_watch_children(&ctx.root).await.unwrap();
    client.delete(&ctx.path("box/child"), None).await.unwrap();
    assert_eq!(
        within("the container's NodeChildrenChanged", empty_again.changed()).await,
        event(EventType::NodeChildrenChanged, &container)
    );
    // The reaper runs every second on both servers (checkIntervalMs=1000); its delete fires
    // like any other (docs/protocol.md §8.3).
    assert_eq!(
        within("the container's NodeDeleted", deleted.changed()).await,
        event(EventType::NodeDeleted, &container)
    );
    assert_eq!(
        within("the root's NodeChildrenChanged", root_children.changed()).await,
        event(EventType::NodeChildrenChanged, &ctx.root)
    );
    assert_eq!(client.check_stat(&container).await.unwrap(), None);
    let (children, root) = client.get_children(&ctx.root).await.unwrap();
    assert!(children.is_empty());
    assert_eq!((root.num_children, root.cversion), (0, 2));
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ttl_node_expires(server) {
        everywhere(server, "ttl", ttl_node_expires_on).await;
    }
}

async fn ttl_node_expires_on(ctx: Ctx) {
    let client = ctx.client().await;
    let short = ttl_options(CreateMode::Persistent, Duration::from_millis(200));
    // `held` is older than `lone`, so it is past its TTL whenever `lone` is; its child keeps it.
    let held = ctx.path("held");
    client.create(&held, b"", &short).await.unwrap();
    client
        .create(&ctx.path("held/child"), b"", &PERSISTENT)
        .await
        .unwrap();
    let lone = ctx.path("lone");
    client.create(&lone, b"", &short).await.unwrap();
    let (stat, deleted) = client.check_and_watch_stat(&lone).await.unwrap();
    assert!(stat.is_some());
    assert_eq!(
        within("the TTL node's NodeDeleted", deleted.changed()).await,
        event(EventType::NodeDeleted, &lone)
    );
    assert_eq!(client.check_stat(&lone).await.unwrap(), None);
    let stat = client.check_stat(&held).await.unwrap();
    assert_eq!(
        stat.map(|s| s.num_children),
        Some(1),
        "a TTL node with children stays"
    );
    let (_, deleted) = client.check_and_watch_stat(&held).await.unwrap();
    client.delete(&ctx.path("held/child"), None).await.unwrap();
    assert_eq!(
        within("the emptied TTL node's NodeDeleted", deleted.changed()).await,
        event(EventType::NodeDeleted, &held)
    );
}
