//! Mutual exclusion under contention, for every exclusive lock type: several clients, several
//! tasks each, every holder checks that no one else is inside and that fencing tokens grow.
//! Each kind is built by [`LockKind::build`], whose layout is the one each test names: the
//! ephemeral lock on `<path>/lock`, the multi-lock on `<path>/a` and `<path>/b`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use shepherd_recipes::WaitStrategy::{Herd, Predecessor};
use shepherd_recipes::{Guard, Lock, LockKind, SharedLock};
use shepherd_testkit::on_both_servers;
use shepherd_testkit::{TestServer, children, connect, unique, wait_children, within};

const CLIENTS: usize = 3;
const TASKS: usize = 3;
const ROUNDS: usize = 3;

/// Runs the contention on `kind` and returns the number of acquisitions.
async fn hammer(connect_to: &str, path: &str, kind: LockKind) -> usize {
    let inside = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let last: Arc<std::sync::Mutex<Option<Vec<i64>>>> = Arc::default();
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let client = connect(connect_to).await;
        for _ in 0..TASKS {
            let (client, path) = (client.clone(), path.to_owned());
            let (inside, done, last) = (inside.clone(), done.clone(), last.clone());
            tasks.push(tokio::spawn(async move {
                for _ in 0..ROUNDS {
                    // A fresh lock value each round, as a fresh owner (the reentrant kinds
                    // re-enter only through the same value).
                    let held = kind.build(&client, &path).acquire().await.unwrap();
                    assert_eq!(
                        inside.fetch_add(1, Ordering::SeqCst),
                        0,
                        "two holders at once"
                    );
                    let tokens = held.fencing_token();
                    {
                        let mut last = last.lock().unwrap();
                        if let Some(prev) = last.as_ref() {
                            assert!(
                                tokens.iter().zip(prev).all(|(t, p)| t > p),
                                "fencing tokens must grow: {prev:?} then {tokens:?}"
                            );
                        }
                        *last = Some(tokens);
                    }
                    // A round trip inside the critical section widens the window for overlap.
                    client.exists("/").await.expect("exists");
                    tokio::task::yield_now().await;
                    assert_eq!(inside.fetch_sub(1, Ordering::SeqCst), 1);
                    done.fetch_add(1, Ordering::SeqCst);
                    held.release().await.expect("release");
                }
            }));
        }
    }
    for t in tasks {
        within("contenders", t).await.expect("contender task");
    }
    done.load(Ordering::SeqCst)
}

/// Hammers each of `kinds` (each on a folder of its own) on `server`.
async fn run(server: &TestServer, name: &str, kinds: &[LockKind]) {
    for &kind in kinds {
        {
            let path = unique(name);
            let n = hammer(&server.connect, &path, kind).await;
            assert_eq!(n, CLIENTS * TASKS * ROUNDS);
            let admin = connect(&server.connect).await;
            let left = wait_children(&admin, &path, |c| {
                c.iter().all(|n| n == "locks" || n == "leases")
            })
            .await;
            for sub in left {
                let sub = format!("{path}/{sub}");
                wait_children(&admin, &sub, <[String]>::is_empty).await;
            }
            eprintln!("{}: {name}: {n} exclusive holds", server.name);
        }
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ephemeral_lock_excludes(server) {
        run(&server, "excl-ephemeral", &[LockKind::Ephemeral]).await;
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sequential_lock_excludes_both_strategies(server) {
        let kinds = [
            LockKind::Sequential(Herd),
            LockKind::Sequential(Predecessor),
        ];
        run(&server, "excl-seq", &kinds).await;
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn write_lock_excludes(server) {
        run(&server, "excl-writelock", &[LockKind::WriteLock]).await;
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn shared_lock_writers_exclude(server) {
        let kinds = [
            LockKind::SharedWrite(Herd),
            LockKind::SharedWrite(Predecessor),
        ];
        run(&server, "excl-shared", &kinds).await;
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn curator_mutex_excludes(server) {
        run(&server, "excl-mutex", &[LockKind::Mutex]).await;
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn semaphore_mutex_excludes(server) {
        run(&server, "excl-semaphore", &[LockKind::SemaphoreMutex]).await;
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn read_write_lock_writers_exclude(server) {
        run(&server, "excl-rw", &[LockKind::RwWrite]).await;
    }
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn multi_lock_excludes(server) {
        run(&server, "excl-multi", &[LockKind::MultiLock]).await;
    }
}

on_both_servers! {
    /// Readers may overlap each other, never a writer.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn shared_lock_readers_share_writers_exclude(server) {
        for strategy in [Herd, Predecessor] {
            let path = unique("rw-mix");
            let readers = Arc::new(AtomicUsize::new(0));
            let writers = Arc::new(AtomicUsize::new(0));
            let mut tasks = Vec::new();
            for i in 0..CLIENTS * TASKS {
                let client = connect(&server.connect).await;
                let (path, readers, writers) = (path.clone(), readers.clone(), writers.clone());
                tasks.push(tokio::spawn(async move {
                    let lock = SharedLock::new(&client, path).with_strategy(strategy);
                    for r in 0..ROUNDS {
                        if (i + r) % 3 == 0 {
                            let g = lock.write_lock().acquire().await.unwrap();
                            assert_eq!(writers.fetch_add(1, Ordering::SeqCst), 0);
                            assert_eq!(readers.load(Ordering::SeqCst), 0);
                            client.exists("/").await.unwrap();
                            writers.fetch_sub(1, Ordering::SeqCst);
                            g.release().await.unwrap();
                        } else {
                            let g = lock.read_lock().acquire().await.unwrap();
                            readers.fetch_add(1, Ordering::SeqCst);
                            assert_eq!(writers.load(Ordering::SeqCst), 0);
                            client.exists("/").await.unwrap();
                            readers.fetch_sub(1, Ordering::SeqCst);
                            g.release().await.unwrap();
                        }
                    }
                }));
            }
            for t in tasks {
                within("rw contenders", t).await.unwrap();
            }
            let admin = connect(&server.connect).await;
            assert!(children(&admin, &path).await.is_empty());
        }
    }
}
