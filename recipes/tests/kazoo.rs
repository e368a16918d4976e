//! Interoperability with kazoo's `Lock` (Python): a Shepherd [`Mutex`] and a kazoo lock on the
//! same path never hold at the same time, whichever comes first. kazoo is told about Curator's
//! node names with `extra_lock_patterns=["-lock-"]`; we recognise kazoo's `__lock__` nodes by
//! their sequence suffix. Skipped when python3 with kazoo is missing.
//!
//! Each holder, once it holds, creates an ephemeral marker node and deletes it before
//! releasing: a second simultaneous holder would find the marker (`VIOLATION`).

mod support;

use std::process::Stdio;

use shepherd_client::CreateOptions;
use shepherd_recipes::Mutex;
use support::{connect, servers, unique, wait_children, within};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

const SCRIPT: &str = r#"
import sys
from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError
hosts, path, marker = sys.argv[1:4]
zk = KazooClient(hosts=hosts)
zk.start()
lock = zk.Lock(path, "kazoo", extra_lock_patterns=["-lock-"])
lock.acquire()
try:
    zk.create(marker, ephemeral=True)
    print("ACQUIRED", flush=True)
except NodeExistsError:
    print("VIOLATION", flush=True)
sys.stdin.readline()
zk.delete(marker)
lock.release()
print("RELEASED", flush=True)
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shepherd_mutex_and_kazoo_lock_exclude_each_other() {
    if !kazoo_available() {
        eprintln!("note: python3 with kazoo is missing; skipping");
        return;
    }
    for server in servers().await {
        let client = connect(&server.connect).await;
        let path = unique("kazoo");
        let marker = format!("{path}-held");
        let ephemeral = CreateOptions::ephemeral();

        // Shepherd first.
        let mutex = Mutex::new(&client, &path);
        let guard = mutex.acquire().await.unwrap();
        client.create(&marker, b"", &ephemeral).await.unwrap();
        let mut child = Command::new("python3")
            .args(["-u", "-c", SCRIPT, &server.connect, &path, &marker])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("python3");
        let mut stdin = child.stdin.take().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        // kazoo's contender node is in line behind ours.
        wait_children(&client, &path, |c| c.iter().any(|n| n.contains("__lock__"))).await;
        client.delete(&marker, None).await.unwrap();
        guard.release().await.unwrap();
        let line = within("kazoo acquires", lines.next_line()).await.unwrap();
        assert_eq!(
            line.as_deref(),
            Some("ACQUIRED"),
            "kazoo held the lock together with us"
        );

        // kazoo first: our mutex must queue behind kazoo's node.
        let stats = mutex.stats().clone();
        let mutex = std::sync::Arc::new(mutex);
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
        stdin.write_all(b"release\n").await.unwrap();
        let guard = within("our turn", waiting).await.unwrap();
        client
            .create(&marker, b"", &ephemeral)
            .await
            .expect("kazoo still holds");
        let line = within("kazoo released", lines.next_line()).await.unwrap();
        assert_eq!(line.as_deref(), Some("RELEASED"));
        assert!(within("kazoo exits", child.wait()).await.unwrap().success());
        client.delete(&marker, None).await.unwrap();
        guard.release().await.unwrap();
        wait_children(&client, &path, <[String]>::is_empty).await;
    }
}
