//! A durable `shepherd serve` makes the names of the files it creates durable, not only their
//! bytes: fdatasync of a file does not write its directory entry, so after a power cut a new
//! log file (and the acknowledged writes in it) could be missing. Checked from the outside,
//! by tracing the server's system calls with strace: after a new log file is created, the
//! log's directory is fsynced; after a snapshot is renamed into place, the snapshot's.
//!
//! Needs strace, so it is ignored by default: `cargo test -p shepherd-zk-cli --test dir_sync
//! -- --ignored` (CI's "data directories" step runs it that way). Run so without strace, it
//! fails, never passes.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use shepherd_protocol::CreateMode;
use shepherd_testkit::{Peer, WAIT, bounded, create, hello, listening_addr, within};

/// The traced server: strace, and the server it started, both killed on drop.
struct Traced(Child);

impl Drop for Traced {
    fn drop(&mut self) {
        // The server is strace's only child; SIGKILL it first, then strace (which would
        // otherwise detach and leave it running).
        let children = format!("/proc/{0}/task/{0}/children", self.0.id());
        if let Ok(pids) = std::fs::read_to_string(children) {
            for pid in pids.split_whitespace() {
                let _ = Command::new("kill").args(["-KILL", pid]).status();
            }
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether a traced call on `line` is an fsync of the directory `dir` (strace `-y` prints the
/// path an fd stands for).
fn fsyncs_dir(line: &str, dir: &Path) -> bool {
    line.contains(" fsync(") && line.contains(&format!("<{}>)", dir.display()))
}

#[tokio::test]
#[ignore = "needs strace: cargo test -p shepherd-zk-cli --test dir_sync -- --ignored"]
async fn new_log_files_and_renamed_snapshots_have_their_directory_fsynced() {
    let installed = Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(installed, "strace is not installed: this test cannot run");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (snaps, logs) = (root.join("snaps"), root.join("logs"));
    let config = root.join("zoo.cfg");
    // Separate directories, so that each fsync is known to be the log's or the snapshot's;
    // a snapshot every few writes.
    std::fs::write(
        &config,
        format!("dataLogDir={}\nsnapCount=4\n", logs.display()),
    )
    .unwrap();
    let trace = root.join("trace");
    let mut child = Command::new("strace")
        .args(["-f", "-qq", "-y", "-o"])
        .arg(&trace)
        .args([
            "-e",
            "trace=openat,rename,renameat,renameat2,fsync,fdatasync",
        ])
        .arg(env!("CARGO_BIN_EXE_shepherd"))
        .args(["serve", "--bind", "127.0.0.1", "--port", "0", "--data-dir"])
        .arg(&snaps)
        .arg("--config")
        .arg(&config)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn strace");
    let stdout = child.stdout.take().expect("stdout");
    let traced = Traced(child);
    let line = bounded(
        WAIT,
        "the listening line",
        tokio::task::spawn_blocking(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            line
        }),
    )
    .await
    .expect("a listening line in time")
    .unwrap();
    let addr = listening_addr(&line)
        .unwrap_or_else(|| panic!("not a listening line: {line:?}"))
        .to_owned();

    let mut peer = Peer::tcp(addr.as_str()).await;
    peer.handshake(&hello()).await.expect("a session");
    for i in 0..20 {
        let path = format!("/n{i}");
        peer.call(&create(&path, b"v", CreateMode::Persistent))
            .await;
    }
    let (log_dir, snap_dir) = (logs.join("version-2"), snaps.join("version-2"));
    // The snapshots are written in the background: wait, bounded, for one's directory sync.
    let text = within(
        "a snapshot renamed into place and its directory synced",
        async {
            loop {
                let text = std::fs::read_to_string(&trace).unwrap_or_default();
                if text.lines().any(|l| fsyncs_dir(l, &snap_dir)) {
                    return text;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        },
    )
    .await;
    drop(traced);

    let lines: Vec<&str> = text.lines().collect();
    let created_log = lines
        .iter()
        .position(|l| l.contains("openat(") && l.contains("O_CREAT") && l.contains("/log."))
        .unwrap_or_else(|| panic!("no log file created:\n{text}"));
    assert!(
        lines[created_log..].iter().any(|l| fsyncs_dir(l, &log_dir)),
        "the log's directory {} was never fsynced after its file was created:\n{text}",
        log_dir.display()
    );
    let renamed = lines
        .iter()
        .position(|l| l.contains("rename") && l.contains("/snapshot."))
        .unwrap_or_else(|| panic!("no snapshot renamed into place:\n{text}"));
    assert!(
        lines[renamed..].iter().any(|l| fsyncs_dir(l, &snap_dir)),
        "the snapshot's directory was never fsynced after the rename:\n{text}"
    );
}
