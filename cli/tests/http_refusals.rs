//! The HTTP listener's refusals are logged through the per-address rate limit the client port
//! uses: a client opening connections in a tight loop past the listener's limit must not flood
//! the log with a line each.

use std::io::{BufRead, BufReader, Read};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use shepherd_testkit::{WAIT, bounded};

/// Connections the HTTP listener serves at once (`shepherd_server::http::MAX_CONNECTIONS`).
const SERVED: usize = 64;

/// Refusals provoked past it.
const REFUSED: usize = 100;

/// `shepherd serve`, killed on drop.
struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// 64 idle connections take every slot of the AdminServer's listener; 100 more are each
/// closed on accept (the peer reads the end of the stream). The log has a few lines about
/// them, not a hundred. (Each refusal used to log a line of its own.)
#[tokio::test]
async fn a_hundred_http_refusals_log_a_few_lines() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("serve.log");
    let child = Command::new(env!("CARGO_BIN_EXE_shepherd"))
        .args(["serve", "--bind", "127.0.0.1", "--port", "0"])
        .args(["--admin-port", "0"])
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("spawn shepherd serve");
    let mut serve = Serve(child);
    let stdout = serve.0.stdout.take().expect("stdout");
    let admin = bounded(
        WAIT,
        "the admin server's line",
        tokio::task::spawn_blocking(move || {
            BufReader::new(stdout)
                .lines()
                .take(10)
                .map_while(Result::ok)
                .find_map(|line| {
                    line.strip_prefix("shepherd admin server on http://")
                        .and_then(|rest| rest.strip_suffix("/commands"))
                        .map(str::to_owned)
                })
        }),
    )
    .await
    .expect("the line in time")
    .unwrap()
    .expect("an admin server line");

    let result = bounded(
        WAIT,
        "the refusals",
        tokio::task::spawn_blocking(move || {
            let held: Vec<TcpStream> = (0..SERVED)
                .map(|_| TcpStream::connect(&admin).expect("connect"))
                .collect();
            let mut closed = 0;
            for _ in 0..REFUSED {
                let mut refused = TcpStream::connect(&admin).expect("connect");
                refused
                    .set_read_timeout(Some(Duration::from_secs(5)))
                    .unwrap();
                // Closed on accept: the end of the stream (or a reset), never data or a wait.
                match refused.read(&mut [0; 1]) {
                    Ok(0) => closed += 1,
                    Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => closed += 1,
                    _ => {}
                }
            }
            drop(held);
            closed
        }),
    )
    .await
    .expect("the refusals in time")
    .unwrap();
    assert_eq!(result, REFUSED, "every connection past the limit closed");
    drop(serve);
    let text = std::fs::read_to_string(&log).unwrap();
    let lines = text
        .lines()
        .filter(|l| l.contains("too many HTTP connections"))
        .count();
    assert!(
        (1..=5).contains(&lines),
        "{lines} lines for {REFUSED} refusals:\n{text}"
    );
}
