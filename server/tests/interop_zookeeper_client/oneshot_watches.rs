//! One-shot watches: data, exist and child watches each fire once, and one event reaches every
//! watcher of it.

use crate::*;
use shepherd_testkit::on_both_servers;

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn data_watch_fires_once(server) {
        everywhere(server, "datawatch", data_watch_fires_once_on).await;
    }
}

async fn data_watch_fires_once_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    let me = client.session_id();
    let n = ctx.path("n");
    other.create(&n, b"v0", &PERSISTENT).await.unwrap();
    assert_eq!(
        client
            .get_and_watch_data(&ctx.path("nope"))
            .await
            .unwrap_err(),
        Error::NoNode
    );

    let (data, _, watcher) = client.get_and_watch_data(&n).await.unwrap();
    assert_eq!(data, b"v0");
    assert_eq!(watched_paths(&ctx, me).await, vec![n.clone()]);
    other.set_data(&n, b"v1", None).await.unwrap();
    assert_fires(oneshot(watcher), EventType::NodeDataChanged, &n).await;
    // Consumed by the first event: the server holds no watch any more (docs/protocol.md §9.1).
    assert_unwatched(&ctx, &client).await;
    other.set_data(&n, b"v2", None).await.unwrap();

    // Child changes do not trigger a data watch.
    let (data, _, watcher) = client.get_and_watch_data(&n).await.unwrap();
    assert_eq!(data, b"v2");
    let mut watcher = oneshot(watcher);
    other
        .create(&ctx.path("n/c"), b"", &PERSISTENT)
        .await
        .unwrap();
    other.delete(&ctx.path("n/c"), None).await.unwrap();
    barrier(&client).await;
    assert_pending(&mut watcher, "a data watch after child changes");
    other.set_data(&n, b"v3", None).await.unwrap();
    assert_fires(watcher, EventType::NodeDataChanged, &n).await;

    // Deletion fires NodeDeleted to a data watch.
    let (_, _, watcher) = client.get_and_watch_data(&n).await.unwrap();
    other.delete(&n, None).await.unwrap();
    assert_fires(oneshot(watcher), EventType::NodeDeleted, &n).await;
    assert_unwatched(&ctx, &client).await;
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn exist_watch_fires_once(server) {
        everywhere(server, "existwatch", exist_watch_fires_once_on).await;
    }
}

async fn exist_watch_fires_once_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    let me = client.session_id();
    let n = ctx.path("n");

    // exists registers a watch even on a missing node (docs/protocol.md §6.5).
    let (stat, watcher) = client.check_and_watch_stat(&n).await.unwrap();
    assert_eq!(stat, None);
    assert_eq!(watched_paths(&ctx, me).await, vec![n.clone()]);
    let (created, _) = other.create(&n, b"", &PERSISTENT).await.unwrap();
    assert_fires(oneshot(watcher), EventType::NodeCreated, &n).await;
    assert_unwatched(&ctx, &client).await;

    let (stat, watcher) = client.check_and_watch_stat(&n).await.unwrap();
    assert_eq!(stat, Some(created));
    let mut watcher = oneshot(watcher);
    other
        .create(&ctx.path("n/c"), b"", &PERSISTENT)
        .await
        .unwrap();
    barrier(&client).await;
    assert_pending(&mut watcher, "an exist watch after a child create");
    other.set_data(&n, b"1", None).await.unwrap();
    assert_fires(watcher, EventType::NodeDataChanged, &n).await;

    let (_, watcher) = client.check_and_watch_stat(&n).await.unwrap();
    other.delete(&ctx.path("n/c"), None).await.unwrap();
    other.delete(&n, None).await.unwrap();
    assert_fires(oneshot(watcher), EventType::NodeDeleted, &n).await;
    assert_unwatched(&ctx, &client).await;
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn child_watch_fires_once(server) {
        everywhere(server, "childwatch", child_watch_fires_once_on).await;
    }
}

async fn child_watch_fires_once_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    let p = ctx.path("p");
    other.create(&p, b"", &PERSISTENT).await.unwrap();
    assert_eq!(
        client
            .list_and_watch_children(&ctx.path("nope"))
            .await
            .unwrap_err(),
        Error::NoNode
    );
    assert_eq!(
        client
            .get_and_watch_children(&ctx.path("nope"))
            .await
            .unwrap_err(),
        Error::NoNode
    );

    let (children, watcher) = client.list_and_watch_children(&p).await.unwrap();
    assert!(children.is_empty());
    let mut watcher = oneshot(watcher);
    other.set_data(&p, b"x", None).await.unwrap();
    barrier(&client).await;
    assert_pending(&mut watcher, "a child watch after setData");
    other
        .create(&ctx.path("p/a"), b"", &PERSISTENT)
        .await
        .unwrap();
    assert_fires(watcher, EventType::NodeChildrenChanged, &p).await;
    // Consumed: a second create is not reported, and a grandchild never is.
    other
        .create(&ctx.path("p/b"), b"", &PERSISTENT)
        .await
        .unwrap();

    let (children, stat, watcher) = client.get_and_watch_children(&p).await.unwrap();
    assert_eq!(sorted(children), ["a", "b"]);
    assert_eq!((stat.num_children, stat.cversion, stat.version), (2, 2, 1));
    let mut watcher = oneshot(watcher);
    other
        .create(&ctx.path("p/a/g"), b"", &PERSISTENT)
        .await
        .unwrap();
    barrier(&client).await;
    assert_pending(&mut watcher, "a child watch after a grandchild create");
    other.delete(&ctx.path("p/b"), None).await.unwrap();
    assert_fires(watcher, EventType::NodeChildrenChanged, &p).await;

    // The watched node's own deletion.
    other.delete(&ctx.path("p/a/g"), None).await.unwrap();
    other.delete(&ctx.path("p/a"), None).await.unwrap();
    let (_, watcher) = client.list_and_watch_children(&p).await.unwrap();
    other.delete(&p, None).await.unwrap();
    assert_fires(oneshot(watcher), EventType::NodeDeleted, &p).await;
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_event_reaches_every_watcher(server) {
        everywhere(server, "fanout", one_event_reaches_every_watcher_on).await;
    }
}

async fn one_event_reaches_every_watcher_on(ctx: Ctx) {
    let client = ctx.client().await;
    let second = ctx.client().await;
    let writer = ctx.client().await;
    let n = ctx.path("n");
    writer.create(&n, b"", &PERSISTENT).await.unwrap();

    // Data, exist and child watches of one connection on one node, plus another connection's.
    let (_, _, data) = client.get_and_watch_data(&n).await.unwrap();
    let (_, exist) = client.check_and_watch_stat(&n).await.unwrap();
    let (_, child) = client.list_and_watch_children(&n).await.unwrap();
    let (_, _, elsewhere) = second.get_and_watch_data(&n).await.unwrap();
    writer.delete(&n, None).await.unwrap();
    for (what, watcher) in [
        ("data", data),
        ("exist", exist),
        ("child", child),
        ("second client", elsewhere),
    ] {
        assert_eq!(
            within(what, oneshot(watcher)).await,
            event(EventType::NodeDeleted, &n),
            "{what}"
        );
    }

    // Two one-shot watchers on one path get the same single event.
    writer.create(&n, b"", &PERSISTENT).await.unwrap();
    let (_, _, first) = client.get_and_watch_data(&n).await.unwrap();
    let (_, _, again) = client.get_and_watch_data(&n).await.unwrap();
    writer.set_data(&n, b"1", None).await.unwrap();
    assert_fires(oneshot(first), EventType::NodeDataChanged, &n).await;
    assert_fires(oneshot(again), EventType::NodeDataChanged, &n).await;
}
