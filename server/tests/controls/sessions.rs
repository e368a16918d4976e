//! Sessions and connections: expiring a session, listing sessions, closing a connection, and
//! freezing a session (nothing delivered until the thaw, then everything in order).

use std::time::Duration;

use shepherd_client::{Client, CreateOptions, Error, SessionState};
use shepherd_protocol::{CreateMode, EventType, Reply, Request};
use shepherd_server::ControlError;
use shepherd_testkit::{
    connect, create, exists, get_data, reply_header, set_data, wait_state, within,
};

use crate::{exists_in, raw, server};

#[tokio::test]
async fn expire_session_deletes_ephemerals_fires_watches_and_the_client_sees_expired() {
    let server = server().await;
    let doomed = connect(&server.connect_string()).await;
    let observer = connect(&server.connect_string()).await;
    doomed
        .create("/eph", b"", &CreateOptions::ephemeral())
        .await
        .unwrap();
    let (_, gone) = observer.exists_w("/eph").await.unwrap();
    let session = server
        .controls()
        .session(doomed.session_id())
        .expect("listed");
    assert_eq!(session.ephemerals, ["/eph"]);

    server.controls().expire_session(doomed.session_id());

    // Synchronous: the core state has changed when it returns.
    assert!(server.controls().session(doomed.session_id()).is_none());
    assert!(!exists_in(&server, "/eph"));
    let event = within("NodeDeleted", gone).await.unwrap();
    assert_eq!(event.event_type, EventType::NodeDeleted);
    // Closed with no reply; the reconnect is told the session expired.
    wait_state(&mut doomed.status_watch(), SessionState::Expired).await;
    assert!(matches!(
        doomed.get_data("/").await,
        Err(Error::SessionExpired)
    ));
}

#[tokio::test]
async fn sessions_list_ephemerals_and_watches() {
    let server = server().await;
    let c = connect(&server.connect_string()).await;
    c.create("/e", b"", &CreateOptions::ephemeral())
        .await
        .unwrap();
    let (_, _, _watch) = c.get_data_w("/e").await.unwrap();
    let _children = c.get_children_w("/").await.unwrap();
    let info = server.controls().session(c.session_id()).unwrap();
    assert_eq!(info.ephemerals, ["/e"]);
    let watches: Vec<_> = info
        .watches
        .iter()
        .map(|w| (w.path.as_str(), format!("{:?}", w.kind)))
        .collect();
    assert_eq!(
        watches,
        [("/", "Child".to_string()), ("/e", "Data".to_string())]
    );
    let all = server.controls().dump_watches();
    assert_eq!(all.len(), 2);
    assert!(all.iter().all(|w| w.session == Some(c.session_id())));
}

#[tokio::test]
async fn close_connection_keeps_the_session_and_the_client_resumes() {
    let server = server().await;
    let c = connect(&server.connect_string()).await;
    c.create("/kept", b"", &CreateOptions::ephemeral())
        .await
        .unwrap();
    let (_, watch) = c.exists_w("/kept").await.unwrap();
    let first_conn = server.controls().session(c.session_id()).unwrap().conn;
    let mut status = c.status_watch();

    server.controls().close_connection(c.session_id()).unwrap();

    within(
        "disconnect",
        status.wait_for(|s| s.state == SessionState::Disconnected),
    )
    .await
    .unwrap();
    wait_state(&mut c.status_watch(), SessionState::Connected).await;
    // Same session, new connection, ephemeral kept, watch re-registered by setWatches.
    let id = c.session_id();
    within("the watch re-registered", async {
        server
            .wait_for(|core| {
                core.sessions()
                    .iter()
                    .any(|s| s.id == id && s.conn.is_some() && s.watches.len() == 1)
            })
            .await
    })
    .await;
    assert_ne!(server.controls().session(id).unwrap().conn, first_conn);
    assert!(exists_in(&server, "/kept"));
    let other = connect(&server.connect_string()).await;
    other.delete("/kept", None).await.unwrap();
    assert_eq!(
        within("the re-armed watch", watch)
            .await
            .unwrap()
            .event_type,
        EventType::NodeDeleted
    );
    assert_eq!(
        server.controls().close_connection(0x1234),
        Err(ControlError::UnknownSession(0x1234))
    );
}

#[tokio::test]
async fn a_frozen_session_gets_nothing_until_thawed_then_everything_in_order() {
    let server = server().await;
    let mut frozen = raw(&server, 30_000).await;
    let mut other = raw(&server, 30_000).await;
    other
        .call(&create("/f", b"d", CreateMode::Persistent))
        .await;
    assert!(matches!(
        frozen.call(&exists("/f", true)).await,
        Reply::Ok(..)
    ));

    server
        .controls()
        .freeze_session(frozen.session_id())
        .unwrap();
    // A notification is queued for it, then it sends a ping and a read.
    other.call(&set_data("/f", b"2")).await;
    frozen.send(&Request::Ping).await;
    let read = frozen.send(&get_data("/f")).await;
    assert!(frozen.silent_for(Duration::from_millis(300)).await);
    let zxid = server.controls().last_zxid();

    assert!(server.controls().thaw_session(frozen.session_id()));
    match frozen.next().await.unwrap() {
        Reply::Event(_, e) => assert_eq!(
            (e.event_type, e.path.as_str()),
            (EventType::NodeDataChanged, "/f")
        ),
        other => panic!("expected the event first, got {other:?}"),
    }
    assert_eq!(reply_header(&frozen.next().await.unwrap()).xid, -2);
    let reply = frozen.next().await.unwrap();
    assert_eq!(reply_header(&reply).xid, read);
    assert_eq!(reply_header(&reply).zxid, zxid);
    assert!(!server.controls().thaw_session(frozen.session_id()));
    assert_eq!(
        server.controls().freeze_session(0x77),
        Err(ControlError::UnknownSession(0x77))
    );
}

#[tokio::test]
async fn a_frozen_client_reconnect_is_held_too_and_resumes_after_thaw() {
    let server = server().await;
    let c = Client::builder()
        .session_timeout(Duration::from_secs(4))
        .connect(&server.connect_string())
        .await
        .unwrap();
    server.controls().freeze_session(c.session_id()).unwrap();
    // No ping answers: the client gives up on the connection (after 2/3 of its timeout),
    // and its reconnect is held as well.
    wait_state(&mut c.status_watch(), SessionState::Disconnected).await;
    assert!(server.controls().thaw_session(c.session_id()));
    wait_state(&mut c.status_watch(), SessionState::Connected).await;
    within("a request after thaw", c.exists("/")).await.unwrap();
}
