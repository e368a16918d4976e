//! The writers of the crash test and the ledger of what the server acknowledged.
//!
//! Each writer owns a session and a subtree `/crash/r<round>w<writer>` and writes in a loop,
//! one request at a time: creates with known data, setData of its counter with increasing
//! values, and multis that create two nodes atomically. Every reply is recorded before the
//! next request goes out, so the ledger holds exactly the acknowledged writes plus at most one
//! write in flight per writer when the server was killed.
//!
//! Invariants checked after a restart: every acknowledged create and multi is there with its
//! data; a counter holds at least its last acknowledged value and at most its last attempted
//! one; a multi that was in flight at the kill is all there or not there at all.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use shepherd_client::{Client, CreateOptions};
use tokio::sync::Notify;

/// Session timeout of the writers: longer than the whole test, so that no restored session
/// expires (and deletes nothing) while the ledger is checked.
const SESSION_TIMEOUT: Duration = Duration::from_secs(30);

/// What the server acknowledged, accumulated over every round.
#[derive(Default)]
pub struct Ledger {
    /// Path -> data of every acknowledged create (multis' nodes included).
    created: BTreeMap<String, Vec<u8>>,
    /// Counter path -> (last acknowledged value, last attempted value).
    counters: BTreeMap<String, (u64, u64)>,
    /// Multis in flight at a kill: both paths or neither.
    in_doubt: Vec<(String, String)>,
    /// Acknowledged writes, all rounds.
    acked: usize,
}

/// What one writer saw.
#[derive(Default)]
pub struct Acks {
    created: Vec<(String, Vec<u8>)>,
    counter: Option<(String, u64, u64)>,
    in_doubt: Option<(String, String)>,
}

/// Counts acknowledgements across writers and wakes the killer when `target` is reached.
pub struct Progress {
    acks: AtomicUsize,
    target: usize,
    reached: Notify,
}

impl Progress {
    pub fn new(target: usize) -> Arc<Progress> {
        Arc::new(Progress {
            acks: AtomicUsize::new(0),
            target,
            reached: Notify::new(),
        })
    }

    fn ack(&self) {
        if self.acks.fetch_add(1, Ordering::SeqCst) + 1 == self.target {
            self.reached.notify_one();
        }
    }

    /// Returns once `target` writes were acknowledged (a stored permit counts).
    pub async fn reached(&self) {
        self.reached.notified().await;
    }

    pub fn count(&self) -> usize {
        self.acks.load(Ordering::SeqCst)
    }
}

/// Starts `writers` writers of `round` against `addr`; each ends when its server goes away
/// and yields what it saw acknowledged. A writer that cannot even connect (the kill came
/// first) saw nothing.
pub fn spawn_writers(
    addr: &str,
    round: usize,
    writers: usize,
    progress: &Arc<Progress>,
) -> Vec<tokio::task::JoinHandle<Acks>> {
    (0..writers)
        .map(|w| {
            let (addr, progress) = (addr.to_owned(), progress.clone());
            tokio::spawn(async move { writer(&addr, round, w, &progress).await })
        })
        .collect()
}

async fn writer(addr: &str, round: usize, w: usize, progress: &Progress) -> Acks {
    let mut acks = Acks::default();
    let Ok(zk) = Client::builder()
        .session_timeout(SESSION_TIMEOUT)
        .connect(addr)
        .await
    else {
        return acks;
    };
    let persistent = CreateOptions::persistent();
    match zk.create("/crash", b"", &persistent).await {
        Ok(_) => {}
        Err(e) if e.is_node_exists() => {}
        Err(_) => return acks,
    }
    let root = format!("/crash/r{round}w{w}");
    let counter = format!("{root}/counter");
    if zk.create(&root, b"", &persistent).await.is_err() {
        return acks;
    }
    acks.created.push((root.clone(), Vec::new()));
    progress.ack();
    // The counter's value is checked as a counter, not as the data it was created with.
    if zk.create(&counter, b"0", &persistent).await.is_err() {
        return acks;
    }
    progress.ack();
    let (mut acked, mut attempted) = (0u64, 0u64);
    for i in 1u64.. {
        let done = match i % 3 {
            0 => {
                let path = format!("{root}/c-{i}");
                let data = format!("{round}:{w}:{i}").into_bytes();
                let ok = zk.create(&path, &data, &persistent).await.is_ok();
                if ok {
                    acks.created.push((path, data));
                }
                ok
            }
            1 => {
                attempted = i;
                let ok = zk
                    .set_data(&counter, i.to_string().as_bytes(), None)
                    .await
                    .is_ok();
                if ok {
                    acked = i;
                }
                ok
            }
            _ => {
                let (a, b) = (format!("{root}/m-{i}-a"), format!("{root}/m-{i}-b"));
                let result = zk
                    .multi()
                    .create(&a, b"a", &persistent)
                    .create(&b, b"b", &persistent)
                    .commit()
                    .await;
                let ok = result.is_ok();
                if ok {
                    acks.created.push((a, b"a".to_vec()));
                    acks.created.push((b, b"b".to_vec()));
                } else {
                    acks.in_doubt = Some((a, b));
                }
                ok
            }
        };
        if !done {
            break;
        }
        progress.ack();
    }
    acks.counter = Some((counter, acked, attempted));
    acks
}

impl Ledger {
    /// Counts a round's acknowledged writes (each create, setData and multi once).
    pub fn count_acked(&mut self, progress: &Progress) {
        self.acked += progress.count();
    }

    /// What `check` verifies: acknowledged writes, nodes, counters, multis in doubt.
    pub fn summary(&self) -> String {
        format!(
            "{} acknowledged writes ({} nodes, {} counters, {} multis in flight at a kill)",
            self.acked,
            self.created.len(),
            self.counters.len(),
            self.in_doubt.len()
        )
    }

    /// Merges what the writers of one round saw.
    pub fn merge(&mut self, acks: Acks) {
        self.created.extend(acks.created);
        if let Some((path, acked, attempted)) = acks.counter {
            self.counters.insert(path, (acked, attempted));
        }
        self.in_doubt.extend(acks.in_doubt);
    }

    /// Reads everything back through `zk`; returns one line per write that was lost or is
    /// wrong (empty when all is well).
    pub async fn check(&self, zk: &Client) -> Vec<String> {
        let mut lost = Vec::new();
        for (path, want) in &self.created {
            match zk.get_data(path).await {
                Ok((data, _)) if &data == want => {}
                Ok((data, _)) => lost.push(format!("{path}: data {data:?}, want {want:?}")),
                Err(e) => lost.push(format!("{path}: acknowledged create, now {e}")),
            }
        }
        for (path, (acked, attempted)) in &self.counters {
            let value = match zk.get_data(path).await {
                Ok((data, _)) => String::from_utf8_lossy(&data).parse::<u64>().ok(),
                Err(e) => {
                    lost.push(format!("{path}: counter gone: {e}"));
                    continue;
                }
            };
            match value {
                Some(v) if v >= *acked && v <= *attempted => {}
                other => lost.push(format!(
                    "{path}: counter {other:?}, want between the acknowledged {acked} and the \
                     attempted {attempted}"
                )),
            }
        }
        for (a, b) in &self.in_doubt {
            let (ea, eb) = (zk.exists(a).await, zk.exists(b).await);
            match (ea, eb) {
                (Ok(x), Ok(y)) if x.is_some() == y.is_some() => {}
                other => lost.push(format!("multi {a} + {b} half applied: {other:?}")),
            }
        }
        lost
    }
}
