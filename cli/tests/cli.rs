//! The `shepherd` binary as a user meets it: `serve` announces its address and answers
//! ZooKeeper clients, stops cleanly on SIGTERM or SIGINT, logs without colour codes to a pipe
//! (or as JSON lines), and bad flags or a taken port give a clear error and exit code.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdout, Command, Output, Stdio};

use shepherd_testkit::{WAIT, bounded, listening_addr, spawn_serve};

fn shepherd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shepherd"))
}

/// A running `shepherd serve`, with stdout and stderr piped, and the address it announced.
struct Serving {
    child: Child,
    addr: String,
    // Kept open so that the server's stdout is never a closed pipe.
    _stdout: BufReader<ChildStdout>,
}

impl Serving {
    /// Starts `shepherd serve --port 0` with `args` and the default log filter, and waits for
    /// its `listening` line.
    async fn start(args: &[&str]) -> Serving {
        let mut child = shepherd()
            .args(["serve", "--port", "0"])
            .args(args)
            .env_remove("RUST_LOG")
            .env_remove("NO_COLOR")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn shepherd serve");
        let pid = child.id();
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let read = tokio::task::spawn_blocking(move || {
            let mut line = String::new();
            stdout.read_line(&mut line).map(|_| (stdout, line))
        });
        let (stdout, line) = match bounded(WAIT, "the listening line", read).await {
            Ok(read) => read.expect("reader").expect("read the first line"),
            Err(hang) => {
                signal(pid, "KILL");
                panic!("{hang}");
            }
        };
        let addr = listening_addr(&line)
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .to_owned();
        Serving {
            child,
            addr,
            _stdout: stdout,
        }
    }

    /// Sends `signal` (a name `kill` knows: TERM, INT).
    fn signal(&self, name: &str) {
        signal(self.child.id(), name);
    }

    /// Waits for the process to exit; its status and stderr (stdout's first line was read).
    async fn exit(self) -> Output {
        wait_output(self.child, "shepherd serve to exit").await
    }
}

/// Waits, bounded, for `child` to exit and returns its output; kills it and fails on a hang.
async fn wait_output(child: Child, what: &str) -> Output {
    let pid = child.id();
    match bounded(
        WAIT,
        what,
        tokio::task::spawn_blocking(move || child.wait_with_output()),
    )
    .await
    {
        Ok(output) => output.expect("waiter").expect("wait"),
        Err(hang) => {
            signal(pid, "KILL");
            panic!("{hang}");
        }
    }
}

/// `kill -<name> <pid>`.
fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{name} {pid}: {status}");
}

/// Starts `shepherd serve` with `args`, holds one idle client connection open, stops it with
/// `signal`, and returns how it exited.
async fn serve_then(args: &[&str], signal: &str) -> Output {
    let serving = Serving::start(args).await;
    // An open connection must not hold the stop up: the clean stop closes it.
    let idle = TcpStream::connect(&serving.addr).expect("connect");
    serving.signal(signal);
    let output = serving.exit().await;
    drop(idle);
    output
}

/// The last non-empty line of `text`.
fn last_line(text: &str) -> &str {
    text.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("")
}

#[test]
fn serve_announces_its_address_and_answers_four_letter_words() {
    let (mut child, addr) =
        spawn_serve(shepherd().args(["serve", "--port", "0", "--tick-time", "500"]));
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_serve_cleanly_with_a_final_stopped_line() {
    let output = serve_then(&[], "TERM").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{}\n{stderr}", output.status);
    assert!(stderr.contains("SIGTERM"), "{stderr}");
    assert!(
        last_line(&stderr).ends_with(" stopped"),
        "last line: {:?}\n{stderr}",
        last_line(&stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_stops_serve_as_cleanly_as_sigterm() {
    let output = serve_then(&[], "INT").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{}\n{stderr}", output.status);
    assert!(stderr.contains("SIGINT"), "{stderr}");
    assert!(last_line(&stderr).ends_with(" stopped"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_to_a_pipe_carry_no_escape_bytes() {
    let output = serve_then(&["--log-format", "text"], "TERM").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Not vacuous: the lines are there, and would be coloured on a terminal.
    assert!(stderr.contains("INFO"), "{stderr}");
    assert!(
        !output.stderr.contains(&0x1b),
        "an ESC byte in a piped log: {stderr:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_are_one_object_a_line_with_level_and_message() {
    let output = serve_then(&["--log-format", "json"], "TERM").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let lines: Vec<serde_json::Value> = stderr
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect();
    assert!(lines.len() >= 3, "serving, stopping, stopped: {stderr}");
    for line in &lines {
        assert!(line["level"].is_string(), "no level: {line}");
        assert!(line["message"].is_string(), "no message: {line}");
        assert!(line["timestamp"].is_string(), "no timestamp: {line}");
    }
    // The serving line (after the one that says the server keeps nothing on disk).
    let serving = lines
        .iter()
        .find(|l| l.get("addr").is_some())
        .unwrap_or_else(|| panic!("no line with the address: {stderr}"));
    assert_eq!(serving["level"], "INFO");
    assert!(
        serving["addr"]
            .as_str()
            .is_some_and(|a| a.starts_with("127.0.0.1:")),
        "fields sit beside the message: {serving}"
    );
    let stopping = lines
        .iter()
        .find(|l| l["signal"] == "SIGTERM")
        .unwrap_or_else(|| panic!("no stopping line: {stderr}"));
    assert_eq!(stopping["level"], "INFO");
    assert_eq!(lines[lines.len() - 1]["message"], "stopped");
    assert!(!output.stderr.contains(&0x1b), "{stderr:?}");
}

#[test]
fn a_bad_log_format_is_a_usage_error() {
    let output = shepherd()
        .args(["serve", "--port", "0", "--log-format", "xml"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--log-format"), "{stderr}");
    assert!(stderr.contains("json"), "names the choices: {stderr}");
}

/// Every file under `dir` with its bytes, sorted by path.
fn files_under(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("list a directory") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).expect("read a file");
                files.push((path, bytes));
            }
        }
    }
    files.sort();
    files
}

/// A flipped bit in the newest log: `serve` refuses with exit code 4 and changes nothing; `datadir
/// check` says so, and `datadir repair` up to the last good zxid lets it start again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_log_stops_serve_with_exit_4_and_leaves_every_file_as_it_was() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let data = dir.path().to_str().expect("a UTF-8 path");
    let serving = Serving::start(&["--data-dir", data]).await;
    let client = shepherd_testkit::connect(&serving.addr).await;
    let persistent = shepherd_client::CreateOptions::persistent();
    for i in 0..50 {
        let path = format!("/n{i:02}");
        client
            .create(&path, &[b'x'; 64], &persistent)
            .await
            .expect("create");
    }
    client.close().await.expect("close");
    serving.signal("TERM");
    assert!(serving.exit().await.status.success());
    // One flipped bit in the middle of what the newest log holds: acknowledged entries follow.
    let logs = dir.path().join("version-2");
    let newest = std::fs::read_dir(&logs)
        .expect("the log directory")
        .map(|e| e.expect("an entry").path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("log."))
        })
        .max()
        .expect("a log file");
    let mut bytes = std::fs::read(&newest).expect("read the log");
    let written = bytes.iter().rposition(|b| *b != 0).expect("entries");
    bytes[written / 2] ^= 0x10;
    std::fs::write(&newest, &bytes).expect("damage the log");
    let before = files_under(dir.path());

    let restart = shepherd()
        .args(["serve", "--port", "0", "--data-dir", data])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn shepherd serve");
    let output = wait_output(restart, "shepherd serve to refuse the damaged log").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(4), "stderr: {stderr}");
    assert!(
        stderr.contains("is damaged, not torn") && stderr.contains("offset"),
        "stderr: {stderr}"
    );
    assert!(output.stdout.is_empty(), "it never listened");
    // The lock file aside, every byte as it was.
    let unlocked = |files: Vec<(std::path::PathBuf, Vec<u8>)>| -> Vec<_> {
        files
            .into_iter()
            .filter(|(p, _)| !p.ends_with("shepherd.lock"))
            .collect()
    };
    let before = unlocked(before);
    assert_eq!(unlocked(files_under(dir.path())), before);

    // The operator's way out: check names the last good zxid, repair keeps up to it.
    let check = shepherd()
        .args(["datadir", "check", data])
        .output()
        .expect("check");
    let report = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(1), "{report}");
    let zxid = report
        .split("--truncate-after ")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .unwrap_or_else(|| panic!("no zxid to keep in: {report}"))
        .to_owned();
    assert_eq!(
        unlocked(files_under(dir.path())),
        before,
        "check changes nothing"
    );
    let repair = shepherd()
        .args(["datadir", "repair", data, "--truncate-after", &zxid])
        .output()
        .expect("repair");
    assert!(repair.status.success(), "{repair:?}");
    let check = shepherd()
        .args(["datadir", "check", data])
        .output()
        .expect("check");
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    let serving = Serving::start(&["--data-dir", data]).await;
    let client = shepherd_testkit::connect(&serving.addr).await;
    let kept = client.get_children("/").await.expect("the root's children");
    assert!(!kept.is_empty() && kept.len() < 51, "kept {kept:?}");
    client.close().await.expect("close");
    serving.signal("TERM");
    assert!(serving.exit().await.status.success());
}

/// With 128 descriptors, 180 idle connections and writes that roll the log and take snapshots:
/// the connections past the server's share are refused, and the server and every write go on.
/// (The log's next file used to fail to open, and the server to exit.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_out_of_descriptors_refuses_connections_not_the_server() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let cfg = dir.path().join("zoo.cfg");
    let data = dir.path().join("data");
    std::fs::write(
        &cfg,
        format!(
            "dataDir={}\nsnapCount=10\npreAllocSize=64\nmaxClientCnxns=0\n",
            data.display()
        ),
    )
    .expect("write zoo.cfg");
    let mut command = Command::new("bash");
    command
        .args(["-c", "ulimit -n 128 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_shepherd"))
        .args(["serve", "--port", "0", "--config"])
        .arg(&cfg);
    let (mut child, addr) = spawn_serve(&mut command);
    let client = shepherd_testkit::connect(&addr).await;
    let idle: Vec<TcpStream> = (0..180)
        .filter_map(|_| TcpStream::connect(&addr).ok())
        .collect();
    assert!(!idle.is_empty());
    // Before writing, the server has taken all the connections it will: it either refused some
    // (closed them: a read sees the end) or holds nearly every descriptor it has.
    for stream in &idle {
        stream.set_nonblocking(true).expect("nonblocking");
    }
    let pid = child.id();
    let settled = || {
        let open = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count);
        let refused = idle
            .iter()
            .any(|mut s| matches!(Read::read(&mut s, &mut [0u8; 1]), Ok(0)));
        open >= 126 || refused
    };
    let mut polls = 0;
    while !settled() {
        polls += 1;
        assert!(
            polls < 500,
            "the server neither refused nor took the connections in 5 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let persistent = shepherd_client::CreateOptions::persistent();
    for i in 0..40 {
        let created = client.create(&format!("/d{i}"), b"x", &persistent).await;
        assert!(created.is_ok(), "create /d{i}: {created:?}");
    }
    assert!(
        child.try_wait().expect("the child").is_none(),
        "the server still runs"
    );
    let logs = std::fs::read_dir(data.join("version-2"))
        .expect("the data directory")
        .filter(|e| {
            let name = e.as_ref().expect("an entry").file_name();
            name.to_string_lossy().starts_with("log.")
        })
        .count();
    assert!(logs >= 2, "the log rolled ({logs} files)");
    drop(idle);
    client.close().await.expect("close");
    signal(child.id(), "TERM");
    let output = wait_output(child, "serve to stop").await;
    assert!(output.status.success(), "{output:?}");
}
