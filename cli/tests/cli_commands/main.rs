//! The `shepherd` client commands as a user runs them: the built binary against the embedded
//! server, and against real ZooKeeper too when `SHEPHERD_REAL_ZK` is set; each test checks the
//! output and the exit code.
//!
//! Each module is one group of commands: `read` (ls, tree, get, stat), `write` (create in every
//! mode, set, delete), `access` (getacl, setacl, addauth, --auth), `watch`, `dump_load`,
//! `locks`, and `usage` (exit codes for what the user got wrong).

mod access;
mod dump_load;
mod locks;
mod read;
mod secure;
mod shell;
mod usage;
mod watch;
mod write;

use std::process::{Command, Output, Stdio};

use shepherd_testkit::within;

/// The built `shepherd` binary.
pub fn shepherd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shepherd"))
}

/// What one run of a command gave.
#[derive(Debug)]
pub struct Ran {
    /// The exit code (`None` if killed by a signal).
    pub code: Option<i32>,
    /// stdout, as text.
    pub stdout: String,
    /// stderr, as text.
    pub stderr: String,
}

impl Ran {
    /// Panics unless the command succeeded; returns its stdout.
    pub fn ok(&self) -> &str {
        assert_eq!(self.code, Some(0), "{self:?}");
        &self.stdout
    }

    /// stdout as one JSON value.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.ok()).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }
}

/// Runs `shepherd ARGS --server CONNECT` to its end (bounded), with `stdin` as its input.
pub async fn run_with_input(connect: &str, args: &[&str], stdin: Option<Vec<u8>>) -> Ran {
    let mut command = shepherd();
    command
        .args(args)
        .args(["--server", connect, "--connect-timeout", "10000"])
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let what = format!("shepherd {}", args.join(" "));
    let output: Output = within(
        &what,
        tokio::task::spawn_blocking(move || {
            let mut child = command.spawn().expect("spawn shepherd");
            if let Some(bytes) = stdin {
                use std::io::Write;
                let mut pipe = child.stdin.take().expect("stdin");
                pipe.write_all(&bytes).expect("write stdin");
            }
            child.wait_with_output().expect("wait for shepherd")
        }),
    )
    .await
    .expect("the blocking task");
    Ran {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Runs `shepherd ARGS --server CONNECT` to its end (bounded).
pub async fn run(connect: &str, args: &[&str]) -> Ran {
    run_with_input(connect, args, None).await
}
