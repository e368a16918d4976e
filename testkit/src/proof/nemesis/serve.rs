//! `shepherd serve --data-dir` as a child process that a nemesis kills with SIGKILL and starts
//! again on the same data directory and port, so that clients reconnect to the same address
//! and resume their sessions from what the server had made durable.
//!
//! Invariant: at most one child runs at a time, and none outlives this value (it is killed on
//! drop, and its data directory removed); every start waits, bounded, for the child's
//! `listening` line.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::listening_addr;
use crate::wait::{WAIT, bounded};

/// A durable `shepherd serve` that can be killed and restarted.
#[derive(Debug)]
pub struct DurableServe {
    bin: PathBuf,
    dir: PathBuf,
    addr: String,
    child: Option<Child>,
}

impl DurableServe {
    /// Starts `bin serve --data-dir dir` on a free loopback port; `dir` is this value's from
    /// now on, removed when it is dropped.
    ///
    /// # Panics
    /// If it does not announce its address within [`WAIT`].
    pub async fn start(bin: &Path, dir: &Path) -> DurableServe {
        let (child, addr) = spawn(bin, dir, 0).await;
        DurableServe {
            bin: bin.to_owned(),
            dir: dir.to_owned(),
            addr,
            child: Some(child),
        }
    }

    /// `host:port`, the same across restarts.
    pub fn connect_string(&self) -> &str {
        &self.addr
    }

    /// SIGKILL, and reaps the child: nothing of it runs when this returns.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same directory and port (after [`kill9`](Self::kill9)).
    pub async fn restart(&mut self) {
        if self.child.is_some() {
            return;
        }
        let port = self
            .addr
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        let (child, _) = spawn(&self.bin, &self.dir, port).await;
        self.child = Some(child);
    }
}

impl Drop for DurableServe {
    /// Kills the process and removes its directory, which is this value's alone.
    fn drop(&mut self) {
        self.kill9();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Spawns the server and reads its address from the first lines of its stdout, on a thread
/// that then drains the rest, so that the child never meets a full pipe.
async fn spawn(bin: &Path, dir: &Path, port: u16) -> (Child, String) {
    let mut child = Command::new(bin)
        .args([
            "serve",
            "--bind",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--data-dir",
        ])
        .arg(dir)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {} serve: {e}", bin.display()));
    let stdout = child.stdout.take().expect("a piped stdout");
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let (Some(addr), Some(tx)) = (listening_addr(&line), tx.take()) {
                let _ = tx.send(addr.to_owned());
            }
        }
    });
    match bounded(WAIT, "shepherd serve's listening line", rx).await {
        Ok(Ok(addr)) => (child, addr),
        other => {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "shepherd serve --data-dir {} did not start: {other:?}",
                dir.display()
            );
        }
    }
}
