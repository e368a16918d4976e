//! The crash test of `shepherd serve --data-dir`: nothing a client saw acknowledged is lost
//! when the process is killed with SIGKILL at any point, and a data directory damaged the way
//! a crash or a bad disk damages it (a torn log tail, a corrupt newest snapshot) still starts.
//!
//! The binary is the one users run (`CARGO_BIN_EXE_shepherd`), on port 0 with its address read
//! from its `listening` line, and a small snapCount so that kills also land in and around
//! snapshots. Kill points are drawn from a seeded generator: `SHEPHERD_CRASH_SEED=N` replays a
//! run (the seed is printed). Every wait is bounded; nothing sleeps.

mod files;
mod ledger;
mod serve;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shepherd_client::{Client, CreateOptions};
use shepherd_testkit::within;

use ledger::{Ledger, Progress, spawn_writers};
use serve::Serve;

/// Rounds of write, kill, restart and check.
const ROUNDS: usize = 5;
/// Concurrent writers (sessions) per round.
const WRITERS: usize = 4;
/// The kill comes after this many acknowledged writes in a round, drawn uniformly.
const KILL_AFTER: std::ops::Range<usize> = 20..600;
/// Small, so that the rounds cross snapshots (ZooKeeper's rule: one every 20 to 40 txns).
const CONFIG: &str = "snapCount=40\nforceSync=yes\n";

fn seed() -> u64 {
    std::env::var("SHEPHERD_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_c0de)
}

/// Connects a checker to `server` and returns every lost or wrong write in `ledger`.
async fn check(server: &Serve, ledger: &Ledger) -> Vec<String> {
    let zk = within("a checker session", Client::connect(&server.addr))
        .await
        .unwrap_or_else(|e| panic!("connect the checker: {e}\n{}", server.log_text()));
    let lost = within("reading the ledger back", ledger.check(&zk)).await;
    let _ = zk.close().await;
    lost
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_kill_9() {
    let seed = seed();
    println!("crash: seed {seed} (SHEPHERD_CRASH_SEED={seed} replays it)");
    let mut rng = StdRng::seed_from_u64(seed);
    let data = tempfile::tempdir().expect("data dir");
    let logs = tempfile::tempdir().expect("log dir");
    let mut ledger = Ledger::default();
    for round in 0..=ROUNDS {
        let server = Serve::start(data.path(), logs.path(), round, CONFIG).await;
        if round > 0 {
            let lost = check(&server, &ledger).await;
            println!(
                "crash: round {round}: checked {} after kill -9, lost {}",
                ledger.summary(),
                lost.len()
            );
            assert!(
                lost.is_empty(),
                "lost after kill -9:\n{}\n{}",
                lost.join("\n"),
                server.log_text()
            );
        }
        if round == ROUNDS {
            break;
        }
        let target = rng.random_range(KILL_AFTER);
        let progress = Progress::new(target);
        let writers = spawn_writers(&server.addr, round, WRITERS, &progress);
        within(&format!("{target} acknowledged writes"), progress.reached()).await;
        server.kill();
        println!(
            "crash: round {round}: killed after {} acknowledged writes (target {target})",
            progress.count()
        );
        for writer in writers {
            let acks = within("a writer to see the kill", writer)
                .await
                .expect("writer task");
            ledger.merge(acks);
        }
        ledger.count_acked(&progress);
    }
}

/// Creates `parent` and `n` children whose data is their path.
async fn fill(zk: &Client, parent: &str, n: usize) {
    let persistent = CreateOptions::persistent();
    zk.create(parent, b"", &persistent)
        .await
        .expect("create parent");
    for i in 0..n {
        let path = format!("{parent}/n-{i:03}");
        zk.create(&path, path.as_bytes(), &persistent)
            .await
            .expect("create");
    }
}

async fn assert_children(zk: &Client, parent: &str, n: usize, server: &Serve) {
    for i in 0..n {
        let path = format!("{parent}/n-{i:03}");
        match zk.get_data(&path).await {
            Ok((data, _)) => assert_eq!(data, path.as_bytes(), "{path}"),
            Err(e) => panic!("{path}: {e}\n{}", server.log_text()),
        }
    }
}

async fn data_of(zk: &Client, path: &str) -> Vec<u8> {
    zk.get_data(path).await.expect("get_data").0
}

async fn connect(server: &Serve) -> Client {
    within("a session", Client::connect(&server.addr))
        .await
        .unwrap_or_else(|e| panic!("connect: {e}\n{}", server.log_text()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn torn_log_tail_and_corrupt_snapshot_recover() {
    let data = tempfile::tempdir().expect("data dir");
    let logs = tempfile::tempdir().expect("log dir");
    let config = "snapCount=20\n";
    let start = |n| Serve::start(data.path(), logs.path(), n, config);

    // Enough for several snapshots, then one last acknowledged write, then a crash.
    let server = start(0).await;
    let zk = connect(&server).await;
    fill(&zk, "/t", 100).await;
    zk.set_data("/t", b"before", None)
        .await
        .expect("set before");
    let last = zk
        .set_data("/t", b"torn", None)
        .await
        .expect("set torn")
        .mzxid;
    server.kill();
    drop(zk);

    // The crash tore the last entry: the server starts without it and says so.
    let log = files::newest(data.path(), "log");
    let torn = files::tear_last_entry(&log);
    assert_eq!(torn, last, "the newest log's last entry is the last write");
    let server = start(1).await;
    assert!(
        server.log_text().contains("torn tail"),
        "no warning of the cut:\n{}",
        server.log_text()
    );
    let zk = connect(&server).await;
    assert_eq!(
        data_of(&zk, "/t").await,
        b"before",
        "the torn write is gone, the one before stays"
    );
    assert_children(&zk, "/t", 100, &server).await;
    // What is written after the cut is read back after the next crash: the torn bytes were
    // cut, not left in front of it.
    zk.set_data("/t", b"after the cut", None)
        .await
        .expect("set after");
    server.kill();
    drop(zk);
    let server = start(2).await;
    let zk = connect(&server).await;
    assert_eq!(
        data_of(&zk, "/t").await,
        b"after the cut",
        "{}",
        server.log_text()
    );
    server.kill();
    drop(zk);

    // A bit flipped in the newest snapshot: the server falls back to the one before it and
    // the logs after that, and loses nothing.
    let snapshot = files::newest(data.path(), "snapshot");
    files::flip_a_bit(&snapshot);
    let server = start(3).await;
    assert!(
        server.log_text().contains("skipped a snapshot"),
        "no warning of the skip:\n{}",
        server.log_text()
    );
    let zk = connect(&server).await;
    assert_eq!(
        data_of(&zk, "/t").await,
        b"after the cut",
        "{}",
        server.log_text()
    );
    assert_children(&zk, "/t", 100, &server).await;
    println!(
        "crash: torn tail of {} cut, corrupt {} skipped, 101 acknowledged writes checked, 0 lost",
        log.display(),
        snapshot.display()
    );
    drop(zk);
    server.kill();
}
