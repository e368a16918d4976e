//! Session expiry, for every lock type at once (one expiry per server and test keeps it fast):
//! while waiting, the acquisition fails with `SessionExpired` and leaves no node; while
//! holding, `lost()` fires, the node is gone and the next contender gets the lock at once.
//!
//! The embedded server expires the session itself (`Controls::expire_session`, as a
//! timeout would); real ZooKeeper is made to by a second client taking the session over and
//! closing it while the proxy holds our client's reconnects (`TestServer::expire`).

use std::time::Duration;

use shepherd_client::Error as ZkError;
use shepherd_recipes::{AnyGuard, Error, Guard, Lock, LockKind, LockStats, LostReason};
use shepherd_testkit::locks::take;
use shepherd_testkit::on_both_servers;
use shepherd_testkit::{Proxy, connect, ephemerals, unique, within};

const FREE: Duration = Duration::from_secs(5);

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn expiry_while_waiting_fails_and_leaves_no_node(server) {
        let holder = connect(&server.connect).await;
        let proxy = Proxy::start(&server.connect).await;
        let waiter = connect(proxy.addr()).await;
        let base = unique("expire-waiting");
        let mut held = Vec::new();
        let mut waiting = Vec::new();
        for kind in LockKind::ALL {
            let path = format!("{base}/{}", kind.as_str());
            let h = take(kind.exclusive(), &holder, &path, &LockStats::new()).await;
            let stats = LockStats::new();
            let task = tokio::spawn({
                let (c, p, st) = (waiter.clone(), path.clone(), stats.clone());
                async move { kind.build(&c, p).with_stats(st).acquire().await.map(drop) }
            });
            within(
                &format!("{kind:?} waiting"),
                stats.wait_for(|s| s.waiting == 1),
            )
            .await;
            held.push((kind, path, h));
            waiting.push((kind, task));
        }
        let (held_nodes, waiter_nodes): (Vec<_>, Vec<_>) = ephemerals(&holder, &base)
            .await
            .into_iter()
            .partition(|(_, owner)| *owner == holder.session_id());
        assert_eq!(
            held_nodes.len(),
            LockKind::ALL.len() + 1,
            "one node each, two for multi"
        );
        // One each in line, but none for the fixed-node lock and two for the semaphore (its
        // lease, and its place in the inner `locks` mutex that it holds while it waits).
        assert_eq!(waiter_nodes.len(), LockKind::ALL.len(), "{waiter_nodes:?}");

        server.expire(&waiter, &proxy).await;
        for (kind, task) in waiting {
            let result = within("the acquisition fails", task).await.expect("task");
            assert!(
                matches!(result, Err(Error::Client(ZkError::SessionExpired))),
                "{}: {kind:?}: {result:?}",
                server.name
            );
        }
        // Only the holder's nodes are left; not one of the waiter's.
        assert_eq!(
            ephemerals(&holder, &base).await,
            held_nodes,
            "{}",
            server.name
        );

        // Nothing wedged: once the holder lets go, a fresh client gets each lock at once.
        let fresh = connect(&server.connect).await;
        for (kind, path, h) in held {
            h.release().await.unwrap();
            let next = kind
                .build(&fresh, &path)
                .acquire_timeout(FREE)
                .await
                .unwrap()
                .unwrap_or_else(|| panic!("{kind:?}: free after the holder's release"));
            next.release().await.unwrap();
        }
        assert!(ephemerals(&fresh, &base).await.is_empty());
        eprintln!(
            "{}: {} waiting acquisitions failed with SessionExpired, no node left",
            server.name,
            LockKind::ALL.len()
        );
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn expiry_while_holding_fires_lost_for_every_type(server) {
        let proxy = Proxy::start(&server.connect).await;
        let client = connect(proxy.addr()).await;
        let base = unique("expire-holding");
        let mut held: Vec<(_, _, AnyGuard)> = Vec::new();
        for kind in LockKind::ALL {
            let path = format!("{base}/{}", kind.as_str());
            let h = take(kind, &client, &path, &LockStats::new()).await;
            held.push((kind, path, h));
        }
        let lost: Vec<_> = held.iter().map(|(_, _, h)| h.lost()).collect();

        server.expire(&client, &proxy).await;
        let other = connect(&server.connect).await;
        for ((kind, path, h), lost) in held.into_iter().zip(lost) {
            let reason = within("lost", lost).await;
            assert!(
                matches!(reason, LostReason::SessionExpired | LostReason::NodeDeleted),
                "{}: {kind:?}: {reason:?}",
                server.name
            );
            for node in h.paths() {
                assert!(
                    other.exists(node).await.unwrap().is_none(),
                    "{kind:?}: {node} went with the session"
                );
            }
            // The next contender gets it at once, with a larger token.
            let next = kind
                .build(&other, &path)
                .acquire_timeout(FREE)
                .await
                .unwrap()
                .unwrap_or_else(|| panic!("{kind:?}: free after expiry"));
            let (old, new) = (h.fencing_token(), next.fencing_token());
            assert!(
                old.iter().zip(&new).all(|(o, n)| n > o),
                "{kind:?}: {old:?} then {new:?}"
            );
            // Releasing a lost lock is harmless.
            h.release().await.unwrap();
            next.release().await.unwrap();
        }
        assert!(ephemerals(&other, &base).await.is_empty());
    }
}
