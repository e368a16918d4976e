//! Who waits for whom, and who is woken: seed 003's read/write rules step by step, and the
//! herd versus predecessor strategies counted through `LockStats`.

mod support;

use std::sync::Arc;

use shepherd_client::Client;
use shepherd_recipes::{
    EphemeralLock, LockGuard, LockStats, SequentialLock, SharedLock, WaitStrategy,
};
use support::{connect, servers, settle, unique, wait_children, within};
use tokio::task::JoinHandle;

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

fn spawn_lock<F>(f: F) -> JoinHandle<LockGuard>
where
    F: std::future::Future<Output = shepherd_recipes::Result<LockGuard>> + Send + 'static,
{
    tokio::spawn(async move { f.await.expect("acquire") })
}

/// Seed 003: R1 R2 granted together; W3 waits for both; R4 waits for W3 (a lower write);
/// W3 granted once R1 and R2 are gone; R4 once W3 is gone. Wake-ups are counted exactly:
/// with the herd strategy every change wakes both waiters, with the predecessor strategy only
/// the release a waiter depends on wakes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_lock_follows_seed_003() {
    for server in servers().await {
        for strategy in [WaitStrategy::Herd, WaitStrategy::Predecessor] {
            let herd = strategy == WaitStrategy::Herd;
            let dir = unique("seed003");
            let clients = clients(&server.connect, 4).await;
            let stats = LockStats::new();
            let lock = |i: usize| {
                SharedLock::new(&clients[i], &dir)
                    .with_strategy(strategy)
                    .with_stats(stats.clone())
            };

            let r1 = lock(0).read().await.unwrap();
            let r2 = within("R2 shares with R1", lock(1).read()).await.unwrap();
            let w3 = spawn_lock({
                let l = lock(2);
                async move { l.write().await }
            });
            within("W3 waiting", stats.wait_for(|s| s.waiting == 1)).await;
            let r4 = spawn_lock({
                let l = lock(3);
                async move { l.read().await }
            });
            // Herd: R4's arrival wakes W3, which looks again and waits again.
            let mut woke = u64::from(herd);
            within(
                "R4 waiting",
                stats.wait_for(|s| s.waiting == 2 && s.wakeups == woke),
            )
            .await;
            if !herd {
                // Nobody watches a node above them, so these probes wake no one.
                let probe = SharedLock::new(&clients[0], &dir);
                assert!(
                    probe.try_write().await.unwrap().is_none(),
                    "a writer waits for everyone"
                );
                assert!(
                    probe.try_read().await.unwrap().is_none(),
                    "a reader waits for the lower writer"
                );
            }

            let r2_token = r2.fencing_token();
            assert!(r2_token > r1.fencing_token());
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
                "W3 still waits for R2, R4 for W3"
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
            assert!(!r4.is_finished(), "R4 waits for W3");

            let w3_token = w3.fencing_token();
            assert!(w3_token > r2_token);
            w3.release().await.unwrap();
            let r4 = within("R4 granted", r4).await.unwrap();
            assert!(r4.fencing_token() > w3_token);
            r4.release().await.unwrap();
            wait_children(&clients[0], &dir, <[String]>::is_empty).await;
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

/// How a contender kind takes its lock.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Sequential(WaitStrategy),
    SharedWrite(WaitStrategy),
    Ephemeral,
}

impl Kind {
    async fn take(self, c: &Client, dir: &str, stats: &Arc<LockStats>) -> LockGuard {
        let stats = stats.clone();
        match self {
            Kind::Sequential(s) => {
                SequentialLock::new(c, dir)
                    .with_strategy(s)
                    .with_stats(stats)
                    .lock()
                    .await
            }
            Kind::SharedWrite(s) => {
                SharedLock::new(c, dir)
                    .with_strategy(s)
                    .with_stats(stats)
                    .write()
                    .await
            }
            Kind::Ephemeral => {
                EphemeralLock::new(c, format!("{dir}/lock"))
                    .with_stats(stats)
                    .lock()
                    .await
            }
        }
        .expect("acquire")
    }

    fn herd(self) -> bool {
        matches!(
            self,
            Kind::Sequential(WaitStrategy::Herd)
                | Kind::SharedWrite(WaitStrategy::Herd)
                | Kind::Ephemeral
        )
    }

    /// Wake-ups caused among `k` waiting contenders by one more contender arriving.
    fn arrival_wakeups(self, k: u64) -> u64 {
        match self {
            Kind::Sequential(WaitStrategy::Herd) | Kind::SharedWrite(WaitStrategy::Herd) => k,
            _ => 0, // predecessor watches; the fixed node's watchers see no change
        }
    }
}

const WAITERS: u64 = 5;

/// One holder, five waiters on five clients, then one release: the herd wakes all five, the
/// predecessor strategy exactly one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn herd_wakes_everyone_predecessor_wakes_one() {
    for server in servers().await {
        for kind in [
            Kind::Sequential(WaitStrategy::Herd),
            Kind::Sequential(WaitStrategy::Predecessor),
            Kind::SharedWrite(WaitStrategy::Herd),
            Kind::SharedWrite(WaitStrategy::Predecessor),
            Kind::Ephemeral,
        ] {
            let dir = unique("wake");
            let holder_client = connect(&server.connect).await;
            let holder = kind.take(&holder_client, &dir, &LockStats::new()).await;
            let stats = LockStats::new();
            let mut clients = Vec::new();
            let mut tasks = Vec::new();
            let mut expected = 0;
            for k in 0..WAITERS {
                let client = connect(&server.connect).await;
                clients.push(client.clone());
                let (d, st) = (dir.clone(), stats.clone());
                tasks.push(tokio::spawn(
                    async move { kind.take(&client, &d, &st).await },
                ));
                expected += kind.arrival_wakeups(k);
                within(
                    "waiter in line",
                    stats.wait_for(|s| s.waiting == k + 1 && s.wakeups == expected),
                )
                .await;
            }
            let before = stats.snapshot();
            holder.release().await.unwrap();
            let woken = if kind.herd() { WAITERS } else { 1 };
            let after = within(
                "one winner",
                stats.wait_for(|s| {
                    s.acquired == 1
                        && s.waiting == WAITERS - 1
                        && s.wakeups == before.wakeups + woken
                }),
            )
            .await;
            settle(&clients).await;
            let late = stats.snapshot();
            assert_eq!(late.wakeups, after.wakeups, "{kind:?}: no further wake-ups");
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
            wait_children(&holder_client, &dir, <[String]>::is_empty).await;
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
