//! A chroot in the connect string, applied by the client to every path it sends and receives.

use crate::*;
use shepherd_testkit::on_both_servers;

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn chroot_is_applied_by_the_client(server) {
        everywhere(server, "chroot", chroot_is_applied_by_the_client_on).await;
    }
}

async fn chroot_is_applied_by_the_client_on(ctx: Ctx) {
    let plain = ctx.client().await;
    let base = ctx.path("app");
    let (base_stat, _) = plain.create(&base, b"base", &PERSISTENT).await.unwrap();
    let client = connect(&format!("{}{base}", ctx.connect)).await;
    assert_eq!(client.path(), base);

    let (stat, _) = client.create("/x", b"1", &PERSISTENT).await.unwrap();
    assert_eq!(
        plain.get_data(&ctx.path("app/x")).await.unwrap(),
        (b"1".to_vec(), stat)
    );
    let (_, sequence) = client.create("/s-", b"", &SEQUENTIAL).await.unwrap();
    assert_eq!(sequence.into_i64(), 1);
    assert!(
        plain
            .check_stat(&ctx.path("app/s-0000000001"))
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(client.get_data("/").await.unwrap().0, b"base");
    assert_eq!(
        client.check_stat("/").await.unwrap().map(|s| s.czxid),
        Some(base_stat.czxid)
    );
    assert_eq!(
        sorted(client.list_children("/").await.unwrap()),
        ["s-0000000001", "x"]
    );
    assert_eq!(client.count_descendants_number("/").await.unwrap(), 2);
    client.set_data("/x", b"2", None).await.unwrap();
    assert_eq!(client.get_acl("/x").await.unwrap().1.version, 1);
    client.sync("/x").await.unwrap();

    // Events come back relative to the chroot.
    let (_, created) = client.check_and_watch_stat("/y").await.unwrap();
    let mut recursive = client
        .watch("/", AddWatchMode::PersistentRecursive)
        .await
        .unwrap();
    plain
        .create(&ctx.path("app/y"), b"", &PERSISTENT)
        .await
        .unwrap();
    assert_eq!(
        within("NodeCreated", oneshot(created)).await,
        event(EventType::NodeCreated, "/y")
    );
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeCreated, "/y")
    );
    let (_, children) = client.list_and_watch_children("/").await.unwrap();
    plain
        .create(&ctx.path("app/z"), b"", &PERSISTENT)
        .await
        .unwrap();
    assert_eq!(
        within("NodeChildrenChanged", oneshot(children)).await,
        event(EventType::NodeChildrenChanged, "/")
    );
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeCreated, "/z")
    );

    // multi results and ephemerals are relative too.
    let mut writer = client.new_multi_writer();
    writer.add_create("/m", b"", &PERSISTENT).unwrap();
    writer.add_create("/q-", b"", &SEQUENTIAL).unwrap();
    writer.add_delete("/z", None).unwrap();
    let results = within("multi", writer.commit()).await.unwrap();
    assert_eq!(
        results,
        vec![
            MultiWriteResult::Create {
                path: "/m".to_string(),
                stat: invalid_stat(),
            },
            MultiWriteResult::Create {
                path: "/q-0000000005".to_string(),
                stat: invalid_stat(),
            },
            MultiWriteResult::Delete,
        ]
    );
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeCreated, "/m")
    );
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeCreated, "/q-0000000005")
    );
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeDeleted, "/z")
    );
    client.create("/e", b"", &EPHEMERAL).await.unwrap();
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeCreated, "/e")
    );
    assert_eq!(client.list_ephemerals("/").await.unwrap(), ["/e"]);
    assert_eq!(
        plain.list_ephemerals("/").await.unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        client.delete("/", None).await.unwrap_err(),
        Error::BadArguments(&"can not delete root node")
    );

    // Client::chroot shares the session of the client it comes from.
    let rooted = plain.clone().chroot(base.as_str()).unwrap();
    assert_eq!(rooted.session_id(), plain.session_id());
    assert_eq!(rooted.get_data("/x").await.unwrap().0, b"2");
    rooted.create("/own", b"", &EPHEMERAL).await.unwrap();
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeCreated, "/own")
    );
    assert_eq!(
        plain.list_ephemerals(&ctx.root).await.unwrap(),
        [ctx.path("app/own")]
    );
    assert_eq!(rooted.list_ephemerals("/").await.unwrap(), ["/own"]);

    // The chroot node is neither created nor checked by the client.
    let nowhere = connect(&format!("{}{}", ctx.connect, ctx.path("nowhere"))).await;
    assert_eq!(nowhere.get_data("/").await.unwrap_err(), Error::NoNode);
    assert_eq!(
        nowhere.create("/a", b"", &PERSISTENT).await.unwrap_err(),
        Error::NoNode
    );
    barrier(&client).await;
    assert_no_event(&mut recursive, "recursive watch through the chroot");
}
