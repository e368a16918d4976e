//! Sessions: timeout negotiation, re-attaching with id and password, resuming after a cut
//! connection (watches re-armed from the last zxid seen), and expiry as the client observes it.

use crate::*;
use shepherd_testkit::on_both_servers;

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn session_timeout_negotiation(server) {
        everywhere(server, "negotiation", session_timeout_negotiation_on).await;
    }
}

async fn session_timeout_negotiation_on(ctx: Ctx) {
    // tickTime 2000: the bounds are 2 and 20 ticks (docs/protocol.md §2.4, §18).
    for (asked, granted) in [
        (Duration::from_secs(1), Duration::from_secs(4)),
        (Duration::from_secs(6), Duration::from_secs(6)),
        (Duration::from_secs(100), Duration::from_secs(40)),
    ] {
        let client = within(
            "connect",
            zk::Client::connector()
                .with_session_timeout(asked)
                .connect(&ctx.connect),
        )
        .await
        .expect("connect");
        assert_eq!(client.session_timeout(), granted, "asked for {asked:?}");
        assert_eq!(client.state(), SessionState::SyncConnected);
        assert_ne!(client.session_id().0, 0);
        assert!(!client.session().is_readonly());
    }
    // A client that accepts read-only servers still gets a read-write session from a
    // read-write server.
    let client = within(
        "connect",
        zk::Client::connector()
            .with_readonly(true)
            .connect(&ctx.connect),
    )
    .await
    .expect("connect");
    assert_eq!(client.state(), SessionState::SyncConnected);
    assert!(!client.session().is_readonly());
    let other = ctx.client().await;
    assert_ne!(other.session_id(), client.session_id());
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn session_reestablished_then_closed(server) {
        everywhere(server, "reestablish", session_reestablished_then_closed_on).await;
    }
}

async fn session_reestablished_then_closed_on(ctx: Ctx) {
    let observer = ctx.client().await;
    let eph = ctx.path("eph");

    let first = within(
        "connect",
        zk::Client::connector()
            .with_detached()
            .connect(&ctx.connect),
    )
    .await
    .expect("connect");
    let (stat, _) = first.create(&eph, b"", &EPHEMERAL).await.unwrap();
    let id = first.session_id();
    assert_eq!(stat.ephemeral_owner, id.0);
    let session = first.session().clone();
    // Detached: dropping the client drops the connection but does not close the session.
    drop(first);

    let second = within(
        "reattach",
        zk::Client::connector()
            .with_session(session.clone())
            .connect(&ctx.connect),
    )
    .await
    .expect("reattach with id and password");
    assert_eq!(second.session_id(), id);
    assert_eq!(second.state(), SessionState::SyncConnected);
    assert_eq!(
        second.list_ephemerals(&ctx.root).await.unwrap(),
        vec![eph.clone()]
    );
    let (stat, _) = second
        .create(&ctx.path("eph2"), b"", &EPHEMERAL)
        .await
        .unwrap();
    assert_eq!(
        stat.ephemeral_owner, id.0,
        "the same session owns new ephemerals"
    );

    let (stat, deleted) = observer.check_and_watch_stat(&eph).await.unwrap();
    assert_eq!(stat.map(|s| s.ephemeral_owner), Some(id.0));
    // Not detached: dropping the last handle sends closeSession, which deletes the ephemerals.
    drop(second);
    assert_eq!(
        within("NodeDeleted of the ephemeral", deleted.changed()).await,
        event(EventType::NodeDeleted, &eph)
    );
    assert_eq!(observer.check_stat(&ctx.path("eph2")).await.unwrap(), None);
    assert_eq!(
        within(
            "reattach",
            zk::Client::connector()
                .with_session(session)
                .connect(&ctx.connect)
        )
        .await
        .unwrap_err(),
        Error::SessionExpired,
        "a closed session cannot be reattached"
    );
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn session_resumes_after_connection_drop(server) {
        everywhere(server, "resume", session_resumes_after_connection_drop_on).await;
    }
}

async fn session_resumes_after_connection_drop_on(ctx: Ctx) {
    let other = ctx.client().await;
    for name in ["changed", "unchanged", "parent", "gone", "lister", "quiet"] {
        other
            .create(&ctx.path(name), b"v0", &PERSISTENT)
            .await
            .unwrap();
    }
    let secret = ctx.path("secret");
    let proxy = Proxy::start(&ctx.connect).await;
    let client = within(
        "connect through the proxy",
        zk::Client::connector()
            .with_session_timeout(Duration::from_secs(20))
            .with_auth("digest", ALICE)
            .connect(proxy.addr()),
    )
    .await
    .expect("connect through the proxy");
    let id = client.session_id();
    let eph = ctx.path("eph");
    client.create(&eph, b"", &EPHEMERAL).await.unwrap();
    client
        .create(
            &secret,
            b"s",
            &CreateMode::Persistent.with_acls(Acls::creator_all()),
        )
        .await
        .unwrap();

    let (_, _, changed) = client
        .get_and_watch_data(&ctx.path("changed"))
        .await
        .unwrap();
    let (_, _, unchanged) = client
        .get_and_watch_data(&ctx.path("unchanged"))
        .await
        .unwrap();
    let (missing, appears) = client
        .check_and_watch_stat(&ctx.path("appears"))
        .await
        .unwrap();
    assert_eq!(missing, None);
    let (_, children) = client
        .list_and_watch_children(&ctx.path("parent"))
        .await
        .unwrap();
    let (_, _, gone) = client.get_and_watch_data(&ctx.path("gone")).await.unwrap();
    let (_, lister) = client
        .list_and_watch_children(&ctx.path("lister"))
        .await
        .unwrap();
    let (_, quiet) = client
        .list_and_watch_children(&ctx.path("quiet"))
        .await
        .unwrap();
    let (_, still_missing) = client
        .check_and_watch_stat(&ctx.path("later"))
        .await
        .unwrap();
    let mut persistent = client
        .watch(&ctx.path("changed"), AddWatchMode::Persistent)
        .await
        .unwrap();
    let mut states = client.state_watcher();

    // Drop the TCP connection and hold the client's reconnection until the others have changed
    // what it watches.
    proxy.hold();
    proxy.cut_all();
    assert_eq!(next_state(&mut states).await, SessionState::Disconnected);
    other
        .set_data(&ctx.path("changed"), b"v1", None)
        .await
        .unwrap();
    other
        .create(&ctx.path("appears"), b"", &PERSISTENT)
        .await
        .unwrap();
    other
        .create(&ctx.path("parent/child"), b"", &PERSISTENT)
        .await
        .unwrap();
    other.delete(&ctx.path("gone"), None).await.unwrap();
    other.delete(&ctx.path("lister"), None).await.unwrap();
    proxy.admit();
    assert_eq!(next_state(&mut states).await, SessionState::SyncConnected);
    assert_eq!(proxy.accepted(), 2, "one connection cut, one resumed");
    // A persistent watcher hears of the session's ups and downs. (zookeeper-client 0.11.2 does
    // not re-arm persistent watches after a reconnect: its resend_watches never sends
    // SetWatches2, so their node events stop here, whatever the server. Not asserted.)
    assert_eq!(
        next_event(&mut persistent).await,
        WatchedEvent::new_session(SessionState::Disconnected)
    );
    assert_eq!(
        next_event(&mut persistent).await,
        WatchedEvent::new_session(SessionState::SyncConnected)
    );

    // The crate re-arms its watches with SetWatches(relativeZxid = last zxid seen): what
    // changed meanwhile fires at once (docs/protocol.md §9.7).
    assert_eq!(
        within("catch-up NodeDataChanged", oneshot(changed)).await,
        event(EventType::NodeDataChanged, &ctx.path("changed"))
    );
    assert_eq!(
        within("catch-up NodeCreated", oneshot(appears)).await,
        event(EventType::NodeCreated, &ctx.path("appears"))
    );
    assert_eq!(
        within("catch-up NodeChildrenChanged", oneshot(children)).await,
        event(EventType::NodeChildrenChanged, &ctx.path("parent"))
    );
    assert_eq!(
        within("catch-up NodeDeleted", oneshot(gone)).await,
        event(EventType::NodeDeleted, &ctx.path("gone"))
    );
    assert_eq!(
        within("catch-up NodeDeleted of a child watch", oneshot(lister)).await,
        event(EventType::NodeDeleted, &ctx.path("lister"))
    );
    // What did not change is watched again, and fires on the next change.
    let mut unchanged = oneshot(unchanged);
    let mut quiet = oneshot(quiet);
    let mut still_missing = oneshot(still_missing);
    barrier(&client).await;
    assert_pending(
        &mut unchanged,
        "data watch on an unchanged node after reconnect",
    );
    assert_pending(
        &mut quiet,
        "child watch on an unchanged node after reconnect",
    );
    assert_pending(&mut still_missing, "exist watch on a still missing node");
    other
        .set_data(&ctx.path("unchanged"), b"v1", None)
        .await
        .unwrap();
    other
        .create(&ctx.path("quiet/c"), b"", &PERSISTENT)
        .await
        .unwrap();
    other
        .create(&ctx.path("later"), b"", &PERSISTENT)
        .await
        .unwrap();
    assert_eq!(
        within("NodeDataChanged after reconnect", unchanged).await,
        event(EventType::NodeDataChanged, &ctx.path("unchanged"))
    );
    assert_eq!(
        within("NodeChildrenChanged after reconnect", quiet).await,
        event(EventType::NodeChildrenChanged, &ctx.path("quiet"))
    );
    assert_eq!(
        within("NodeCreated after reconnect", still_missing).await,
        event(EventType::NodeCreated, &ctx.path("later"))
    );

    // Same session: its ephemeral survived, and new ones belong to the same id.
    assert_eq!(client.session_id(), id);
    let stat = other
        .check_stat(&eph)
        .await
        .unwrap()
        .expect("ephemeral survives");
    assert_eq!(stat.ephemeral_owner, id.0);
    let (stat, _) = client
        .create(&ctx.path("eph2"), b"", &EPHEMERAL)
        .await
        .unwrap();
    assert_eq!(stat.ephemeral_owner, id.0);
    assert_eq!(
        sorted(client.list_ephemerals(&ctx.root).await.unwrap()),
        vec![eph.clone(), ctx.path("eph2")]
    );
    // The crate sent its auth again on the new connection.
    assert_eq!(client.get_data(&secret).await.unwrap().0, b"s".to_vec());
    assert_eq!(
        users(client.list_auth_users().await.unwrap()),
        vec![user("digest", "alice"), user("ip", "127.0.0.1")]
    );
    if let Some(server) = ctx.server.embedded() {
        let sessions = server.controls().sessions();
        let session = sessions
            .iter()
            .find(|s| s.id == id.0)
            .expect("the server still knows the session");
        assert_eq!(session.ephemerals, vec![eph, ctx.path("eph2")]);
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn session_expiry_is_observed(server) {
        everywhere(server, "expiry", session_expiry_is_observed_on).await;
    }
}

async fn session_expiry_is_observed_on(ctx: Ctx) {
    let proxy = Proxy::start(&ctx.connect).await;
    // The shortest timeout the servers grant (2 ticks), through a proxy we can cut (see
    // Ctx::expire).
    let client = within(
        "connect through the proxy",
        zk::Client::connector()
            .with_session_timeout(Duration::from_secs(4))
            .connect(proxy.addr()),
    )
    .await
    .expect("connect through the proxy");
    assert_eq!(client.session_timeout(), Duration::from_secs(4));
    let observer = ctx.client().await;
    let dir = ctx.path("dir");
    observer.create(&dir, b"", &PERSISTENT).await.unwrap();
    let eph = ctx.path("dir/eph");
    client.create(&eph, b"", &EPHEMERAL).await.unwrap();
    let (_, deleted) = observer.check_and_watch_stat(&eph).await.unwrap();
    let (_, before, children) = observer.get_and_watch_children(&dir).await.unwrap();
    assert_eq!((before.num_children, before.cversion), (1, 1));
    let (_, _, watch) = client.get_and_watch_data(&ctx.root).await.unwrap();
    // On a quiet path: only session events reach it.
    let mut persistent = client
        .watch(&ctx.path("quiet"), AddWatchMode::PersistentRecursive)
        .await
        .unwrap();
    let mut states = client.state_watcher();
    let id = client.session_id();

    ctx.expire(&client, &proxy).await;

    // The server closes the connection without a word (docs/protocol.md §13.2); the client learns of the expiry
    // when it reconnects and gets sessionId 0 (or, kept away long enough, gives up by itself).
    let mut seen = Vec::new();
    loop {
        let state = next_state(&mut states).await;
        seen.push(state);
        if state.is_terminated() {
            break;
        }
    }
    assert_eq!(
        seen.last(),
        Some(&SessionState::Expired),
        "states: {seen:?}"
    );
    assert!(
        seen[..seen.len() - 1]
            .iter()
            .all(|s| *s == SessionState::Disconnected),
        "states: {seen:?}"
    );
    assert_eq!(client.state(), SessionState::Expired);
    assert_eq!(
        within("the expiry at the one-shot watcher", oneshot(watch)).await,
        WatchedEvent::new_session(SessionState::Expired)
    );
    // A persistent watcher sees every state change, ending with Expired.
    loop {
        let seen = next_event(&mut persistent).await;
        assert_eq!(seen.event_type, EventType::Session, "{seen:?}");
        if seen.session_state == SessionState::Expired {
            break;
        }
        assert_eq!(seen.session_state, SessionState::Disconnected, "{seen:?}");
    }
    assert_eq!(
        within(
            "NodeDeleted of the expired session's ephemeral",
            deleted.changed()
        )
        .await,
        event(EventType::NodeDeleted, &eph)
    );
    assert_eq!(
        within("the parent's NodeChildrenChanged", children.changed()).await,
        event(EventType::NodeChildrenChanged, &dir)
    );
    assert_eq!(observer.check_stat(&eph).await.unwrap(), None);
    let (names, after) = observer.get_children(&dir).await.unwrap();
    assert!(names.is_empty());
    assert_eq!((after.num_children, after.cversion), (0, 2));
    assert!(after.pzxid > before.pzxid);
    assert_eq!(after.mzxid, before.mzxid);
    assert_eq!(
        client.get_data(&ctx.root).await.unwrap_err(),
        Error::SessionExpired
    );
    assert_eq!(
        within(
            "reattach",
            zk::Client::connector()
                .with_session(client.session().clone())
                .connect(&ctx.connect)
        )
        .await
        .unwrap_err(),
        Error::SessionExpired
    );
    if let Some(server) = ctx.server.embedded() {
        assert!(server.controls().sessions().iter().all(|s| s.id != id.0));
    }
}
