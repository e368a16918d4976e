//! The `shepherd` binary as a user meets it: `serve` announces its address and answers
//! ZooKeeper clients, and bad flags or a taken port give a clear error and exit code.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

fn shepherd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shepherd"))
}

#[test]
fn serve_announces_its_address_and_answers_four_letter_words() {
    let mut child = shepherd()
        .args(["serve", "--port", "0", "--tick-time", "500"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn shepherd serve");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("first line");
    let addr = line
        .trim()
        .strip_prefix("shepherd listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
        .to_string();
    assert!(
        addr.starts_with("127.0.0.1:"),
        "loopback by default: {addr}"
    );
    let mut stream = TcpStream::connect(&addr).expect("connect");
    stream.write_all(b"srvr").expect("send srvr");
    let mut text = String::new();
    stream.read_to_string(&mut text).expect("read srvr");
    assert!(text.contains("Mode: standalone"), "{text}");
    child.kill().expect("stop");
    child.wait().expect("reap");
}

#[test]
fn a_bad_flag_is_a_usage_error() {
    let output = shepherd()
        .args(["serve", "--port", "not-a-port"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--port"));
}

#[test]
fn a_taken_port_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port().to_string();
    let output = shepherd()
        .args(["serve", "--port", &port])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("already in use"), "{stderr}");
}

#[test]
fn a_bad_zoo_cfg_value_is_a_usage_error() {
    let dir = std::env::temp_dir().join(format!("shepherd-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bad = dir.join("bad.cfg");
    std::fs::write(&bad, "tickTime=fast\n").expect("write cfg");
    let output = shepherd()
        .args(["serve", "--config"])
        .arg(&bad)
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("tickTime=fast"));
    let _ = std::fs::remove_dir_all(&dir);
}
