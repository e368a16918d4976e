//! Who waits for whom, and who is woken: the read/write rules of ZooKeeper's shared-lock
//! recipe step by step (for `SharedLock` with both strategies and for Curator's
//! `ReadWriteLock`), and the herd versus predecessor strategies of every exclusive lock
//! counted through `LockStats`.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use shepherd_client::Client;
use shepherd_recipes::{Guard, Lock, LockKind, LockStats, WaitStrategy};
use shepherd_testkit::locks::{spawn_take, take};
use shepherd_testkit::on_both_servers;
use shepherd_testkit::{connect, settle, unique, wait_children, within};
use tokio::task::JoinHandle;

on_both_servers! {
    /// The shared-lock recipe: R1 R2 granted together; W3 waits for both; R4 waits for W3 (a
    /// lower write); W3 granted once R1 and R2 are gone; R4 once W3 is gone. Wake-ups are counted exactly:
    /// with the herd strategy every change wakes both waiters, with the predecessor strategy
    /// (and Curator's lock) only the release a waiter depends on wakes it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn read_write_locks_follow_seed_003(server) {
        for (read, write) in [
            (
                LockKind::SharedRead(WaitStrategy::Herd),
                LockKind::SharedWrite(WaitStrategy::Herd),
            ),
            (
                LockKind::SharedRead(WaitStrategy::Predecessor),
                LockKind::SharedWrite(WaitStrategy::Predecessor),
            ),
            (LockKind::RwRead, LockKind::RwWrite),
        ] {
            let herd = read.herd();
            let dir = unique("seed003");
            let clients = clients(&server.connect, 4).await;
            let stats = LockStats::new();

            let r1 = take(read, &clients[0], &dir, &stats).await;
            let r2 = within("R2 shares with R1", take(read, &clients[1], &dir, &stats)).await;
            let w3 = spawn_take(write, &clients[2], &dir, &stats);
            within("W3 waiting", stats.wait_for(|s| s.waiting == 1)).await;
            let r4 = spawn_take(read, &clients[3], &dir, &stats);
            // Herd: R4's arrival wakes W3, which looks again and waits again.
            let mut woke = u64::from(herd);
            within(
                "R4 waiting",
                stats.wait_for(|s| s.waiting == 2 && s.wakeups == woke),
            )
            .await;
            if !herd {
                // Nobody watches a node above them, so these probes wake no one.
                let unseen = LockStats::new();
                let probe =
                    |kind: LockKind| kind.build(&clients[0], &dir).with_stats(unseen.clone());
                assert!(
                    probe(write).try_acquire().await.unwrap().is_none(),
                    "{write:?}: a writer waits for everyone"
                );
                assert!(
                    probe(read).try_acquire().await.unwrap().is_none(),
                    "{read:?}: a reader waits for the lower writer"
                );
            }

            let r2_token = r2.fencing_token()[0];
            assert!(r2_token > r1.fencing_token()[0]);
            r1.release().await.unwrap();
            // Herd: both waiters wake and wait again; predecessor: W3 watches R2, R4 watches W3.
            woke += if herd { 2 } else { 0 };
            within(
                "after R1",
                stats.wait_for(|s| s.waiting == 2 && s.wakeups == woke),
            )
            .await;
            settle(&clients).await;
            assert!(
                !w3.is_finished() && !r4.is_finished(),
                "{write:?}: W3 still waits for R2, R4 for W3"
            );

            r2.release().await.unwrap();
            let w3 = within("W3 granted", w3).await.unwrap();
            woke += if herd { 2 } else { 1 };
            within(
                "R4 still waiting",
                stats.wait_for(|s| s.waiting == 1 && s.wakeups == woke),
            )
            .await;
            settle(&clients).await;
            assert!(!r4.is_finished(), "{read:?}: R4 waits for W3");

            let w3_token = w3.fencing_token()[0];
            assert!(w3_token > r2_token);
            w3.release().await.unwrap();
            let r4 = within("R4 granted", r4).await.unwrap();
            assert!(r4.fencing_token()[0] > w3_token);
            r4.release().await.unwrap();
            wait_children(&clients[0], &dir, <[String]>::is_empty).await;
            eprintln!(
                "{}: {read:?}/{write:?}: the shared-lock recipe step by step",
                server.name
            );
        }
    }
}

async fn clients(connect_to: &str, n: usize) -> Vec<Client> {
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(connect(connect_to).await);
    }
    out
}

/// Wake-ups caused among `k` waiting contenders by one more contender arriving.
fn arrival_wakeups(kind: LockKind, k: u64) -> u64 {
    match kind {
        // Every waiter watches the folder's children, which the newcomer changes.
        LockKind::Sequential(WaitStrategy::Herd) | LockKind::SharedWrite(WaitStrategy::Herd) => k,
        // Predecessor watches, and the fixed node's watchers, see no change.
        _ => 0,
    }
}

/// Wake-ups and acquisitions counted after the holder's release, `waiters` waiting.
fn release_effect(kind: LockKind, waiters: u64) -> (u64, u64) {
    match kind {
        k if k.herd() => (waiters, 1),
        // The lease watcher wakes and takes the lease; then its release of the inner `locks`
        // mutex wakes the next in that queue, which takes that mutex (counted too) and waits
        // on the leases.
        LockKind::SemaphoreMutex => (2, 2),
        // The first waiter on `a` wakes, takes it, then takes the free `b` without waiting.
        LockKind::MultiLock => (1, 2),
        _ => (1, 1),
    }
}

/// Every exclusive kind.
const EXCLUSIVE: [LockKind; 9] = [
    LockKind::Sequential(WaitStrategy::Herd),
    LockKind::Sequential(WaitStrategy::Predecessor),
    LockKind::SharedWrite(WaitStrategy::Herd),
    LockKind::SharedWrite(WaitStrategy::Predecessor),
    LockKind::Ephemeral,
    LockKind::WriteLock,
    LockKind::Mutex,
    LockKind::RwWrite,
    LockKind::SemaphoreMutex,
];

const WAITERS: u64 = 5;

on_both_servers! {
    /// One holder, five waiters on five clients, then one release: the herd variants wake all
    /// five, the predecessor variants exactly one (every exclusive lock type).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn herd_wakes_everyone_predecessor_wakes_one(server) {
        for kind in EXCLUSIVE.into_iter().chain([LockKind::MultiLock]) {
            let dir = unique("wake");
            let holder_client = connect(&server.connect).await;
            let holder = take(kind, &holder_client, &dir, &LockStats::new()).await;
            let stats = LockStats::new();
            let mut clients = Vec::new();
            let mut tasks = Vec::new();
            let mut expected = 0;
            for k in 0..WAITERS {
                let client = connect(&server.connect).await;
                tasks.push(spawn_take(kind, &client, &dir, &stats));
                clients.push(client);
                expected += arrival_wakeups(kind, k);
                within(
                    "waiter in line",
                    stats.wait_for(|s| s.waiting == k + 1 && s.wakeups == expected),
                )
                .await;
            }
            let before = stats.snapshot();
            holder.release().await.unwrap();
            let (woken, won) = release_effect(kind, WAITERS);
            let after = within(
                "one winner",
                stats.wait_for(|s| {
                    s.acquired == before.acquired + won
                        && s.waiting == WAITERS - 1
                        && s.wakeups == before.wakeups + woken
                }),
            )
            .await;
            settle(&clients).await;
            let late = stats.snapshot();
            assert_eq!(late.wakeups, after.wakeups, "{kind:?}: no further wake-ups");
            assert_eq!(late.acquired, after.acquired, "{kind:?}: one winner");
            eprintln!(
                "{}: {kind:?}: release woke {} of {WAITERS} waiters; getChildren {} -> {}, exists {} -> {}",
                server.name,
                late.wakeups - before.wakeups,
                before.get_children,
                late.get_children,
                before.exists,
                late.exists
            );
            // Drain: each winner releases in turn.
            let mut pending = tasks;
            while !pending.is_empty() {
                let (done, rest) = within("next holder", select_all(pending)).await;
                done.expect("waiter").release().await.unwrap();
                pending = rest;
            }
            for sub in ["", "/a", "/b", "/leases", "/locks"] {
                wait_children(&holder_client, &format!("{dir}{sub}"), |c| {
                    c.iter()
                        .all(|n| ["a", "b", "leases", "locks"].contains(&n.as_str()))
                })
                .await;
            }
        }
    }
}

/// The first task of `tasks` to finish, and the others.
async fn select_all<T>(
    mut tasks: Vec<JoinHandle<T>>,
) -> (Result<T, tokio::task::JoinError>, Vec<JoinHandle<T>>) {
    let (result, index) = std::future::poll_fn(|cx| {
        for (i, task) in tasks.iter_mut().enumerate() {
            if let Poll::Ready(r) = Pin::new(task).poll(cx) {
                return Poll::Ready((r, i));
            }
        }
        Poll::Pending
    })
    .await;
    tasks.remove(index);
    (result, tasks)
}
