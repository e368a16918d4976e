//! `shepherd serve` as a child process, met as a user meets it: spawned, and its address read
//! from the first line it prints (`shepherd listening on ADDR`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use crate::wait::{WAIT, bounded};

/// The address in a `shepherd listening on ADDR` line (`ADDR` alone, without the ` (TLS)` a
/// secure port's line adds), or `None` for any other line.
pub fn listening_addr(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix("shepherd listening on ")?;
    Some(rest.strip_suffix(" (TLS)").unwrap_or(rest))
}

/// Spawns `serve` (a `shepherd serve …` command) with its output on a pipe (kept open in the
/// returned child) and its log dropped, and returns it with the address of its first line. Blocks until that line comes:
/// meant for tests and benchmarks whose server starts at once.
///
/// # Panics
/// If the process cannot be spawned, or its first line is not the listening line (the child
/// is killed first).
pub fn spawn_serve(serve: &mut Command) -> (Child, String) {
    let mut child = serve
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn shepherd serve");
    let mut line = String::new();
    let mut stdout = child.stdout.take().map(BufReader::new);
    let read = stdout.as_mut().map(|out| out.read_line(&mut line));
    // Kept open in the child's handle: a closed pipe would fail the server's later lines.
    child.stdout = stdout.map(BufReader::into_inner);
    match (read, listening_addr(&line)) {
        (Some(Ok(_)), Some(addr)) => {
            let addr = addr.to_owned();
            (child, addr)
        }
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("shepherd serve's first line is not `shepherd listening on ADDR`: {line:?}");
        }
    }
}

/// Spawns `serve` as [`spawn_serve`] does, for a child that runs long: the listening line may
/// come after others, it is awaited without blocking (bounded by [`WAIT`]), and a thread drains
/// the child's stdout for as long as it runs, so that it never meets a full pipe.
///
/// # Panics
/// If the process cannot be spawned, or prints no listening line within [`WAIT`] (the child is
/// killed first).
pub async fn spawn_serve_draining(serve: &mut Command) -> (Child, String) {
    let mut child = serve
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {serve:?}: {e}"));
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
            panic!("{serve:?} did not start: {other:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::listening_addr;

    #[test]
    fn the_address_of_a_listening_line_and_nothing_else() {
        let plain = "shepherd listening on 127.0.0.1:2181\n";
        assert_eq!(listening_addr(plain), Some("127.0.0.1:2181"));
        let secure = "shepherd listening on 127.0.0.1:2281 (TLS)";
        assert_eq!(listening_addr(secure), Some("127.0.0.1:2281"));
        assert_eq!(listening_addr("shepherd metrics on http://x"), None);
    }
}
