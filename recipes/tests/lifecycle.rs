//! Timeouts, cancellation and reentrancy: no acquisition that gives up leaves a node behind.

use std::time::Duration;

use shepherd_client::Client;
use shepherd_recipes::{
    EphemeralLock, Error, Guard, Lock, MultiLock, Mutex, ReadWriteLock, SemaphoreMutex,
    SequentialLock, SharedLock, WriteLock,
};
use shepherd_testkit::on_both_servers;
use shepherd_testkit::{TestServer, children, connect, unique, wait_children, within};

const SHORT: Duration = Duration::from_millis(300);

/// Two sessions on `server`: in every test here `a` holds and `b` contends.
async fn two_sessions(server: &TestServer) -> (Client, Client) {
    (
        connect(&server.connect).await,
        connect(&server.connect).await,
    )
}

/// Asserts that `lock`, held by someone else, is refused in every bounded form: after waiting
/// [`SHORT`], on `try_acquire`, and with a zero timeout (which means the same).
async fn assert_refused(lock: &impl Lock) {
    let path = lock.path().to_owned();
    let waited = lock.acquire_timeout(SHORT).await.unwrap();
    assert!(waited.is_none(), "{path}: granted within {SHORT:?}");
    let tried = lock.try_acquire().await.unwrap();
    assert!(tried.is_none(), "{path}: granted by try_acquire");
    let zero = lock.acquire_timeout(Duration::ZERO).await.unwrap();
    assert!(zero.is_none(), "{path}: granted with a zero timeout");
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn timeouts_leave_no_node(server) {
        let (a, b) = two_sessions(&server).await;

        let path = unique("to-eph");
        let held = EphemeralLock::new(&a, format!("{path}/lock"))
            .acquire()
            .await
            .unwrap();
        assert_refused(&EphemeralLock::new(&b, format!("{path}/lock"))).await;
        assert_eq!(children(&a, &path).await, ["lock"]);
        held.release().await.unwrap();

        let path = unique("to-seq");
        let held = SequentialLock::new(&a, &path).acquire().await.unwrap();
        assert_refused(&SequentialLock::new(&b, &path)).await;
        assert_refused(&WriteLock::new(&b, &path)).await;
        assert_refused(&Mutex::new(&b, &path)).await;
        assert_refused(&SharedLock::new(&b, &path).read_lock()).await;
        assert_refused(&ReadWriteLock::new(&b, &path).read_lock()).await;
        assert_refused(&ReadWriteLock::new(&b, &path).write_lock()).await;
        assert_eq!(
            children(&a, &path).await,
            [held.path().rsplit('/').next().unwrap()]
        );
        held.release().await.unwrap();

        let path = unique("to-shared");
        let reader = SharedLock::new(&a, &path)
            .read_lock()
            .acquire()
            .await
            .unwrap();
        assert_refused(&SharedLock::new(&b, &path).write_lock()).await;
        let other_reader = SharedLock::new(&b, &path)
            .read_lock()
            .try_acquire()
            .await
            .unwrap()
            .expect("readers share");
        assert_eq!(children(&a, &path).await.len(), 2);
        drop((reader, other_reader));
        wait_children(&a, &path, <[String]>::is_empty).await;

        let path = unique("to-sem");
        let held = SemaphoreMutex::new(&a, &path).acquire().await.unwrap();
        assert_refused(&SemaphoreMutex::new(&b, &path)).await;
        assert_eq!(children(&a, &format!("{path}/leases")).await.len(), 1);
        assert!(children(&a, &format!("{path}/locks")).await.is_empty());
        held.release().await.unwrap();
        assert!(children(&a, &format!("{path}/leases")).await.is_empty());

        let path = unique("to-multi");
        let (pa, pb) = (format!("{path}/a"), format!("{path}/b"));
        let held = Mutex::new(&a, &pb).acquire().await.unwrap();
        let multi = MultiLock::new(&b, [&pa, &pb]);
        assert_refused(&multi).await;
        assert!(
            children(&a, &pa).await.is_empty(),
            "the lock taken first is released"
        );
        assert_eq!(children(&a, &pb).await.len(), 1);
        held.release().await.unwrap();
        let both = within("multi", multi.acquire()).await.unwrap();
        assert_eq!(both.fencing_token().len(), 2);
        both.release().await.unwrap();
        assert!(children(&a, &pa).await.is_empty() && children(&a, &pb).await.is_empty());
    }
}

on_both_servers! {
    /// Dropping an acquire future, while it waits or while its create is in flight, leaves no
    /// node once the background cleanup ran.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cancelled_acquisitions_leave_no_node(server) {
        let (a, b) = two_sessions(&server).await;
        let path = unique("cancel");
        let held = Mutex::new(&a, &path).acquire().await.unwrap();
        let own = held.path().rsplit('/').next().unwrap().to_owned();

        // Waiting: abort the task once its node is in line.
        let waiter = Mutex::new(&b, &path);
        let stats = waiter.stats().clone();
        let task = tokio::spawn(async move { waiter.acquire().await.map(drop) });
        within("waiter in line", stats.wait_for(|s| s.waiting == 1)).await;
        assert_eq!(children(&a, &path).await.len(), 2);
        task.abort();
        wait_children(&a, &path, |c| c == [own.clone()]).await;

        // In flight: the create was queued at the first poll, then the future is dropped.
        for _ in 0..3 {
            let (mutex, seq) = (Mutex::new(&b, &path), SequentialLock::new(&b, &path));
            tokio::select! {
                biased;
                _ = mutex.acquire() => panic!("the lock is held"),
                _ = std::future::ready(()) => {}
            }
            tokio::select! {
                biased;
                _ = seq.acquire() => panic!("the lock is held"),
                _ = std::future::ready(()) => {}
            }
        }
        // Requests are applied in order: after this round trip the creates have happened.
        b.exists("/").await.unwrap();
        wait_children(&a, &path, |c| c == [own.clone()]).await;

        // The fixed-node lock: its in-flight create must not survive either.
        let fixed = unique("cancel-eph");
        a.create(&fixed, b"", &shepherd_client::CreateOptions::persistent())
            .await
            .unwrap();
        // The node is free, so its acquisition can win the race: on a loaded machine the
        // whole round trip may finish before the first poll looks at the reply. Then it is
        // released and another one cancelled, until one is dropped in flight.
        let mut dropped_in_flight = false;
        for _ in 0..20 {
            let eph = EphemeralLock::new(&b, format!("{fixed}/lock"));
            tokio::select! {
                biased;
                won = eph.acquire() => won.unwrap().release().await.unwrap(),
                _ = std::future::ready(()) => {
                    dropped_in_flight = true;
                    break;
                }
            }
        }
        assert!(dropped_in_flight, "20 acquisitions of a free node all done at the first poll");
        b.exists("/").await.unwrap();
        wait_children(&a, &fixed, <[String]>::is_empty).await;
        held.release().await.unwrap();
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn mutex_is_reentrant_per_owner(server) {
        let (a, b) = two_sessions(&server).await;
        let path = unique("reentrant");
        let mutex = Mutex::new(&a, &path);
        let first = mutex.acquire().await.unwrap();
        let second = mutex.acquire().await.unwrap();
        assert_eq!(first.path(), second.path());
        assert_eq!(mutex.hold_count(), 2);
        assert_eq!(children(&a, &path).await.len(), 1);
        // Another owner, even on the same client, is excluded.
        assert_refused(&Mutex::new(&a, &path)).await;
        assert_refused(&Mutex::new(&b, &path)).await;
        first.release().await.unwrap();
        assert_eq!(mutex.hold_count(), 1);
        assert!(mutex.is_held());
        assert_eq!(children(&a, &path).await.len(), 1);
        second.release().await.unwrap();
        assert!(!mutex.is_held());
        assert!(children(&a, &path).await.is_empty());
        let again = Mutex::new(&b, &path)
            .acquire_timeout(SHORT)
            .await
            .unwrap()
            .expect("free");
        drop(again); // released in the background
        wait_children(&a, &path, <[String]>::is_empty).await;
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn read_write_lock_reentrancy_downgrade_no_upgrade(server) {
        let (a, b) = two_sessions(&server).await;
        let path = unique("rwlock");
        let mine = ReadWriteLock::new(&a, &path);
        let other = ReadWriteLock::new(&b, &path);

        let w1 = mine.write_lock().acquire().await.unwrap();
        let w2 = mine.write_lock().acquire().await.unwrap();
        assert_eq!(mine.write_hold_count(), 2);
        assert_refused(&other.read_lock()).await;
        // Downgrade: the writer takes the read half, then lets the write half go.
        let r = within("downgrade", mine.read_lock().acquire())
            .await
            .unwrap();
        assert!(r.path().contains("__READ__") && w1.path().contains("__WRIT__"));
        drop(w1);
        w2.release().await.unwrap();
        assert_eq!(mine.write_hold_count(), 0);
        let shared = within("other reader", other.read_lock().acquire())
            .await
            .unwrap();
        assert!(
            other
                .write_lock()
                .acquire_timeout(SHORT)
                .await
                .unwrap_err_or_none()
        );
        // Upgrade refused rather than deadlocking.
        assert!(matches!(
            mine.write_lock().acquire().await,
            Err(Error::UpgradeNotSupported)
        ));
        drop(shared);
        r.release().await.unwrap();
        wait_children(&a, &path, <[String]>::is_empty).await;
    }
}

trait ErrOrNone {
    fn unwrap_err_or_none(self) -> bool;
}

impl<T> ErrOrNone for Result<Option<T>, Error> {
    /// The other owner's write may not be granted while we read: a timeout (None), or, since
    /// that owner holds a read, an upgrade refusal.
    fn unwrap_err_or_none(self) -> bool {
        matches!(self, Ok(None) | Err(Error::UpgradeNotSupported))
    }
}
