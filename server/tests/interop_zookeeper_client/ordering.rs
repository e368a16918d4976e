//! Ordering: a watch event precedes the reply of any later request on the same connection (docs/protocol.md §9.6).

use crate::*;
use shepherd_testkit::on_both_servers;

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn event_precedes_later_reply(server) {
        everywhere(server, "ordering", event_precedes_later_reply_on).await;
    }
}

async fn event_precedes_later_reply_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    let n = ctx.path("n");
    client.create(&n, b"v0", &PERSISTENT).await.unwrap();

    // The watcher's own write: the event is in before the setData reply.
    let (_, _, watcher) = client.get_and_watch_data(&n).await.unwrap();
    let mut watcher = oneshot(watcher);
    client.set_data(&n, b"v1", None).await.unwrap();
    assert_eq!(
        ready(&mut watcher, "NodeDataChanged before the setData reply"),
        event(EventType::NodeDataChanged, &n)
    );

    // Someone else's write, then a read by the watcher: the event is in before the read's reply,
    // and the read sees the change.
    let (_, _, watcher) = client.get_and_watch_data(&n).await.unwrap();
    let mut watcher = oneshot(watcher);
    other.set_data(&n, b"v2", None).await.unwrap();
    let (data, _) = client.get_data(&n).await.unwrap();
    assert_eq!(data, b"v2");
    assert_eq!(
        ready(&mut watcher, "NodeDataChanged before the getData reply"),
        event(EventType::NodeDataChanged, &n)
    );

    // A multi fires every event before its reply, in op order.
    let (_, _, data) = client.get_and_watch_data(&n).await.unwrap();
    let (_, exist) = client
        .check_and_watch_stat(&ctx.path("n/new"))
        .await
        .unwrap();
    let (_, children) = client.list_and_watch_children(&n).await.unwrap();
    let (mut data, mut exist, mut children) = (oneshot(data), oneshot(exist), oneshot(children));
    let mut recursive = client
        .watch(&ctx.root, AddWatchMode::PersistentRecursive)
        .await
        .unwrap();
    let mut writer = other.new_multi_writer();
    writer
        .add_create(&ctx.path("n/new"), b"", &PERSISTENT)
        .unwrap();
    writer.add_set_data(&ctx.path("n/new"), b"x", None).unwrap();
    writer.add_set_data(&n, b"v3", None).unwrap();
    writer.add_delete(&ctx.path("n/new"), None).unwrap();
    within("multi", writer.commit()).await.unwrap();
    let (data_now, _) = client.get_data(&n).await.unwrap();
    assert_eq!(data_now, b"v3");
    assert_eq!(
        ready(&mut exist, "NodeCreated before a later reply"),
        event(EventType::NodeCreated, &ctx.path("n/new"))
    );
    assert_eq!(
        ready(&mut children, "NodeChildrenChanged before a later reply"),
        event(EventType::NodeChildrenChanged, &n)
    );
    assert_eq!(
        ready(&mut data, "NodeDataChanged before a later reply"),
        event(EventType::NodeDataChanged, &n)
    );
    for expected in [
        event(EventType::NodeCreated, &ctx.path("n/new")),
        event(EventType::NodeDataChanged, &ctx.path("n/new")),
        event(EventType::NodeDataChanged, &n),
        event(EventType::NodeDeleted, &ctx.path("n/new")),
    ] {
        let mut next = Box::pin(recursive.changed());
        assert_eq!(
            ready(&mut next, "recursive event before a later reply"),
            expected
        );
    }
    assert_no_event(&mut recursive, "recursive watch after the multi");
}
