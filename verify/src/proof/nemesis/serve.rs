//! `shepherd serve --data-dir` as a child process that a nemesis kills with SIGKILL and starts
//! again on the same data directory and port, so that clients reconnect to the same address
//! and resume their sessions from what the server had made durable.
//!
//! Invariant: at most one child runs at a time, and none outlives this value (it is killed on
//! drop, and its data directory removed, by `nemesis::owned::Owned`); every start waits,
//! bounded, for the child's `listening` line.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use super::owned::Owned;
use shepherd_testkit::spawn_serve_draining;

/// A durable `shepherd serve` that can be killed and restarted.
#[derive(Debug)]
pub struct DurableServe {
    bin: PathBuf,
    addr: String,
    process: Owned,
}

impl DurableServe {
    /// Starts `bin serve --data-dir dir` on a free loopback port; `dir` is this value's from
    /// now on, removed when it is dropped.
    ///
    /// # Panics
    /// If it does not announce its address in time ([`spawn_serve_draining`]).
    pub async fn start(bin: &Path, dir: &Path) -> DurableServe {
        let mut process = Owned::new(dir);
        let (child, addr) = spawn(bin, dir, 0).await;
        process.run(child);
        DurableServe {
            bin: bin.to_owned(),
            addr,
            process,
        }
    }

    /// `host:port`, the same across restarts.
    pub fn connect_string(&self) -> &str {
        &self.addr
    }

    /// SIGKILL, and reaps the child: nothing of it runs when this returns.
    pub fn kill9(&mut self) {
        self.process.kill9();
    }

    /// Starts the server again on the same directory and port (after [`kill9`](Self::kill9)).
    pub async fn restart(&mut self) {
        if self.process.running() {
            return;
        }
        let port = self
            .addr
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        let (child, _) = spawn(&self.bin, self.process.dir(), port).await;
        self.process.run(child);
    }
}

/// Spawns the server on `port` (0: any) and waits for its address.
async fn spawn(bin: &Path, dir: &Path, port: u16) -> (Child, String) {
    let mut serve = Command::new(bin);
    serve
        .args([
            "serve",
            "--bind",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--data-dir",
        ])
        .arg(dir)
        .env_remove("RUST_LOG");
    spawn_serve_draining(&mut serve).await
}
