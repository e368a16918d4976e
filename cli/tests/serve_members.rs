//! `shepherd serve --members N` as a user meets it: one `listening on` line per member, in id
//! order, the first shaped exactly as a single server's, and each member answering `srvr`
//! with its mode.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

use shepherd_testkit::{WAIT, bounded, listening_addr};

/// A member's `srvr` `Mode:` line.
fn mode(addr: &str) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.write_all(b"srvr").expect("send srvr");
    let mut text = String::new();
    stream.read_to_string(&mut text).expect("read srvr");
    text.lines()
        .find_map(|l| l.strip_prefix("Mode: "))
        .unwrap_or_else(|| panic!("no Mode line: {text:?}"))
        .to_string()
}

#[tokio::test]
async fn serve_members_prints_a_line_per_member_and_each_reports_its_mode() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_shepherd"))
        .args(["serve", "--port", "0", "--members", "3"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn shepherd serve");
    let stdout = child.stdout.take().expect("stdout");
    let read = tokio::task::spawn_blocking(move || {
        let mut stdout = BufReader::new(stdout);
        let mut addrs = Vec::new();
        for _ in 0..3 {
            let mut line = String::new();
            stdout.read_line(&mut line).expect("a line");
            addrs.push(line);
        }
        (stdout, addrs)
    });
    let read = bounded(WAIT, "three listening lines", read).await;
    let Ok(Ok((_stdout, lines))) = read else {
        let _ = child.kill();
        panic!("no listening lines: {read:?}");
    };
    let addrs: Vec<String> = lines
        .iter()
        .map(|line| {
            listening_addr(line)
                .filter(|addr| addr.starts_with("127.0.0.1:"))
                .unwrap_or_else(|| panic!("unexpected line: {line:?}"))
                .to_owned()
        })
        .collect();
    let modes: Vec<String> = addrs.iter().map(|a| mode(a)).collect();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(modes, ["follower", "follower", "leader"]);
}

#[test]
fn zero_members_is_a_usage_error() {
    let output = Command::new(env!("CARGO_BIN_EXE_shepherd"))
        .args(["serve", "--port", "0", "--members", "0"])
        .output()
        .expect("run shepherd serve");
    assert_eq!(output.status.code(), Some(2), "clap's usage error");
}

#[test]
fn member_ports_is_an_ensemble_of_its_own_and_excludes_members_and_port() {
    for excluded in [["--members", "2"], ["--port", "0"]] {
        let output = Command::new(env!("CARGO_BIN_EXE_shepherd"))
            .args(["serve", "--member-ports", "0,0"])
            .args(excluded)
            .output()
            .expect("run shepherd serve");
        assert_eq!(
            output.status.code(),
            Some(2),
            "{excluded:?}: clap's usage error"
        );
    }
}
