//! One `shepherd serve --data-dir` process of the crash test: started on port 0 with its
//! address read from the `shepherd listening on ADDR` line, killed with SIGKILL (what a power
//! cut looks like to the process), its log kept in a file beside the data dir for failures.
//!
//! Invariant: a `Serve` never outlives the test: dropping it kills the process.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use shepherd_testkit::{WAIT, bounded, listening_addr};

/// A running `shepherd serve --data-dir`.
pub struct Serve {
    child: Child,
    /// `127.0.0.1:PORT`, as announced.
    pub addr: String,
    log: PathBuf,
}

impl Serve {
    /// Starts `shepherd serve --port 0 --data-dir data_dir` with `config` (zoo.cfg lines) and
    /// waits, bounded, for its `listening` line. The log goes to `log_dir/serve-<n>.log`.
    pub async fn start(data_dir: &Path, log_dir: &Path, n: usize, config: &str) -> Serve {
        let cfg = log_dir.join(format!("serve-{n}.cfg"));
        std::fs::write(&cfg, config).expect("write the config");
        let log = log_dir.join(format!("serve-{n}.log"));
        let stderr = std::fs::File::create(&log).expect("create the log file");
        let mut child = Command::new(env!("CARGO_BIN_EXE_shepherd"))
            .args(["serve", "--bind", "127.0.0.1", "--port", "0", "--data-dir"])
            .arg(data_dir)
            .arg("--config")
            .arg(&cfg)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn shepherd serve");
        let stdout = child.stdout.take().expect("stdout");
        // Scripts read the address from stdout; anything else there is skipped. The reader
        // then drains stdout until the process ends, so the server never meets a full pipe.
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(addr) = listening_addr(&line) {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(addr.to_owned());
                    }
                }
            }
        });
        let serve = |addr| Serve {
            child,
            addr,
            log: log.clone(),
        };
        match bounded(WAIT, "the `shepherd listening on` line", rx).await {
            Ok(Ok(addr)) => serve(addr),
            Ok(Err(_)) => {
                let mut s = serve(String::new());
                let status = s.child.wait();
                panic!(
                    "shepherd serve exited ({status:?}) without listening:\n{}",
                    s.log_text()
                );
            }
            Err(hang) => {
                let s = serve(String::new());
                panic!("{hang}\n{}", s.log_text());
            }
        }
    }

    /// SIGKILL, and waits for the exit.
    pub fn kill(mut self) {
        self.child.kill().expect("SIGKILL shepherd serve");
        self.child.wait().expect("reap shepherd serve");
    }

    /// The server's log so far, for failure messages.
    pub fn log_text(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        format!("--- {}:\n{text}", self.log.display())
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
