//! One-shot and persistent watches: what fires, once, and before which reply.

use futures_util::{FutureExt, StreamExt};
use shepherd_client::{AddWatchMode, CreateOptions, Error, EventType, WatcherType};
use shepherd_testkit::on_both_servers;
use shepherd_testkit::{connect, within};

mod common;
use common::session_with_root;

on_both_servers! {
    #[tokio::test]
    async fn one_shot_watches_fire_once_with_the_right_type(server) {
        let (zk, root) = session_with_root(&server, "oneshot").await;
        let other = connect(&server.connect).await;
        let node = format!("{root}/n");

        let (stat, created) = zk.exists_w(&node).await.unwrap();
        assert_eq!(stat, None, "{}", server.name);
        let (_, _, children) = zk.get_children_w(&root).await.unwrap();
        other
            .create(&node, b"", &CreateOptions::persistent())
            .await
            .unwrap();
        let ev = within("NodeCreated", created).await.unwrap();
        assert_eq!(
            (ev.event_type, ev.path.as_str()),
            (EventType::NodeCreated, node.as_str())
        );
        let ev = within("NodeChildrenChanged", children).await.unwrap();
        assert_eq!(
            (ev.event_type, ev.path.as_str()),
            (EventType::NodeChildrenChanged, root.as_str())
        );

        // Two watchers on one path both fire on one change.
        let (_, _, first) = zk.get_data_w(&node).await.unwrap();
        let (_, _, second) = zk.get_data_w(&node).await.unwrap();
        other.set_data(&node, b"1", None).await.unwrap();
        for w in [first, second] {
            assert_eq!(
                within("data", w).await.unwrap().event_type,
                EventType::NodeDataChanged
            );
        }

        // Data and exist watches on an existing node both fire on its deletion.
        let (_, _, data) = zk.get_data_w(&node).await.unwrap();
        let (stat, exists) = zk.exists_w(&node).await.unwrap();
        assert!(stat.is_some());
        other.delete(&node, None).await.unwrap();
        assert_eq!(
            within("deleted", data).await.unwrap().event_type,
            EventType::NodeDeleted
        );
        assert_eq!(
            within("deleted", exists).await.unwrap().event_type,
            EventType::NodeDeleted
        );

        // A failed getData leaves no watch.
        assert!(zk.get_data_w(&node).await.unwrap_err().is_no_node());
        zk.close().await.unwrap();
        other.close().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test]
    async fn events_precede_the_reply_that_reveals_the_change(server) {
        let (zk, root) = session_with_root(&server, "order").await;
        let other = connect(&server.connect).await;

        // Own change: the event is in before set_data returns.
        let (_, _, watcher) = zk.get_data_w(&root).await.unwrap();
        zk.set_data(&root, b"mine", None).await.unwrap();
        let ev = watcher
            .now_or_never()
            .expect("event delivered before the reply");
        assert_eq!(
            ev.unwrap().event_type,
            EventType::NodeDataChanged,
            "{}",
            server.name
        );

        // Someone else's change: the event is in before our read sees the new data.
        let (_, _, watcher) = zk.get_data_w(&root).await.unwrap();
        other.set_data(&root, b"theirs", None).await.unwrap();
        let (data, _) = zk.get_data(&root).await.unwrap();
        assert_eq!(data, b"theirs");
        assert!(
            watcher.now_or_never().is_some(),
            "event before the read's reply"
        );
        zk.close().await.unwrap();
        other.close().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test]
    async fn persistent_and_recursive_watches(server) {
        let (zk, root) = session_with_root(&server, "persistent").await;
        let other = connect(&server.connect).await;
        let node = format!("{root}/p");
        let mut persistent = zk.add_watch(&node, AddWatchMode::Persistent).await.unwrap();
        let mut recursive = zk
            .add_watch(&root, AddWatchMode::PersistentRecursive)
            .await
            .unwrap();

        other
            .create(&node, b"", &CreateOptions::persistent())
            .await
            .unwrap();
        other.set_data(&node, b"1", None).await.unwrap();
        other.set_data(&node, b"2", None).await.unwrap();
        other
            .create(&format!("{node}/c"), b"", &CreateOptions::persistent())
            .await
            .unwrap();
        let expected = [
            EventType::NodeCreated,
            EventType::NodeDataChanged,
            EventType::NodeDataChanged,
            EventType::NodeChildrenChanged,
        ];
        for t in expected {
            let ev = within("persistent event", persistent.next()).await.unwrap();
            assert_eq!(
                (ev.event_type, ev.path.as_str()),
                (t, node.as_str()),
                "{}",
                server.name
            );
        }
        // Recursive: creations and changes below, never NodeChildrenChanged.
        for (t, path) in [
            (EventType::NodeCreated, node.clone()),
            (EventType::NodeDataChanged, node.clone()),
            (EventType::NodeDataChanged, node.clone()),
            (EventType::NodeCreated, format!("{node}/c")),
        ] {
            let ev = within("recursive event", recursive.next_event())
                .await
                .unwrap();
            assert_eq!((ev.event_type, ev.path), (t, path));
        }

        // removeWatches(Any) ends the persistent stream with PersistentWatchRemoved.
        zk.remove_watches(&node, WatcherType::Any).await.unwrap();
        let ev = within("removed", persistent.next()).await.unwrap();
        assert_eq!(ev.event_type, EventType::PersistentWatchRemoved);
        assert!(within("end", persistent.next()).await.is_none());
        drop(recursive);
        zk.close().await.unwrap();
        other.close().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test]
    async fn remove_watches_resolves_local_watchers(server) {
        let (zk, root) = session_with_root(&server, "remove").await;
        let (_, _, data) = zk.get_data_w(&root).await.unwrap();
        let (_, _, children) = zk.get_children_w(&root).await.unwrap();

        zk.remove_watches(&root, WatcherType::Data).await.unwrap();
        let ev = within("removed", data).await.unwrap();
        assert_eq!(
            ev.event_type,
            EventType::DataWatchRemoved,
            "{}",
            server.name
        );
        let err = zk
            .remove_watches(&root, WatcherType::Data)
            .await
            .unwrap_err();
        assert_eq!(
            err.keeper_code(),
            Some(shepherd_client::ErrorCode::NoWatcher)
        );

        zk.remove_watches(&root, WatcherType::Children)
            .await
            .unwrap();
        let ev = within("removed", children).await.unwrap();
        assert_eq!(ev.event_type, EventType::ChildWatchRemoved);
        zk.close().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test]
    async fn watchers_end_with_the_session(server) {
        let (zk, root) = session_with_root(&server, "end").await;
        let (_, missing) = zk.exists_w(&format!("{root}/never")).await.unwrap();
        let mut stream = zk.add_watch(&root, AddWatchMode::Persistent).await.unwrap();
        zk.close().await.unwrap();
        assert!(
            matches!(within("watcher", missing).await, Err(Error::Closed)),
            "{}",
            server.name
        );
        let last = within("session event", stream.next()).await.unwrap();
        assert_eq!(last.event_type, EventType::None);
        assert_eq!(last.state, shepherd_client::KeeperState::Closed);
        assert!(within("end", stream.next()).await.is_none());
    }
}
