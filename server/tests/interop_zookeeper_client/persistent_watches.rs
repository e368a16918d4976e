//! Persistent and persistent-recursive watches, watch removal, several watch modes on one path,
//! and events withheld from watchers without READ.

use crate::*;
use shepherd_testkit::on_both_servers;

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn persistent_watch(server) {
        everywhere(server, "persistent", persistent_watch_on).await;
    }
}

async fn persistent_watch_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    let me = client.session_id();
    let n = ctx.path("n");
    other.create(&n, b"", &PERSISTENT).await.unwrap();
    let mut watcher = client.watch(&n, AddWatchMode::Persistent).await.unwrap();
    let mut missing = client
        .watch(&ctx.path("later"), AddWatchMode::Persistent)
        .await
        .unwrap();
    assert_eq!(
        watched_paths(&ctx, me).await,
        vec![ctx.path("later"), n.clone()]
    );

    other.set_data(&n, b"1", None).await.unwrap();
    other
        .create(&ctx.path("n/c"), b"", &PERSISTENT)
        .await
        .unwrap();
    other
        .create(&ctx.path("n/c/d"), b"", &PERSISTENT)
        .await
        .unwrap();
    other.set_data(&ctx.path("n/c"), b"1", None).await.unwrap();
    other.delete(&ctx.path("n/c/d"), None).await.unwrap();
    other.delete(&ctx.path("n/c"), None).await.unwrap();
    other.delete(&n, None).await.unwrap();
    other.create(&n, b"", &PERSISTENT).await.unwrap();
    other.set_data(&n, b"2", None).await.unwrap();
    other
        .create(&ctx.path("later"), b"", &PERSISTENT)
        .await
        .unwrap();
    // Every change of the node itself and of its child list, nothing below (docs/protocol.md §9.1).
    for expected in [
        event(EventType::NodeDataChanged, &n),
        event(EventType::NodeChildrenChanged, &n),
        event(EventType::NodeChildrenChanged, &n),
        event(EventType::NodeDeleted, &n),
        event(EventType::NodeCreated, &n),
        event(EventType::NodeDataChanged, &n),
    ] {
        assert_eq!(next_event(&mut watcher).await, expected);
    }
    assert_eq!(
        next_event(&mut missing).await,
        event(EventType::NodeCreated, &ctx.path("later"))
    );
    barrier(&client).await;
    assert_no_event(&mut watcher, "persistent watch");
    assert_no_event(&mut missing, "persistent watch on a created node");
    // It persists.
    assert_eq!(
        watched_paths(&ctx, me).await,
        vec![ctx.path("later"), n.clone()]
    );
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn persistent_recursive_watch(server) {
        everywhere(server, "recursive", persistent_recursive_watch_on).await;
    }
}

async fn persistent_recursive_watch_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    let r = ctx.path("r");
    other.create(&r, b"", &PERSISTENT).await.unwrap();
    let mut watcher = client
        .watch(&r, AddWatchMode::PersistentRecursive)
        .await
        .unwrap();

    other
        .create(&ctx.path("r/a"), b"", &PERSISTENT)
        .await
        .unwrap();
    other
        .create(&ctx.path("r/a/b"), b"", &PERSISTENT)
        .await
        .unwrap();
    other
        .set_data(&ctx.path("r/a/b"), b"1", None)
        .await
        .unwrap();
    other.set_data(&r, b"1", None).await.unwrap();
    // A sibling whose name merely starts with the watched one is not below it.
    other
        .create(&ctx.path("rx"), b"", &PERSISTENT)
        .await
        .unwrap();
    other.delete(&ctx.path("r/a/b"), None).await.unwrap();
    other.delete(&ctx.path("r/a"), None).await.unwrap();
    other.delete(&r, None).await.unwrap();
    other.create(&r, b"", &PERSISTENT).await.unwrap();
    // Created, changed and deleted for the node and every descendant; never
    // NodeChildrenChanged (docs/protocol.md §9.1).
    for expected in [
        event(EventType::NodeCreated, &ctx.path("r/a")),
        event(EventType::NodeCreated, &ctx.path("r/a/b")),
        event(EventType::NodeDataChanged, &ctx.path("r/a/b")),
        event(EventType::NodeDataChanged, &r),
        event(EventType::NodeDeleted, &ctx.path("r/a/b")),
        event(EventType::NodeDeleted, &ctx.path("r/a")),
        event(EventType::NodeDeleted, &r),
        event(EventType::NodeCreated, &r),
    ] {
        assert_eq!(next_event(&mut watcher).await, expected);
    }
    barrier(&client).await;
    assert_no_event(&mut watcher, "recursive watch");
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn watchers_are_removed(server) {
        everywhere(server, "removal", watchers_are_removed_on).await;
    }
}

async fn watchers_are_removed_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    let me = client.session_id();
    let n = ctx.path("n");
    other.create(&n, b"", &PERSISTENT).await.unwrap();
    let nothing = Vec::<String>::new();

    // Explicit removal (removeWatches, op 18) answers with the server's verdict.
    let (_, _, watcher) = client.get_and_watch_data(&n).await.unwrap();
    assert_eq!(watched_paths(&ctx, me).await, vec![n.clone()]);
    #[allow(deprecated)]
    let removed = within("removeWatches", watcher.remove()).await;
    assert_eq!(removed, Ok(()));
    assert_eq!(watched_paths(&ctx, me).await, nothing);

    let watcher = client.watch(&n, AddWatchMode::Persistent).await.unwrap();
    assert_eq!(watched_paths(&ctx, me).await, vec![n.clone()]);
    #[allow(deprecated)]
    let removed = within("removeWatches", watcher.remove()).await;
    assert_eq!(removed, Ok(()));
    assert_eq!(watched_paths(&ctx, me).await, nothing);

    let watcher = client
        .watch(&n, AddWatchMode::PersistentRecursive)
        .await
        .unwrap();
    assert_eq!(watched_paths(&ctx, me).await, vec![n.clone()]);
    #[allow(deprecated)]
    let removed = within("removeWatches", watcher.remove()).await;
    assert_eq!(removed, Ok(()));
    assert_eq!(watched_paths(&ctx, me).await, nothing);

    // Dropping a watcher removes it too; the server hears before any later request.
    let (_, _, data) = client.get_and_watch_data(&n).await.unwrap();
    let (_, exist) = client.check_and_watch_stat(&n).await.unwrap();
    drop(data);
    barrier(&client).await;
    assert_eq!(
        watched_paths(&ctx, me).await,
        vec![n.clone()],
        "the exist watcher still needs the server's data watch"
    );
    drop(exist);
    barrier(&client).await;
    assert_eq!(watched_paths(&ctx, me).await, nothing);

    // A child watcher, then a data watcher, on the same node.
    let (_, child) = client.list_and_watch_children(&n).await.unwrap();
    let (_, _, data) = client.get_and_watch_data(&n).await.unwrap();
    #[allow(deprecated)]
    let removed = within("removeWatches", child.remove()).await;
    assert_eq!(removed, Ok(()));
    assert_eq!(
        watched_paths(&ctx, me).await,
        vec![n.clone()],
        "removing the child watch leaves the data watch"
    );
    let mut data = oneshot(data);
    other
        .create(&ctx.path("n/c"), b"", &PERSISTENT)
        .await
        .unwrap();
    barrier(&client).await;
    assert_pending(&mut data, "data watch after a child create");
    other.set_data(&n, b"1", None).await.unwrap();
    assert_eq!(
        within("NodeDataChanged", data).await,
        event(EventType::NodeDataChanged, &n)
    );
    assert_eq!(watched_paths(&ctx, me).await, nothing);
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn several_watch_modes_on_one_path(server) {
        everywhere(server, "modes", several_watch_modes_on_one_path_on).await;
    }
}

/// The crate assumes 3.9, where watch modes on one path add up (ZOOKEEPER-4466). A 3.8 server
/// keeps one mode per connection, path and table, the last registration winning (docs/protocol.md §9.4). This is
/// what a user of the crate sees on 3.8.
async fn several_watch_modes_on_one_path_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    let n = ctx.path("n");
    other.create(&n, b"", &PERSISTENT).await.unwrap();

    // A persistent watch, then a one-shot data watch on the same path: the one-shot replaces
    // the persistent one in the data table, so data events stop after the first.
    let mut persistent = client.watch(&n, AddWatchMode::Persistent).await.unwrap();
    let (_, _, data) = client.get_and_watch_data(&n).await.unwrap();
    other.set_data(&n, b"1", None).await.unwrap();
    assert_eq!(
        within("one-shot", oneshot(data)).await,
        event(EventType::NodeDataChanged, &n)
    );
    assert_eq!(
        next_event(&mut persistent).await,
        event(EventType::NodeDataChanged, &n)
    );
    other.set_data(&n, b"2", None).await.unwrap();
    barrier(&client).await;
    assert_no_event(
        &mut persistent,
        "3.8: the persistent data watch was downgraded to the consumed one-shot",
    );
    // The child table still holds the persistent mode.
    other
        .create(&ctx.path("n/c"), b"", &PERSISTENT)
        .await
        .unwrap();
    assert_eq!(
        next_event(&mut persistent).await,
        event(EventType::NodeChildrenChanged, &n)
    );
    #[allow(deprecated)]
    let removed = within("removeWatches", persistent.remove()).await;
    assert_eq!(removed, Ok(()));

    // A persistent watch, then a recursive one: the recursive replaces the persistent, so the
    // node's child list is no longer reported (recursive watches ignore NodeChildrenChanged).
    let mut persistent = client.watch(&n, AddWatchMode::Persistent).await.unwrap();
    let mut recursive = client
        .watch(&n, AddWatchMode::PersistentRecursive)
        .await
        .unwrap();
    other
        .create(&ctx.path("n/d"), b"", &PERSISTENT)
        .await
        .unwrap();
    other.set_data(&n, b"3", None).await.unwrap();
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeCreated, &ctx.path("n/d"))
    );
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeDataChanged, &n)
    );
    assert_eq!(
        next_event(&mut persistent).await,
        event(EventType::NodeDataChanged, &n),
        "3.8: no NodeChildrenChanged before it"
    );
    barrier(&client).await;
    assert_no_event(
        &mut persistent,
        "persistent watch replaced by a recursive one",
    );
    assert_no_event(&mut recursive, "recursive watch");
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn events_need_read_permission(server) {
        everywhere(server, "eventacl", events_need_read_permission_on).await;
    }
}

/// Debian's 3.8.0 carries the CVE-2024-23944 fix: a watcher without READ on the node
/// concerned does not get its event (docs/protocol.md §9.9).
async fn events_need_read_permission_on(ctx: Ctx) {
    let watcher = ctx.client().await;
    let alice = ctx.alice().await;
    let r = ctx.path("r");
    alice.create(&r, b"", &PERSISTENT).await.unwrap();
    let mut recursive = watcher
        .watch(&r, AddWatchMode::PersistentRecursive)
        .await
        .unwrap();
    let private = CreateMode::Persistent.with_acls(Acls::creator_all());
    alice
        .create(&ctx.path("r/secret"), b"", &private)
        .await
        .unwrap();
    alice
        .create(&ctx.path("r/open"), b"", &PERSISTENT)
        .await
        .unwrap();
    alice
        .set_data(&ctx.path("r/secret"), b"1", None)
        .await
        .unwrap();
    alice
        .set_data(&ctx.path("r/open"), b"1", None)
        .await
        .unwrap();
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeCreated, &ctx.path("r/open"))
    );
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeDataChanged, &ctx.path("r/open"))
    );
    barrier(&watcher).await;
    assert_no_event(&mut recursive, "events of a node the watcher may not read");

    // A private parent does not hide the events of a readable child; its own reader still gets
    // its NodeChildrenChanged.
    let (_, children) = alice
        .list_and_watch_children(&ctx.path("r/secret"))
        .await
        .unwrap();
    let (_, exist) = watcher
        .check_and_watch_stat(&ctx.path("r/secret/x"))
        .await
        .unwrap();
    let mut exist = oneshot(exist);
    alice
        .create(&ctx.path("r/secret/x"), b"", &PERSISTENT)
        .await
        .unwrap();
    assert_eq!(
        within("the reader's event", oneshot(children)).await,
        event(EventType::NodeChildrenChanged, &ctx.path("r/secret"))
    );
    assert_eq!(
        within("an event of a readable node", exist.as_mut()).await,
        event(EventType::NodeCreated, &ctx.path("r/secret/x"))
    );
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeCreated, &ctx.path("r/secret/x"))
    );
}
