//! Notification floods to peers that do not read them: the bytes queued for one connection are
//! capped, and the connection that would pass the cap is closed, alone.

use std::sync::atomic::Ordering::Relaxed;

use shepherd_protocol::{AddWatchMode, AddWatchRequest, Reply, Request, SetWatches};
use shepherd_server::Server;
use shepherd_testkit::{set_data, within};

use crate::pipe::{PIPE, bystander_is_served, bytes_until_closed, server, session};

/// One setWatches lists "/" 200 000 times as an exist watch: 200 000 NodeCreated
/// notifications at once, about 19 MB as the server holds them, for a peer that reads none of
/// them through a 4 KiB pipe. With the default limit (8 MiB) the connection is closed
/// mid-flood and counted; the peer gets what its pipe held, then the end of the stream. A
/// session watching "/" meanwhile is served, and so is one started afterwards.
#[tokio::test]
async fn a_setwatches_flood_to_a_peer_that_never_reads_is_closed_at_the_limit() {
    let server = server().await;
    let mut watcher = session(&server, PIPE, 30_000).await;
    let mut flooder = session(&server, 4096, 30_000).await;
    flooder
        .send_as(
            -8,
            &Request::SetWatches(SetWatches {
                relative_zxid: server.controls().last_zxid(),
                data_watches: Vec::new(),
                exist_watches: vec!["/".to_owned(); 200_000],
                child_watches: Vec::new(),
            }),
        )
        .await;
    let mut stream = flooder.into_inner();
    let got = bytes_until_closed(&mut stream).await;
    assert!(got <= 4096, "{got} bytes");
    assert_eq!(server.stats().closed_outbound_limit.load(Relaxed), 1);

    // Then a change to "/": the watcher that asked is told, as usual.
    let watched = watcher.call(&shepherd_testkit::exists("/", true)).await;
    assert!(matches!(watched, Reply::Ok(..)), "{watched:?}");
    let mut writer = session(&server, PIPE, 30_000).await;
    assert!(matches!(
        writer.call(&set_data("/", b"x")).await,
        Reply::Ok(..)
    ));
    assert!(matches!(watcher.next().await, Some(Reply::Event(..))));
    bystander_is_served(&server, "after-the-flood").await;
}

/// A peer leaves a persistent recursive watch on "/" and stops reading; another session keeps
/// changing "/". The peer's connection is closed when its unread notifications reach the limit
/// (1 MiB here), and the writer's requests are all answered meanwhile.
#[tokio::test]
async fn a_watcher_that_never_reads_is_closed_when_its_notifications_reach_the_limit() {
    let server = Server::builder()
        .max_outbound_bytes(1 << 20)
        .start()
        .await
        .expect("server starts");
    let mut watcher = session(&server, 4096, 30_000).await;
    let added = watcher
        .call(&Request::AddWatch(AddWatchRequest {
            path: "/".into(),
            mode: AddWatchMode::PersistentRecursive.into(),
        }))
        .await;
    assert!(matches!(added, Reply::Ok(..)), "{added:?}");
    let mut stream = watcher.into_inner();

    let mut writer = session(&server, PIPE, 30_000).await;
    let changes = within("the watcher to be closed", async {
        let mut changes = 0;
        while server.stats().closed_outbound_limit.load(Relaxed) == 0 {
            assert!(changes < 100_000, "never closed");
            assert!(matches!(
                writer.call(&set_data("/", b"x")).await,
                Reply::Ok(..)
            ));
            changes += 1;
        }
        changes
    })
    .await;
    // A notification of "/" holds 33 bytes, and 64 more as the limit counts a queued frame.
    assert!(changes > (1 << 20) / 97, "closed after {changes} changes");
    assert!(bytes_until_closed(&mut stream).await <= 4096);
    bystander_is_served(&server, "beside-a-deaf-watcher").await;
}
