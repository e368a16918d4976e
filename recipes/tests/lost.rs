//! Losing a lock and losing replies: `lost()` on expiry, deletion and a long disconnection;
//! guarded writes failing once the lock node is gone; a create or delete whose reply is cut
//! leaving no orphan.

use std::time::Duration;

use shepherd_client::{Client, CreateOptions, Error as ZkError, ErrorCode};
use shepherd_protocol::OpCode;
use shepherd_recipes::{
    EphemeralLock, Error, Guard, Lock, LockGuard, LockKind, LockStats, LostReason, Mutex,
    ReadWriteLock, SemaphoreMutex, SequentialLock, SharedLock, WriteLock,
};
use shepherd_testkit::locks::take;
use shepherd_testkit::on_both_servers;
use shepherd_testkit::{
    CutAfter, Proxy, children, connect, connect_with, expire_by_take_over, unique, within,
};

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn expiry_while_holding_fires_lost(server) {
        let proxy = Proxy::start(&server.connect).await;
        let client = connect(proxy.addr()).await;
        let path = unique("expire");
        let mutex = Mutex::new(&client, &path);
        let guard = mutex.acquire().await.unwrap();
        let eph = EphemeralLock::new(&client, format!("{path}-eph"))
            .acquire()
            .await
            .unwrap();
        let lost = guard.lost();
        assert_eq!(guard.lost_reason(), None);
        expire_by_take_over(&client, &server.connect, &proxy).await;
        let reason = within("lost", lost).await;
        assert!(
            matches!(reason, LostReason::SessionExpired | LostReason::NodeDeleted),
            "{reason:?}"
        );
        assert!(within("lost", eph.lost()).await != LostReason::Released);
        assert!(!mutex.is_held(), "a lost hold is not re-entered");
        // The node went with the session: another client gets the lock at once.
        let other = connect(&server.connect).await;
        let next = Mutex::new(&other, &path)
            .acquire_timeout(Duration::from_secs(5))
            .await
            .unwrap();
        assert!(next.expect("free after expiry").fencing_token() > guard.fencing_token());
        // Releasing a lost guard is harmless.
        guard.release().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn deleted_lock_node_fails_guarded_writes(server) {
        let (client, admin) = (
            connect(&server.connect).await,
            connect(&server.connect).await,
        );
        let path = unique("guarded");
        let data = format!("{path}-data");
        admin
            .create(&data, b"0", &CreateOptions::persistent())
            .await
            .unwrap();
        let guards: Vec<LockGuard> = vec![
            SequentialLock::new(&client, format!("{path}/seq"))
                .acquire()
                .await
                .unwrap(),
            Mutex::new(&client, format!("{path}/mutex"))
                .acquire()
                .await
                .unwrap(),
            SharedLock::new(&client, format!("{path}/shared"))
                .write_lock()
                .acquire()
                .await
                .unwrap(),
            ReadWriteLock::new(&client, format!("{path}/rw"))
                .read_lock()
                .acquire()
                .await
                .unwrap(),
            SemaphoreMutex::new(&client, format!("{path}/sem"))
                .acquire()
                .await
                .unwrap(),
            WriteLock::new(&client, format!("{path}/wl"))
                .acquire()
                .await
                .unwrap(),
            EphemeralLock::new(&client, format!("{path}/eph"))
                .acquire()
                .await
                .unwrap(),
        ];
        for guard in guards {
            let results = guard
                .write(|m| m.set_data(&data, b"1", None))
                .await
                .unwrap();
            assert_eq!(results.len(), 1, "only the caller's results");
            // A failing op of the caller's keeps its own index.
            let err = guard
                .write(|m| m.set_data(&data, b"x", Some(999)))
                .await
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::Client(ZkError::MultiFailed {
                        index: 0,
                        code: ErrorCode::BadVersion
                    })
                ),
                "{err:?}"
            );
            let lost = guard.lost();
            admin.delete(guard.path(), None).await.unwrap();
            assert_eq!(within("lost", lost).await, LostReason::NodeDeleted);
            let err = guard
                .write(|m| m.set_data(&data, b"2", None))
                .await
                .unwrap_err();
            assert!(
                matches!(err, Error::LockLost(LostReason::NodeDeleted)),
                "{err:?}"
            );
            guard.release().await.unwrap();
        }
        assert_eq!(admin.get_data(&data).await.unwrap().0, b"1");
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn disconnected_past_session_timeout_fires_lost(server) {
        let proxy = Proxy::start(&server.connect).await;
        // ZooKeeper's minimum (two ticks of 2 s) is what we get.
        let client = connect_with(proxy.addr(), Duration::from_secs(4)).await;
        let guard = SequentialLock::new(&client, unique("disconnect"))
            .acquire()
            .await
            .unwrap();
        proxy.hold();
        proxy.cut_all();
        let reason = within("lost", guard.lost()).await;
        assert!(
            matches!(
                reason,
                LostReason::Disconnected | LostReason::SessionExpired
            ),
            "{reason:?}"
        );
        drop(guard);
        drop(proxy);
    }
}

on_both_servers! {
    /// Cuts the connection right after the lock node's create reached the server, for every lock
    /// type: the lock is still acquired exactly once, with no orphan; then the same for the
    /// release's delete.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn connection_loss_during_create_and_delete_leaves_no_orphan(server) {
        let admin = connect(&server.connect).await;
        let proxy = Proxy::start(&server.connect).await;
        let client = connect(proxy.addr()).await;
        let base = unique("cut");
        admin
            .create(&base, b"", &CreateOptions::persistent())
            .await
            .unwrap();
        for kind in LockKind::ALL {
            let path = format!("{base}/{}", kind.as_str());
            // The folders exist, so the create that is cut is the one that makes our node.
            for dir in std::iter::once(path.clone()).chain(lock_dirs(kind, &path)) {
                match admin.create(&dir, b"", &CreateOptions::persistent()).await {
                    Err(e) if e.is_node_exists() => {}
                    r => {
                        r.unwrap();
                    }
                }
            }
            let cuts = proxy.cuts();
            proxy.cut_after(
                CutAfter::request([OpCode::Create, OpCode::Create2])
                    .path_contains(node_marker(kind)),
            );
            let held = within(
                "acquire across a cut",
                take(kind, &client, &path, &LockStats::new()),
            )
            .await;
            assert_eq!(
                proxy.cuts(),
                cuts + 1,
                "{kind:?}: the create's reply was cut"
            );
            let nodes = held.paths();
            assert_eq!(
                lock_nodes(&admin, kind, &path).await,
                nodes,
                "{kind:?}: exactly our node(s)"
            );
            for (node, token) in nodes.iter().zip(held.fencing_token()) {
                assert_eq!(admin.exists(node).await.unwrap().unwrap().czxid, token);
            }

            let first = nodes[0].rsplit('/').next().unwrap().to_owned();
            proxy.cut_after(CutAfter::request([OpCode::Delete]).path_contains(first));
            within("release across a cut", held.release())
                .await
                .unwrap();
            assert_eq!(
                proxy.cuts(),
                cuts + 2,
                "{kind:?}: the delete's reply was cut"
            );
            assert!(
                lock_nodes(&admin, kind, &path).await.is_empty(),
                "{kind:?}: released"
            );
        }
        eprintln!(
            "{}: {} lock kinds acquired and released across cut replies",
            server.name,
            LockKind::ALL.len()
        );
    }
}

/// Every node in the lock folders of `kind` on `path`, sorted.
async fn lock_nodes(admin: &Client, kind: LockKind, path: &str) -> Vec<String> {
    let mut out = Vec::new();
    for dir in lock_dirs(kind, path) {
        out.extend(
            children(admin, &dir)
                .await
                .into_iter()
                .map(|c| format!("{dir}/{c}")),
        );
    }
    out.sort();
    out
}

/// The folders holding the lock nodes of `kind` on `path`: a fact of each recipe's layout that
/// the crate keeps to itself.
fn lock_dirs(kind: LockKind, path: &str) -> Vec<String> {
    match kind {
        LockKind::SemaphoreMutex => vec![format!("{path}/leases"), format!("{path}/locks")],
        LockKind::MultiLock => vec![format!("{path}/a"), format!("{path}/b")],
        _ => vec![path.to_owned()],
    }
}

/// A string in the path of the (first) lock node `kind` creates, and in no folder or other
/// node it creates first: where the proxy is told to cut.
fn node_marker(kind: LockKind) -> &'static str {
    match kind {
        LockKind::Ephemeral => "/lock",
        LockKind::Sequential(_) | LockKind::Mutex | LockKind::MultiLock => "-lock-",
        LockKind::WriteLock => "/x-",
        LockKind::SharedRead(_) => "-read-",
        LockKind::SharedWrite(_) => "-write-",
        LockKind::SemaphoreMutex => "-lease-",
        LockKind::RwRead => "__READ__",
        LockKind::RwWrite => "__WRIT__",
    }
}
