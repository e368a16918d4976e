//! A real ZooKeeper ensemble started by `.ci/real-zk-ensemble.sh`, seen through its members
//! file: stopping a member is `kill -9` on its JVM, starting it runs the member's start script,
//! partitioning it is `SIGSTOP` (its sockets stay open and unanswered, as a partitioned host's
//! do), healing it is `SIGCONT`.
//!
//! Invariant: the members file is the one record of which JVM serves which member; the start
//! script rewrites the member's line, and the script's exit trap kills whatever it lists, so a
//! JVM started here is never left running.
//!
//! A JVM is another process and offers no event to wait on, so "it is gone" and "it serves"
//! are polled, with a bound on both time and count (every wait here is at most
//! [`WAIT`]).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::wait::WAIT;

/// How often an external process is polled.
pub const POLL: Duration = Duration::from_millis(50);

/// One member as the members file lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Member {
    pub(super) id: u64,
    pub(super) port: u16,
    pub(super) pid: u32,
}

/// The ensemble's directory (the members file's) and its connect string.
#[derive(Debug)]
pub(super) struct RealEnsemble {
    members_file: PathBuf,
}

impl RealEnsemble {
    /// The ensemble the environment names (`SHEPHERD_REAL_ENSEMBLE_MEMBERS`), if any; panics
    /// if it names no file (a broken setup must not pass for a skipped run).
    pub(super) fn from_env() -> Option<RealEnsemble> {
        let file = std::env::var("SHEPHERD_REAL_ENSEMBLE_MEMBERS").ok()?;
        let file = PathBuf::from(file.trim());
        assert!(
            file.is_file(),
            "SHEPHERD_REAL_ENSEMBLE_MEMBERS names {}, which is no file",
            file.display()
        );
        Some(RealEnsemble { members_file: file })
    }

    /// Every member, in id order; panics if the file cannot be read (a broken setup).
    pub(super) fn members(&self) -> Vec<Member> {
        let text = std::fs::read_to_string(&self.members_file)
            .unwrap_or_else(|e| panic!("read {}: {e}", self.members_file.display()));
        let mut out: Vec<Member> = text
            .lines()
            .filter_map(|line| {
                let mut f = line.split_whitespace().map(str::parse::<u64>);
                let (id, port, pid) = (f.next()?.ok()?, f.next()?.ok()?, f.next()?.ok()?);
                Some(Member {
                    id,
                    port: u16::try_from(port).ok()?,
                    pid: u32::try_from(pid).ok()?,
                })
            })
            .collect();
        out.sort_by_key(|m| m.id);
        assert!(
            !out.is_empty(),
            "{} lists no member",
            self.members_file.display()
        );
        out
    }

    pub(super) fn member(&self, id: u64) -> Member {
        self.members()
            .into_iter()
            .find(|m| m.id == id)
            .unwrap_or_else(|| panic!("no member {id} in {}", self.members_file.display()))
    }

    fn dir(&self) -> &Path {
        self.members_file.parent().unwrap_or(Path::new("."))
    }

    /// Kills member `id`'s JVM (`kill -9`) and returns once the process is gone.
    pub(super) async fn stop(&self, id: u64) {
        let pid = self.member(id).pid;
        signal("-KILL", pid);
        poll(&format!("member {id} (pid {pid}) to die"), || async {
            !alive(pid)
        })
        .await;
    }

    /// Starts member `id`'s JVM again and returns once it serves (follower or leader).
    pub(super) async fn start(&self, id: u64) {
        let script = self.dir().join(id.to_string()).join("start");
        let out = Command::new("bash")
            .arg(&script)
            .output()
            .unwrap_or_else(|e| panic!("run {}: {e}", script.display()));
        assert!(out.status.success(), "{} failed: {out:?}", script.display());
        self.wait_serving(id).await;
    }

    /// Freezes member `id` (`SIGSTOP`): its connections stay open, nothing answers.
    pub(super) fn partition(&self, id: u64) {
        signal("-STOP", self.member(id).pid);
    }

    /// Thaws member `id` (`SIGCONT`) and returns once it serves again.
    pub(super) async fn heal(&self, id: u64) {
        signal("-CONT", self.member(id).pid);
        self.wait_serving(id).await;
    }

    /// Brings every member back: a frozen one thawed, a dead one started; returns once all
    /// serve. A test that failed half-way leaves the next one a whole ensemble.
    pub(super) async fn restore(&self) {
        for m in self.members() {
            if alive(m.pid) {
                signal("-CONT", m.pid);
                self.wait_serving(m.id).await;
            } else {
                self.start(m.id).await;
            }
        }
    }

    /// Member `id`'s mode (`leader`, `follower`), or `None` if it does not serve now.
    pub(super) async fn mode(&self, id: u64) -> Option<String> {
        mode(self.member(id).port).await
    }

    async fn wait_serving(&self, id: u64) {
        let port = self.member(id).port;
        poll(&format!("member {id} to serve"), || async {
            mode(port).await.is_some()
        })
        .await;
    }
}

/// The `Mode:` line of `srvr` on `port`, bounded so that a frozen member answers `None`.
pub async fn mode(port: u16) -> Option<String> {
    let ask = async {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.ok()?;
        stream.write_all(b"srvr").await.ok()?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.ok()?;
        answer
            .lines()
            .find_map(|l| l.strip_prefix("Mode: "))
            .map(str::to_owned)
    };
    tokio::time::timeout(Duration::from_secs(1), ask)
        .await
        .ok()
        .flatten()
}

fn signal(sig: &str, pid: u32) {
    // A member already gone is no error: the caller waits for the outcome it wants.
    let _ = Command::new("kill").arg(sig).arg(pid.to_string()).output();
}

fn alive(pid: u32) -> bool {
    Command::new("kill")
        .args(["-0", &pid.to_string()])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Polls `done` every [`POLL`] until it holds; panics naming `what` after [`WAIT`] of wall
/// time (an external process runs on wall time, whatever the test's clock).
pub async fn poll<F, Fut>(what: &str, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + WAIT;
    while std::time::Instant::now() < deadline {
        if done().await {
            return;
        }
        tokio::time::sleep(POLL).await;
    }
    panic!("HANG: nothing after {WAIT:?} waiting for {what}");
}
