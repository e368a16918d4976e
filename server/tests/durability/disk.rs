//! With a data directory: what a restart (and a new server on the same directory) recovers,
//! and the errors of a directory that cannot be used, at start and while serving.

use std::time::Duration;

use shepherd_protocol::{CreateMode, Reply};
use shepherd_server::storage::StorageError;
use shepherd_testkit::{Peer, create, hello, within};

use crate::{builder, create_node, exists_in, resume, session};

/// Acknowledged writes survive a restart, sessions resume with the same id and password and
/// keep their ephemerals, and the zxid continues without repeating.
#[tokio::test]
async fn acknowledged_writes_and_sessions_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = builder().data_dir(dir.path()).start().await.unwrap();
    let (mut peer, passwd) = session(&server, 10_000).await;
    let id = peer.session_id();
    for i in 0..20 {
        create_node(&mut peer, &format!("/n{i}"), CreateMode::Persistent).await;
    }
    let last = create_node(&mut peer, "/mine", CreateMode::Ephemeral).await;

    within("the restart", server.restart()).await.unwrap();
    assert!(peer.closed().await, "the old connection is dropped");
    assert_eq!(
        server.controls().last_zxid(),
        last,
        "the zxid continues from the disk"
    );
    assert!((0..20).all(|i| exists_in(&server, &format!("/n{i}"))));

    let (mut resumed, timeout) = resume(&server, id, &passwd, last).await;
    assert!(
        timeout > 0,
        "the session is resumed with its id and password"
    );
    assert_eq!(server.controls().session(id).unwrap().ephemerals, ["/mine"]);
    let next = create_node(&mut resumed, "/after", CreateMode::Persistent).await;
    assert_eq!(next, last + 1, "the zxid continues, never repeats");
    server.shutdown().await;
}

/// A new server on the directory of one that was shut down recovers the same state: the
/// directory, not the process, holds it.
#[tokio::test]
async fn a_new_server_on_the_same_directory_recovers_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = builder().data_dir(dir.path()).start().await.unwrap();
    let (mut peer, _) = session(&server, 10_000).await;
    let last = create_node(&mut peer, "/kept", CreateMode::Persistent).await;
    server.shutdown().await;
    // The directory stays locked until the handle goes.
    drop(server);
    drop(peer);

    let server = builder().data_dir(dir.path()).start().await.unwrap();
    assert!(exists_in(&server, "/kept"));
    assert_eq!(server.controls().last_zxid(), last);
    server.shutdown().await;
}

/// Snapshots taken every few txns (snapCount 10) and the logs after them recover the same tree
/// as the log alone would.
#[tokio::test]
async fn recovery_across_snapshots_and_rolled_logs() {
    let dir = tempfile::tempdir().unwrap();
    let server = builder()
        .data_dir(dir.path())
        .snap_count(10)
        .start()
        .await
        .unwrap();
    let (mut peer, _) = session(&server, 10_000).await;
    for i in 0..60 {
        create_node(&mut peer, &format!("/s{i}"), CreateMode::Persistent).await;
    }
    let before = server.controls().dump_tree();
    within("the restart", server.restart()).await.unwrap();
    let snapshots = std::fs::read_dir(dir.path().join("version-2"))
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("snapshot.")
        })
        .count();
    assert!(snapshots >= 2, "{snapshots} snapshots");
    let after = server.controls().dump_tree();
    let paths = |tree: &[shepherd_server::core::NodeInfo]| -> Vec<String> {
        tree.iter().map(|n| n.path.clone()).collect()
    };
    assert_eq!(paths(&after), paths(&before));
    server.shutdown().await;
}

/// A session that does not come back expires a full timeout after the restart, and its
/// ephemeral goes with it.
///
/// Virtual time starts only after the restart: while a write waits for the log thread (a
/// thread of its own, invisible to tokio), a paused runtime with nothing to do would jump its
/// clock to the next timer, the session's expiry.
#[tokio::test]
async fn a_session_not_resumed_expires_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = builder().data_dir(dir.path()).start().await.unwrap();
    let (mut peer, _) = session(&server, 10_000).await;
    let id = peer.session_id();
    create_node(&mut peer, "/eph", CreateMode::Ephemeral).await;
    within("the restart", server.restart()).await.unwrap();
    tokio::time::pause();
    tokio::time::advance(Duration::from_secs(8)).await;
    assert!(
        server.controls().session(id).is_some(),
        "alive within its timeout"
    );
    tokio::time::advance(Duration::from_secs(5)).await;
    within(
        "the expiry",
        server.wait_for(|core| core.session_timeout(id).is_none()),
    )
    .await;
    assert!(!exists_in(&server, "/eph"));
    server.shutdown().await;
}

/// A data directory that cannot be created is an error that names it.
#[tokio::test]
async fn an_unwritable_data_dir_is_an_error_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    // A file where a directory must go: creating version-2 under it fails, even as root.
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, b"x").unwrap();
    let error = builder()
        .data_dir(&blocker)
        .start()
        .await
        .expect_err("a file is no data directory");
    let storage = storage_error(&error);
    let text = storage.to_string();
    assert!(text.contains("not-a-dir"), "{text}");
}

/// A disk that fills up while serving: the write that could not be logged is never
/// acknowledged, every connection closes, new ones are refused, the handle says why, and a
/// server started again on the directory has every acknowledged write and not the other.
#[tokio::test]
async fn a_log_write_error_acknowledges_nothing_more_and_closes_everything() {
    let dir = tempfile::tempdir().unwrap();
    let server = builder().data_dir(dir.path()).start().await.unwrap();
    let (mut writer, _) = session(&server, 10_000).await;
    let (mut bystander, _) = session(&server, 10_000).await;
    create_node(&mut writer, "/acked", CreateMode::Persistent).await;

    assert!(server.controls().fail_log());
    writer
        .send(&create("/lost", b"d", CreateMode::Persistent))
        .await;
    let reason = within("the failure", server.failed()).await;
    assert!(reason.contains("injected"), "{reason}");
    assert_eq!(server.failure().as_deref(), Some(reason.as_str()));
    assert!(
        writer.closed().await,
        "no reply, and the writer's connection closes"
    );
    assert!(bystander.closed().await, "every connection closes");
    // Refused either way: the port no longer listens, or it closes without an answer.
    if let Ok(stream) = tokio::net::TcpStream::connect(server.local_addr()).await {
        let mut late = Peer::new(stream);
        assert!(
            late.handshake(&hello()).await.is_none(),
            "a new session is refused once the log failed"
        );
    }
    server.shutdown().await;
    drop(server);

    let again = builder().data_dir(dir.path()).start().await.unwrap();
    assert!(
        exists_in(&again, "/acked"),
        "the acknowledged write is on disk"
    );
    assert!(!exists_in(&again, "/lost"), "the unacknowledged one is not");
    again.shutdown().await;
}

/// A snapshot that cannot be written stops the server, as ZooKeeper exits when it cannot take
/// one: nothing more is acknowledged, every connection closes, and the handle says why. (It used
/// to be logged and ignored, the server serving on without its snapshots.)
#[tokio::test]
async fn a_failed_snapshot_crash_stops_the_server() {
    let snaps = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let mut config = shepherd_server::Config::default();
    config.durability.data_dir = Some(snaps.path().to_path_buf());
    config.durability.data_log_dir = Some(logs.path().to_path_buf());
    let server = builder()
        .config(config)
        .snap_count(10)
        .start()
        .await
        .unwrap();
    // The snapshot directory goes away: the next snapshot cannot be written; the log can.
    std::fs::remove_dir_all(snaps.path().join("version-2")).unwrap();
    let (mut peer, _) = session(&server, 10_000).await;
    // One create at a time until one is not answered (the connection closed): a snapshot is
    // due every 10 or so.
    for i in 0..200 {
        peer.send(&create(&format!("/f{i}"), b"d", CreateMode::Persistent))
            .await;
        if !matches!(peer.next().await, Some(Reply::Ok(..))) {
            break;
        }
    }
    let reason = within("the failure", server.failed()).await;
    assert!(reason.contains("snapshot"), "{reason}");
    assert!(peer.closed().await, "every connection closes");
    server.shutdown().await;
}

/// The storage error a failed start carries.
fn storage_error(error: &std::io::Error) -> &StorageError {
    error
        .get_ref()
        .and_then(|e| e.downcast_ref::<StorageError>())
        .unwrap_or_else(|| panic!("not a storage error: {error:?}"))
}

/// Every file under `dir`, with its bytes: what "nothing on disk changed" compares.
fn files_under(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    out.sort();
    out
}

/// The snapshot volume gone while `dataLogDir` is elsewhere (or every snapshot removed by
/// hand): the logs left do not begin the history, so the server refuses to start, as ZooKeeper
/// does, naming the files and the override, and changes nothing on disk. Before, it replayed
/// the logs from an empty tree, served 0 of 60 acknowledged nodes, snapshotted that tree and
/// let the purge delete the older logs. With `zookeeper.snapshot.trust.empty` it starts from the
/// logs alone.
#[tokio::test]
async fn logs_without_their_snapshot_are_refused_and_left_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let (snaps, logs) = (dir.path().join("snaps"), dir.path().join("logs"));
    let separate = |b: shepherd_server::ServerBuilder| {
        b.data_dir(&snaps)
            .with_config(|c| c.durability.data_log_dir = Some(logs.clone()))
    };
    let server = separate(builder()).snap_count(10).start().await.unwrap();
    let (mut peer, _) = session(&server, 10_000).await;
    for i in 0..60 {
        create_node(&mut peer, &format!("/n{i}"), CreateMode::Persistent).await;
    }
    server.shutdown().await;
    drop(server);
    drop(peer);
    std::fs::remove_dir_all(&snaps).unwrap();
    let before = files_under(&logs);

    let error = separate(builder())
        .start()
        .await
        .expect_err("logs without their snapshot");
    let storage = storage_error(&error);
    assert!(
        matches!(storage, StorageError::LogsWithoutSnapshot { .. }),
        "{storage:?}"
    );
    let text = storage.to_string();
    for part in [
        "No snapshot found, but there are log entries",
        "log.",
        "zookeeper.snapshot.trust.empty",
        "nothing was changed on disk",
    ] {
        assert!(text.contains(part), "{part:?} in {text}");
    }
    assert_eq!(files_under(&logs), before, "the logs are as they were");
    let snap_files: Vec<_> = std::fs::read_dir(snaps.join("version-2"))
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(snap_files.is_empty(), "no snapshot written: {snap_files:?}");

    // The operator's override: the logs alone, from an empty tree.
    let server = separate(builder())
        .with_config(|c| c.durability.trust_empty_snapshot = true)
        .start()
        .await
        .unwrap();
    assert!(server.controls().last_zxid() > 0);
    server.shutdown().await;
}

/// The guard against a second server is on the directory itself: a tidy-up that deletes every
/// file at the top of the data directory while a server runs (a stale-pid clean-up removing
/// what looks like a lock file) cannot let another server start there. Before, deleting
/// `shepherd.lock` let a second server in, both acknowledged writes, and after a restart one
/// server's write was gone.
#[tokio::test]
async fn deleting_files_cannot_let_a_second_server_onto_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let server = builder().data_dir(dir.path()).start().await.unwrap();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::remove_file(&path).unwrap();
        }
    }
    let error = builder()
        .data_dir(dir.path())
        .start()
        .await
        .expect_err("a second server on a directory in use");
    let storage = storage_error(&error);
    assert!(
        matches!(storage, StorageError::Locked { .. }),
        "{storage:?}"
    );
    assert!(storage.to_string().contains("in use by another server"));
    // The first one serves on.
    let (mut peer, _) = session(&server, 10_000).await;
    create_node(&mut peer, "/still", CreateMode::Persistent).await;
    server.shutdown().await;
}

/// A logged transaction whose recorded tree digest is not the tree replay rebuilds (a damaged
/// or foreign log that still passes its checksums) stops the start, naming the zxid and both
/// digests, and nothing on disk changes. Before, it was a warning, and the server served (then
/// snapshotted) a tree that was not the one written.
#[tokio::test]
async fn a_digest_the_replayed_tree_does_not_match_stops_the_start() {
    use shepherd_server::storage::{DataDir, read_logs};
    let dir = tempfile::tempdir().unwrap();
    let server = builder().data_dir(dir.path()).start().await.unwrap();
    let (mut peer, _) = session(&server, 10_000).await;
    for i in 0..5 {
        create_node(&mut peer, &format!("/d{i}"), CreateMode::Persistent).await;
    }
    server.shutdown().await;
    drop(server);
    drop(peer);
    // The same entries written again, the last one's digest changed.
    let data = DataDir::open(dir.path(), None).unwrap();
    let mut entries: Vec<_> = read_logs(data.log_dir(), 0)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let last = entries.last_mut().unwrap();
    let digest = last
        .digest
        .as_mut()
        .expect("3.8 logs a digest after each txn");
    digest.tree_digest ^= 1;
    let zxid = last.header.zxid;
    for (_, path) in data.logs().unwrap() {
        std::fs::remove_file(path).unwrap();
    }
    let mut log = data.txn_log(0);
    for entry in &entries {
        log.append(entry).unwrap();
    }
    log.commit(true).unwrap();
    drop(log);
    drop(data);
    let before = files_under(dir.path());

    let error = builder()
        .data_dir(dir.path())
        .start()
        .await
        .expect_err("a digest mismatch");
    let text = error.to_string();
    assert!(
        text.contains(&format!("tree digest recorded at zxid {zxid:#x}")),
        "{text}"
    );
    assert_eq!(files_under(dir.path()), before, "nothing on disk changed");
}
