//! Interoperability with kazoo (Python), on every server the other tests use: a Shepherd
//! [`Mutex`] against kazoo's `Lock`, and Shepherd's read/write locks ([`ReadWriteLock`],
//! [`SharedLock`]) against kazoo's `ReadLock`/`WriteLock`, on the same path, whichever comes
//! first. Ignored unless asked for (`--ignored`; CI asks), since they need python3 with kazoo;
//! asked for without it, they fail saying so.
//!
//! kazoo is told about our node names with `extra_lock_patterns` (its contender regex is
//! `(?:<patterns>)(-?\d{10})$`, a pattern right before the sequence): `-lock-` for the mutex,
//! `__WRIT__` (readers) and `__WRIT__`, `__READ__` (writers) for Curator's read/write lock,
//! `-write-` and `-write-`, `-read-` for [`SharedLock`]. We recognise kazoo's `__lock__`
//! (exclusive) and `__rlock__` (shared) nodes by name, with no configuration.
//!
//! Each holder, once it holds, checks and marks what it holds with ephemeral nodes beside the
//! lock: a writer creates `<path>-w` (failing if it exists) and finds no reader marker, a reader
//! finds no `<path>-w` and creates `<path>-r-<who>`; markers go before the lock is released.
//! A kazoo holder that finds the rules broken prints `VIOLATION` instead of `ACQUIRED`.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use shepherd_client::{Client, CreateOptions};
use shepherd_recipes::{Guard, Lock, LockKind, LockStats, Mutex, WaitStrategy};
use shepherd_testkit::locks::{spawn_take, take};
use shepherd_testkit::{connect, servers, settle, unique, wait_children, within};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Reads commands (`lock`, `read`, `write`, `release`) from stdin, one lock at a time; to
/// each acquisition it answers `BLOCKED` first if a non-blocking try fails, then `ACQUIRED`
/// (or `VIOLATION`) once it holds the lock.
const SCRIPT: &str = r#"
import sys
from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError
hosts, path, read_patterns, write_patterns = sys.argv[1:5]
W, R = path + "-w", path + "-r-"
zk = KazooClient(hosts=hosts)
zk.start()
def readers():
    return [n for n in (R + "shepherd", R + "kazoo") if zk.exists(n)]
lock = marker = None
for line in sys.stdin:
    cmd = line.strip()
    if cmd == "release":
        if marker:
            zk.delete(marker)
        lock.release()
        lock = marker = None
        print("RELEASED", flush=True)
        continue
    if cmd == "read":
        make = lambda: zk.ReadLock(path, "kazoo", extra_lock_patterns=read_patterns.split(","))
    elif cmd == "lock":
        make = lambda: zk.Lock(path, "kazoo", extra_lock_patterns=["-lock-"])
    else:
        make = lambda: zk.WriteLock(path, "kazoo", extra_lock_patterns=write_patterns.split(","))
    # A first, non-blocking try tells whether kazoo sees itself blocked (its node is deleted
    # before it says so); then the blocking acquisition, in line.
    lock = make()
    if not lock.acquire(blocking=False):
        print("BLOCKED", flush=True)
        lock = make()
        lock.acquire()
    if cmd == "read":
        ok = zk.exists(W) is None
        marker = R + "kazoo"
        zk.create(marker, ephemeral=True)
    else:
        try:
            zk.create(W, ephemeral=True)
            marker = W
            ok = not readers()
        except NodeExistsError:
            ok = False
    print("ACQUIRED" if ok else "VIOLATION", flush=True)
zk.stop()
"#;

fn kazoo_available() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import kazoo"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// One kazoo client process holding at most one lock.
struct Kazoo {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Kazoo {
    fn spawn(connect: &str, path: &str, read_patterns: &str, write_patterns: &str) -> Kazoo {
        let mut child = Command::new("python3")
            .args(["-u", "-c", SCRIPT, connect, path])
            .args([read_patterns, write_patterns])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("python3");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Kazoo {
            child,
            stdin,
            lines,
        }
    }

    async fn send(&mut self, command: &str) {
        self.stdin
            .write_all(format!("{command}\n").as_bytes())
            .await
            .expect("kazoo stdin");
    }

    async fn expect(&mut self, what: &str) {
        let line = within(&format!("kazoo: {what}"), self.lines.next_line())
            .await
            .expect("kazoo stdout");
        assert_eq!(line.as_deref(), Some(what), "kazoo broke the lock's rules");
    }

    async fn finish(mut self) {
        drop(self.stdin);
        let status = within("kazoo exits", self.child.wait()).await.unwrap();
        assert!(status.success(), "kazoo: {status}");
    }
}

/// Our side of the markers.
async fn mark_write(client: &Client, path: &str) {
    client
        .create(&format!("{path}-w"), b"", &CreateOptions::ephemeral())
        .await
        .expect("no other writer holds");
    for who in ["shepherd", "kazoo"] {
        let reader = format!("{path}-r-{who}");
        assert!(
            client.exists(&reader).await.unwrap().is_none(),
            "{who} reads while we write"
        );
    }
}

async fn mark_read(client: &Client, path: &str) {
    assert!(
        client.exists(&format!("{path}-w")).await.unwrap().is_none(),
        "someone writes while we read"
    );
    client
        .create(
            &format!("{path}-r-shepherd"),
            b"",
            &CreateOptions::ephemeral(),
        )
        .await
        .unwrap();
}

async fn unmark(client: &Client, path: &str, write: bool) {
    let marker = if write {
        format!("{path}-w")
    } else {
        format!("{path}-r-shepherd")
    };
    client.delete(&marker, None).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python3 with kazoo (pip install kazoo)"]
async fn shepherd_mutex_and_kazoo_lock_exclude_each_other() {
    assert!(
        kazoo_available(),
        "python3 with kazoo is not importable: pip install kazoo, or leave out --ignored"
    );
    for server in servers().await {
        let client = connect(&server.connect).await;
        let path = unique("kazoo");
        let mut kazoo = Kazoo::spawn(&server.connect, &path, "", "");

        // Shepherd first: kazoo's contender node queues behind ours.
        let mutex = Mutex::new(&client, &path);
        let guard = mutex.acquire().await.unwrap();
        mark_write(&client, &path).await;
        kazoo.send("lock").await;
        kazoo.expect("BLOCKED").await;
        wait_children(&client, &path, |c| c.iter().any(|n| n.contains("__lock__"))).await;
        unmark(&client, &path, true).await;
        guard.release().await.unwrap();
        kazoo.expect("ACQUIRED").await;

        // kazoo first: our mutex must queue behind kazoo's node.
        let stats = mutex.stats().clone();
        let mutex = Arc::new(mutex);
        let mut waiting = tokio::spawn({
            let mutex = mutex.clone();
            async move { mutex.acquire().await.unwrap() }
        });
        within("our mutex queued", async {
            tokio::select! {
                _ = stats.wait_for(|s| s.waiting == 1) => {}
                _ = &mut waiting => panic!("we took the lock while kazoo held it"),
            }
        })
        .await;
        kazoo.send("release").await;
        kazoo.expect("RELEASED").await;
        let guard = within("our turn", waiting).await.unwrap();
        mark_write(&client, &path).await;
        unmark(&client, &path, true).await;
        guard.release().await.unwrap();
        kazoo.finish().await;
        wait_children(&client, &path, <[String]>::is_empty).await;
        eprintln!("{}: Mutex and kazoo Lock, both orders", server.name);
    }
}

/// Shepherd's read/write locks and kazoo's `ReadLock`/`WriteLock` on one path: our writer
/// holds back a kazoo reader; readers of both share, either way; our waiting writer waits for
/// both readers; our writer holds back a kazoo writer, which holds back our reader.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python3 with kazoo (pip install kazoo)"]
async fn shepherd_and_kazoo_read_write_locks_interoperate() {
    assert!(
        kazoo_available(),
        "python3 with kazoo is not importable: pip install kazoo, or leave out --ignored"
    );
    for server in servers().await {
        for (read, write, read_patterns, write_patterns) in [
            (
                LockKind::RwRead,
                LockKind::RwWrite,
                "__WRIT__",
                "__WRIT__,__READ__",
            ),
            (
                LockKind::SharedRead(WaitStrategy::Predecessor),
                LockKind::SharedWrite(WaitStrategy::Predecessor),
                "-write-",
                "-write-,-read-",
            ),
        ] {
            let client = connect(&server.connect).await;
            let path = unique("kazoo-rw");
            let mut kazoo = Kazoo::spawn(&server.connect, &path, read_patterns, write_patterns);

            // 1. Our writer holds; kazoo's reader queues, then gets it.
            let w = take(write, &client, &path, &LockStats::new()).await;
            mark_write(&client, &path).await;
            kazoo.send("read").await;
            kazoo.expect("BLOCKED").await;
            wait_children(&client, &path, |c| {
                c.iter().any(|n| n.contains("__rlock__"))
            })
            .await;
            unmark(&client, &path, true).await;
            w.release().await.unwrap();
            kazoo.expect("ACQUIRED").await;

            // 2. Our reader shares with kazoo's at once.
            let r = within(
                "our reader shares with kazoo's",
                read.build(&client, &path)
                    .acquire_timeout(Duration::from_secs(5)),
            )
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{read:?}: kazoo's reader blocked ours"));
            mark_read(&client, &path).await;

            // 3. Our writer waits for both readers: ours, then kazoo's.
            let stats = LockStats::new();
            let writer = spawn_take(write, &client, &path, &stats);
            within("writer waiting", stats.wait_for(|s| s.waiting == 1)).await;
            unmark(&client, &path, false).await;
            r.release().await.unwrap();
            within(
                "writer waiting for kazoo's reader",
                stats.wait_for(|s| s.wakeups == 1 && s.waiting == 1),
            )
            .await;
            settle(std::slice::from_ref(&client)).await;
            assert!(!writer.is_finished(), "{write:?}: wrote while kazoo read");
            kazoo.send("release").await;
            kazoo.expect("RELEASED").await;
            let w = within("writer granted", writer).await.unwrap();
            mark_write(&client, &path).await;

            // 4. kazoo's writer queues behind ours.
            kazoo.send("write").await;
            kazoo.expect("BLOCKED").await;
            wait_children(&client, &path, |c| c.iter().any(|n| n.contains("__lock__"))).await;
            unmark(&client, &path, true).await;
            w.release().await.unwrap();
            kazoo.expect("ACQUIRED").await;

            // 5. Our reader queues behind kazoo's writer.
            let stats = LockStats::new();
            let reader = spawn_take(read, &client, &path, &stats);
            within("reader waiting", stats.wait_for(|s| s.waiting == 1)).await;
            settle(std::slice::from_ref(&client)).await;
            assert!(!reader.is_finished(), "{read:?}: read while kazoo wrote");
            kazoo.send("release").await;
            kazoo.expect("RELEASED").await;
            let r = within("reader granted", reader).await.unwrap();
            mark_read(&client, &path).await;

            // 6. kazoo's reader shares with ours at once.
            kazoo.send("read").await;
            kazoo.expect("ACQUIRED").await;
            kazoo.send("release").await;
            kazoo.expect("RELEASED").await;
            unmark(&client, &path, false).await;
            r.release().await.unwrap();

            kazoo.finish().await;
            wait_children(&client, &path, <[String]>::is_empty).await;
            eprintln!(
                "{}: {read:?}/{write:?} and kazoo ReadLock/WriteLock, both orders",
                server.name
            );
        }
    }
}
