//! The durability gate: with the log held (a disk that stops answering), a write is applied
//! but nothing that reveals it leaves the server: not its reply, not the event it triggers,
//! not another session's read of it. Released, they come in the core's order.

use std::time::Duration;

use shepherd_protocol::{CreateMode, EventType, Reply};
use shepherd_server::Server;
use shepherd_testkit::{create, exists, get_data, reply_header, set_data, within};

use crate::{builder, exists_in, session};

/// How long "nothing arrives" is checked for while the log is held.
const QUIET: Duration = Duration::from_millis(200);

#[tokio::test]
async fn a_reply_an_event_and_a_read_wait_for_the_disk() {
    let dir = tempfile::tempdir().unwrap();
    let server = builder().data_dir(dir.path()).start().await.unwrap();
    let (mut writer, _) = session(&server, 10_000).await;
    let (mut watcher, _) = session(&server, 10_000).await;
    watcher.call(&exists("/x", true)).await;

    assert!(server.controls().freeze_log());
    let durable = server.controls().durable_zxid().unwrap();
    writer
        .send(&create("/x", b"v", CreateMode::Persistent))
        .await;
    // The reply and the event are held once the create is applied; then another session
    // reads what is not on disk yet, and its reply is held behind them. (The gate is checked
    // from the predicate, with the core locked: the gate's lock comes after the core's.)
    within(
        "the create applied",
        server.wait_for(|_| server.controls().held_for_disk() >= 2),
    )
    .await;
    watcher.send(&get_data("/x")).await;
    within(
        "the read held",
        server.wait_for(|_| server.controls().held_for_disk() >= 3),
    )
    .await;
    assert!(exists_in(&server, "/x"), "applied in memory");
    assert!(
        writer.silent_for(QUIET).await,
        "no reply before the disk has it"
    );
    assert!(
        watcher.silent_for(QUIET).await,
        "no event, no read before the disk has it"
    );
    assert_eq!(server.controls().durable_zxid(), Some(durable));

    assert!(server.controls().thaw_log());
    let reply = writer.next().await.expect("the reply once on disk");
    assert!(matches!(reply, Reply::Ok(..)), "{reply:?}");
    let zxid = reply_header(&reply).zxid;
    assert!(server.controls().durable_zxid().unwrap() >= zxid);
    match watcher.next().await.expect("the event") {
        Reply::Event(_, event) => assert_eq!(event.event_type, EventType::NodeCreated),
        other => panic!("the event comes first: {other:?}"),
    }
    let read = watcher.next().await.expect("the read");
    assert!(matches!(read, Reply::Ok(..)), "{read:?}");
    assert_eq!(server.controls().held_for_disk(), 0);
    server.shutdown().await;
}

/// In memory there is no log to hold: the control says so and nothing waits.
#[tokio::test]
async fn in_memory_there_is_no_log_to_freeze() {
    let server = builder().start().await.unwrap();
    assert!(!server.controls().freeze_log());
    assert_eq!(server.controls().durable_zxid(), None);
    let (mut peer, _) = session(&server, 10_000).await;
    peer.call(&create("/y", b"", CreateMode::Persistent)).await;
    assert_eq!(server.controls().held_for_disk(), 0);
    server.shutdown().await;
}

/// The figure `mntr` gives for `zk_outstanding_requests`.
fn outstanding(server: &Server) -> usize {
    let mntr = server
        .controls()
        .four_letter_word(shepherd_protocol::FourLetterWord::Mntr);
    mntr.lines()
        .find_map(|l| l.strip_prefix("zk_outstanding_requests\t"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no zk_outstanding_requests in {mntr}"))
}

/// While the log does not return (an fsync that hangs), a client pipelining reads of a 512 KiB
/// node behind a write is read only until the disk backlog's bound (32 MiB): `mntr` counts the
/// outstanding requests, the server holds far fewer than were sent, and once the log goes on
/// every request is answered, none dropped. (Every one used to be read and its reply held: the
/// server's memory grew with the pipeline.)
#[tokio::test]
async fn a_stalled_log_stops_reading_at_the_backlog_bound_and_drops_nothing() {
    const READS: usize = 150;
    let dir = tempfile::tempdir().unwrap();
    // The connection's own outbound cap (8 MiB by default) is raised: its reader stops at half
    // of it, and this is about the server-wide bound.
    let server = builder()
        .data_dir(dir.path())
        .max_outbound_bytes(128 << 20)
        .start()
        .await
        .unwrap();
    let (mut peer, _) = session(&server, 30_000).await;
    let big = vec![7u8; 512 * 1024];
    assert!(matches!(
        peer.call(&create("/big", &big, CreateMode::Persistent))
            .await,
        Reply::Ok(..)
    ));
    assert_eq!(outstanding(&server), 0);
    assert!(server.controls().freeze_log());
    peer.send(&set_data("/big", &big)).await;
    for _ in 0..READS {
        peer.send(&get_data("/big")).await;
    }
    // Held behind the write: the reads' replies, 512 KiB each, until the bound stops reading.
    let mut held = 0;
    for _ in 0..500 {
        held = outstanding(&server);
        if held >= 40 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(held >= 40, "outstanding {held}: the reads were not held");
    assert!(
        server.controls().held_for_disk() < READS / 2 + 32,
        "{} held: reading did not stop at the bound",
        server.controls().held_for_disk()
    );
    assert!(server.controls().thaw_log());
    for i in 0..=READS {
        let reply = within("a reply after the thaw", peer.next()).await;
        assert!(matches!(reply, Some(Reply::Ok(..))), "reply {i}: {reply:?}");
    }
    assert_eq!(outstanding(&server), 0);
    server.shutdown().await;
}

/// While the log is held, a client pipelining reads of a 512 KiB node behind a write is read
/// only until half its outbound limit (8 × jute.maxbuffer, 8 MiB by default) waits for the
/// disk: a dozen replies held, not forty. Once the log goes on every request is answered, in
/// order, and the connection is not closed. (A reply used to count against the limit only once
/// the disk released it: all forty were held, about 20 MiB, and their release passed the
/// limit and closed the connection, its replies lost.)
#[tokio::test]
async fn replies_held_for_the_disk_count_against_the_connections_cap_from_the_start() {
    const READS: usize = 40;
    const NODE: usize = 512 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let server = builder().data_dir(dir.path()).start().await.unwrap();
    let (mut peer, _) = session(&server, 30_000).await;
    let big = vec![7u8; NODE];
    assert!(matches!(
        peer.call(&create("/big", &big, CreateMode::Persistent))
            .await,
        Reply::Ok(..)
    ));
    assert!(server.controls().freeze_log());
    peer.send(&set_data("/big", &big)).await;
    for _ in 0..READS {
        peer.send(&get_data("/big")).await;
    }
    // Half the default limit is 4 MiB: eight replies of 512 KiB and the write's.
    let most = (8 * shepherd_protocol::DEFAULT_MAX_BUFFER / 2) / NODE + 2;
    within(
        "the reads held",
        server.wait_for(|_| server.controls().held_for_disk() >= most - 1),
    )
    .await;
    assert!(peer.silent_for(QUIET).await, "nothing before the disk");
    let held = server.controls().held_for_disk();
    assert!(
        held <= most,
        "{held} held: reading did not stop at half the connection's limit"
    );
    assert!(server.controls().thaw_log());
    for i in 0..=READS {
        let reply = within("a reply after the thaw", peer.next()).await;
        assert!(matches!(reply, Some(Reply::Ok(..))), "reply {i}: {reply:?}");
    }
    assert_eq!(
        server
            .stats()
            .closed_outbound_limit
            .load(std::sync::atomic::Ordering::Relaxed),
        0
    );
    server.shutdown().await;
}
