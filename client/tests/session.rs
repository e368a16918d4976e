//! Sessions across connections: resume after a cut, silence detection, connection loss,
//! expiry, close, auth failure, pipelining and a bounded load test.

use std::future::Future;
use std::time::Duration;

use futures_util::future::join_all;
use shepherd_client::{Client, CreateOptions, Error, EventType, SessionState};
use shepherd_testkit::on_both_servers;
use shepherd_testkit::{Proxy, connect, take_over_and_close, unique, wait_state, within};

async fn via(proxy: &Proxy, timeout_ms: u64) -> Client {
    Client::builder()
        .session_timeout(Duration::from_millis(timeout_ms))
        .connect_timeout(Duration::from_secs(5))
        .connect(proxy.addr())
        .await
        .expect("connect through the proxy")
}

on_both_servers! {
    #[tokio::test]
    async fn session_resumes_after_a_dropped_connection(server) {
        let proxy = Proxy::start(&server.connect).await;
        let zk = via(&proxy, 10_000).await;
        let other = connect(&server.connect).await;
        let root = unique("resume");
        zk.create(&root, b"", &CreateOptions::persistent())
            .await
            .unwrap();
        let eph = format!("{root}/eph");
        zk.create(&eph, b"", &CreateOptions::ephemeral())
            .await
            .unwrap();
        let (_, _, live) = zk.get_data_w(&root).await.unwrap();
        let (_, caught_up) = zk.exists_w(&format!("{root}/later")).await.unwrap();
        let mut status = zk.status_watch();
        let id = zk.session_id();

        // Cut the connection and hold the reconnect while the node changes: setWatches must
        // report it from the last zxid seen.
        proxy.hold();
        proxy.cut_all();
        wait_state(&mut status, SessionState::Disconnected).await;
        other
            .create(&format!("{root}/later"), b"", &CreateOptions::persistent())
            .await
            .unwrap();
        proxy.admit();
        let connected = wait_state(&mut status, SessionState::Connected).await;
        assert_eq!(connected.session_id, id, "{}", server.name);
        assert_eq!(zk.session_id(), id);
        let ev = within("catch-up event", caught_up).await.unwrap();
        assert_eq!(ev.event_type, EventType::NodeCreated);

        // The ephemeral survived and the re-armed watch still fires.
        let stat = other
            .exists(&eph)
            .await
            .unwrap()
            .expect("ephemeral survives");
        assert_eq!(stat.ephemeral_owner, id);
        other.set_data(&root, b"x", None).await.unwrap();
        assert_eq!(
            within("live event", live).await.unwrap().event_type,
            EventType::NodeDataChanged
        );
        assert_eq!(zk.get_ephemerals(&root).await.unwrap(), [eph]);
        zk.close().await.unwrap();
        other.close().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test]
    async fn in_flight_requests_fail_with_connection_loss(server) {
        let proxy = Proxy::start(&server.connect).await;
        let zk = via(&proxy, 10_000).await;
        let mut status = zk.status_watch();
        let root = unique("loss");
        zk.create(&root, b"", &CreateOptions::persistent())
            .await
            .unwrap();

        proxy.blackhole_all();
        let mut swallowed = proxy.swallowed();
        let pending = tokio::spawn({
            let zk = zk.clone();
            let root = root.clone();
            async move { zk.get_data(&root).await }
        });
        // Once the proxy has swallowed a getData frame's worth, the request is in flight.
        let frame = 4 + 8 + 4 + root.len() + 1;
        within("request sent", swallowed.wait_for(|n| *n >= frame))
            .await
            .unwrap();
        proxy.cut_all();
        let result = within("lost request", pending).await.unwrap();
        assert!(
            matches!(result, Err(Error::ConnectionLoss)),
            "{}: {result:?}",
            server.name
        );
        wait_state(&mut status, SessionState::Connected).await;
        assert!(
            zk.get_data(&root).await.is_ok(),
            "works again after the reconnect"
        );
        zk.close().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test]
    async fn a_silent_connection_is_detected(server) {
        let proxy = Proxy::start(&server.connect).await;
        // The server grants at least 2 ticks (4 s): silence is noticed within about 2.7 s.
        let zk = via(&proxy, 4_000).await;
        let mut status = zk.status_watch();
        let id = zk.session_id();
        proxy.blackhole_all();
        wait_state(&mut status, SessionState::Disconnected).await;
        // Noticed in time, shown by an event rather than a clock: the client reconnects to the
        // same session, so it gave up on the silent connection before the server, which heard
        // nothing either, could expire the session.
        let back = wait_state(&mut status, SessionState::Connected).await;
        assert_eq!(back.session_id, id, "{}", server.name);
        zk.close().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test]
    async fn expiry_is_reported_and_final(server) {
        let proxy = Proxy::start(&server.connect).await;
        let zk = via(&proxy, 10_000).await;
        let mut status = zk.status_watch();
        let root = unique("expiry");
        zk.create(&root, b"", &CreateOptions::persistent())
            .await
            .unwrap();
        let (_, _, watcher) = zk.get_data_w(&root).await.unwrap();
        zk.create(&format!("{root}/eph"), b"", &CreateOptions::ephemeral())
            .await
            .unwrap();

        // A second client attaches to the same session (the server drops the first one's
        // connection) and closes it, while the first one's reconnect is held.
        let mut lost = zk.status_watch();
        let disconnected = async move {
            wait_state(&mut lost, SessionState::Disconnected).await;
        };
        take_over_and_close(
            &server.connect,
            zk.session_id(),
            zk.session_password(),
            &proxy,
            disconnected,
        )
        .await;

        wait_state(&mut status, SessionState::Expired).await;
        assert!(
            matches!(within("watcher", watcher).await, Err(Error::SessionExpired)),
            "{}",
            server.name
        );
        assert!(matches!(
            zk.get_data(&root).await,
            Err(Error::SessionExpired)
        ));
        assert!(zk.status().state.is_terminal());
        let other = connect(&server.connect).await;
        assert_eq!(other.exists(&format!("{root}/eph")).await.unwrap(), None);

        // Resuming a dead session fails up front.
        let err = Client::builder()
            .session(zk.session_id(), zk.session_password())
            .connect(&server.connect)
            .await
            .unwrap_err();
        assert!(matches!(err, Error::SessionExpired), "{err}");
        zk.close().await.unwrap();
        other.close().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test]
    async fn close_and_drop_end_the_session(server) {
        let observer = connect(&server.connect).await;
        let root = unique("close");
        observer
            .create(&root, b"", &CreateOptions::persistent())
            .await
            .unwrap();

        let zk = connect(&server.connect).await;
        zk.create(&format!("{root}/a"), b"", &CreateOptions::ephemeral())
            .await
            .unwrap();
        let clone = zk.clone();
        zk.close().await.unwrap();
        assert_eq!(
            clone.status().state,
            SessionState::Closed,
            "{}",
            server.name
        );
        assert!(matches!(clone.exists("/").await, Err(Error::Closed)));
        assert!(zk.close().await.is_ok(), "closing twice is fine");
        assert_eq!(observer.exists(&format!("{root}/a")).await.unwrap(), None);

        // Dropping every handle closes the session in the background.
        let zk = connect(&server.connect).await;
        let eph = format!("{root}/b");
        zk.create(&eph, b"", &CreateOptions::ephemeral())
            .await
            .unwrap();
        let mut status = zk.status_watch();
        let (_, deleted) = observer.exists_w(&eph).await.unwrap();
        drop(zk);
        wait_state(&mut status, SessionState::Closed).await;
        assert_eq!(
            within("ephemeral deleted", deleted)
                .await
                .unwrap()
                .event_type,
            EventType::NodeDeleted
        );
        observer.close().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test]
    async fn refused_credentials_end_the_session(server) {
        let zk = connect(&server.connect).await;
        let mut status = zk.status_watch();
        let err = zk.add_auth("no-such-scheme", b"x").await.unwrap_err();
        assert!(matches!(err, Error::AuthFailed), "{}: {err}", server.name);
        wait_state(&mut status, SessionState::AuthFailed).await;
        assert!(matches!(zk.exists("/").await, Err(Error::AuthFailed)));
    }
}

on_both_servers! {
    #[tokio::test]
    async fn pipelined_replies_match_their_requests(server) {
        let zk = connect(&server.connect).await;
        let root = unique("pipeline");
        zk.create(&root, b"", &CreateOptions::persistent())
            .await
            .unwrap();
        let writes = (0..500).map(|i| {
            let (zk, root) = (&zk, &root);
            async move { zk.set_data(root, format!("{i}").as_bytes(), None).await }
        });
        let stats = within("pipelined writes", join_all(writes)).await;
        // join_all polls in no set order, so the send order is unknown; but every reply must
        // belong to its request: versions are a permutation of 1..=500, zxids grow with them,
        // and the data left is that of the request that got the last version.
        let mut by_version: Vec<(i32, i64, usize)> = stats
            .into_iter()
            .enumerate()
            .map(|(i, stat)| {
                let stat = stat.unwrap();
                (stat.version, stat.mzxid, i)
            })
            .collect();
        by_version.sort_unstable();
        for (n, window) in by_version.windows(2).enumerate() {
            assert_eq!(window[0].0, n as i32 + 1, "{}", server.name);
            assert!(window[0].1 < window[1].1, "zxids follow versions");
        }
        let last = by_version.last().unwrap();
        assert_eq!(last.0, 500);
        assert_eq!(
            zk.get_data(&root).await.unwrap().0,
            format!("{}", last.2).into_bytes()
        );

        // Polled once each, in order, the requests are sent in that order: ZooKeeper applies
        // them in it, and the versions say so.
        let mut writes: Vec<_> = (0..200)
            .map(|i| {
                let (zk, root) = (&zk, &root);
                Box::pin(async move { zk.set_data(root, format!("{i}").as_bytes(), None).await })
            })
            .collect();
        for write in &mut writes {
            std::future::poll_fn(|cx| {
                let _ = write.as_mut().poll(cx);
                std::task::Poll::Ready(())
            })
            .await;
        }
        for (i, stat) in within("ordered writes", join_all(writes))
            .await
            .into_iter()
            .enumerate()
        {
            assert_eq!(stat.unwrap().version, 501 + i as i32);
        }
        zk.close().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn load_five_clients_a_thousand_requests_each(server) {
        const CLIENTS: usize = 5;
        const REQUESTS: usize = 1000;
        let root = unique("load");
        let admin = connect(&server.connect).await;
        admin
            .create(&root, b"", &CreateOptions::persistent())
            .await
            .unwrap();
        let runs = (0..CLIENTS).map(|c| {
            let (connect_string, root) = (server.connect.clone(), root.clone());
            tokio::spawn(async move {
                let zk = connect(&connect_string).await;
                let dir = format!("{root}/c{c}");
                zk.create(&dir, b"", &CreateOptions::persistent())
                    .await
                    .unwrap();
                let creates = (0..REQUESTS).map(|i| {
                    let body = format!("{c}:{i}");
                    let path = format!("{dir}/n{i}");
                    let zk = &zk;
                    async move {
                        zk.create(&path, body.as_bytes(), &CreateOptions::ephemeral())
                            .await
                    }
                });
                for (i, created) in join_all(creates).await.into_iter().enumerate() {
                    assert_eq!(created.unwrap().0, format!("{dir}/n{i}"));
                }
                let reads = (0..REQUESTS).map(|i| {
                    let (zk, path) = (&zk, format!("{dir}/n{i}"));
                    async move { zk.get_data(&path).await }
                });
                for (i, read) in join_all(reads).await.into_iter().enumerate() {
                    assert_eq!(read.unwrap().0, format!("{c}:{i}").into_bytes());
                }
                zk.close().await.unwrap();
            })
        });
        let started = tokio::time::Instant::now();
        for run in within("load", join_all(runs)).await {
            run.expect("client task");
        }
        eprintln!(
            "{}: {} requests in {:?}",
            server.name,
            CLIENTS * REQUESTS * 2,
            started.elapsed()
        );
        assert_eq!(
            admin.get_all_children_number(&root).await.unwrap(),
            CLIENTS as i32
        );
        admin.close().await.unwrap();
    }
}

/// A scripted server: handshake, expect an idle ping, then answer two requests in the wrong
/// order. Needs no real server, so it always runs.
#[tokio::test]
async fn idle_pings_and_out_of_order_replies_drop_the_connection() {
    use futures_util::{SinkExt, StreamExt};
    use shepherd_protocol::{
        Codec, ConnectRequest, ConnectResponse, Frame, FrameCodec, OpCode, ReplyHeader, Response,
        StatResponse, decode_from, decode_request, encode_reply,
    };
    use tokio::net::TcpStream;
    use tokio_util::codec::Framed;

    async fn next(framed: &mut Framed<TcpStream, FrameCodec>) -> Vec<u8> {
        match within("a frame", framed.next()).await {
            Some(Ok(Frame::Payload(p))) => p.to_vec(),
            other => panic!("unexpected {other:?}"),
        }
    }

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (pinged_tx, pinged) = tokio::sync::oneshot::channel();
    let server = tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        let mut framed = Framed::new(socket, FrameCodec::client(1 << 20));
        let hello: ConnectRequest = decode_from(&next(&mut framed).await).unwrap();
        assert_eq!((hello.session_id, hello.read_only), (0, Some(false)));
        let response = ConnectResponse {
            protocol_version: 0,
            timeout: 3000,
            session_id: 0x0100_0000_0000_0001,
            passwd: Some(vec![7; 16]),
            read_only: Some(false),
        };
        framed.send(response.to_bytes()).await.unwrap();
        let (ping, _) = decode_request(&next(&mut framed).await).unwrap();
        assert_eq!((ping.xid, ping.op_type), (-2, i32::from(OpCode::Ping)));
        pinged_tx.send(()).unwrap();
        let (first, _) = decode_request(&next(&mut framed).await).unwrap();
        let (second, _) = decode_request(&next(&mut framed).await).unwrap();
        assert_eq!(second.xid, first.xid + 1);
        for xid in [second.xid, first.xid] {
            let mut reply = Vec::new();
            let header = ReplyHeader {
                xid,
                zxid: 5,
                err: 0,
            };
            encode_reply(
                &header,
                Some(&Response::Exists(StatResponse::default())),
                &mut reply,
            );
            framed.send(reply).await.unwrap();
        }
        // Keep the socket open: the client must be the one to drop it.
        let _ = framed.next().await;
    });

    let zk = Client::builder()
        .session_timeout(Duration::from_millis(3000))
        .connect(&addr)
        .await
        .unwrap();
    let mut status = zk.status_watch();
    assert_eq!(zk.status().timeout, Duration::from_millis(3000));
    // Idle: a ping comes within a third of the timeout (bounded here by WAIT).
    within("an idle ping", pinged).await.unwrap();
    let (a, b) = tokio::join!(zk.exists("/a"), zk.exists("/b"));
    assert!(matches!(a, Err(Error::ConnectionLoss)), "{a:?}");
    assert!(matches!(b, Err(Error::ConnectionLoss)), "{b:?}");
    wait_state(&mut status, SessionState::Disconnected).await;
    within("server script", server).await.unwrap();
}
