//! The launch contract as a launcher in another language meets it (docs/cli.md, "The launch
//! line"): `shepherd serve --ready-json` prints one JSON line once it listens, and nothing else
//! on stdout; a client connects to what it names and the test controls answer its token;
//! `--set` takes any zoo.cfg key and refuses an unknown one by name; `--exit-with-stdin` stops
//! cleanly when the launcher's pipe closes; and nothing listens that was not asked for.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::Value;
use shepherd_testkit::{WAIT, bounded, connect};

/// A running `shepherd serve --ready-json --exit-with-stdin`, its launch line parsed.
struct Launched {
    /// `None` once [`Launched::close_stdin`] took it to wait for its exit.
    child: Option<Child>,
    pid: u32,
    line: Value,
    stdin: Option<ChildStdin>,
    stdout: Option<BufReader<ChildStdout>>,
}

impl Launched {
    /// Starts `shepherd serve --port 0 --ready-json --exit-with-stdin ARGS` and waits for its
    /// launch line.
    async fn start(args: &[&str]) -> Launched {
        let mut child = Command::new(env!("CARGO_BIN_EXE_shepherd"))
            .args(["serve", "--port", "0", "--ready-json", "--exit-with-stdin"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn shepherd serve");
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let read = tokio::task::spawn_blocking(move || {
            let mut line = String::new();
            stdout.read_line(&mut line).map(|_| (stdout, line))
        });
        let read = bounded(WAIT, "the launch line", read).await;
        let Ok(Ok(Ok((stdout, text)))) = read else {
            let _ = child.kill();
            panic!("no launch line: {read:?}");
        };
        let line = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("not a JSON line ({e}): {text:?}"));
        Launched {
            pid: child.id(),
            child: Some(child),
            line,
            stdin,
            stdout: Some(stdout),
        }
    }

    fn ports(&self) -> Vec<u16> {
        let ports = self.line["ports"].as_array().expect("ports");
        ports
            .iter()
            .map(|p| p.as_u64().expect("a port") as u16)
            .collect()
    }

    /// Closes the server's stdin, as a dying launcher does, and returns its exit code and
    /// whatever else it printed on stdout.
    async fn close_stdin(mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        self.exit().await
    }

    /// Waits for the server to exit, stdin still open; its exit code and the rest of stdout.
    async fn exit(mut self) -> (Option<i32>, String) {
        let mut child = self.child.take().expect("running");
        let mut stdout = self.stdout.take().expect("stdout");
        let waited = tokio::task::spawn_blocking(move || {
            let mut rest = String::new();
            let _ = stdout.read_to_string(&mut rest);
            (child.wait().map(|s| s.code()), rest, child)
        });
        match bounded(WAIT, "the exit", waited).await {
            Ok(Ok((Ok(code), rest, _))) => (code, rest),
            other => panic!("no exit: {other:?}"),
        }
    }
}

impl Drop for Launched {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// One HTTP/1.1 request for `path` on `url`'s host with `token`; the status code and the body.
fn http(method: &str, url: &str, path: &str, token: Option<&str>) -> (u16, String) {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let host = rest.split('/').next().unwrap_or(rest);
    let mut stream = TcpStream::connect(host).expect("connect to the controls");
    stream.set_read_timeout(Some(WAIT)).expect("timeout");
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\n{auth}Content-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).expect("send");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read");
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {response:?}"));
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_string());
    (status, body.unwrap_or_default())
}

/// The TCP ports `pid` listens on, read from /proc: the sockets among its descriptors that
/// /proc/net/tcp{,6} lists in state LISTEN (0A).
#[cfg(target_os = "linux")]
fn listening_ports(pid: u32) -> Vec<u16> {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("the server's descriptors")
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter_map(|target| {
            let target = target.to_string_lossy().into_owned();
            Some(
                target
                    .strip_prefix("socket:[")?
                    .strip_suffix(']')?
                    .to_owned(),
            )
        })
        .collect();
    let mut ports = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for row in text.lines().skip(1) {
            let fields: Vec<&str> = row.split_whitespace().collect();
            let (Some(local), Some(state), Some(inode)) =
                (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            if *state == "0A" && inodes.iter().any(|i| i == inode) {
                let port = local
                    .rsplit(':')
                    .next()
                    .and_then(|p| u16::from_str_radix(p, 16).ok());
                ports.extend(port);
            }
        }
    }
    ports.sort_unstable();
    ports
}

#[tokio::test]
async fn the_launch_line_names_what_listens_and_stdin_closing_stops_the_server() {
    let launched = Launched::start(&["--test-controls", "--set", "tickTime=200"]).await;
    let line = &launched.line;
    assert_eq!(line["shepherd"], "ready", "{line}");
    assert_eq!(line["pid"], launched.pid, "{line}");
    let ports = launched.ports();
    assert_eq!(ports.len(), 1, "{line}");
    let connect_string = line["connect_string"].as_str().expect("connect_string");
    assert_eq!(connect_string, format!("127.0.0.1:{}", ports[0]));
    for absent in ["secure_port", "admin_url", "metrics_url", "data_dir"] {
        assert_eq!(line[absent], Value::Null, "{absent} in {line}");
    }

    // A client connects where the line says, and the session timeout follows --set's tick.
    let client = connect(connect_string).await;
    client
        .create(
            "/launched",
            b"",
            &shepherd_client::CreateOptions::persistent(),
        )
        .await
        .expect("create");
    let url = line["controls_url"]
        .as_str()
        .expect("controls_url")
        .to_owned();
    let token = line["controls_token"]
        .as_str()
        .expect("controls_token")
        .to_owned();
    let (status, body) = http("GET", &url, "/tree", Some(&token));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("/launched"), "{body}");
    let session = format!("{:#x}", client.session_id());
    let (status, body) = http("GET", &url, &format!("/sessions/{session}"), Some(&token));
    assert_eq!(status, 200, "{body}");
    let timeout: Value = serde_json::from_str(&body).expect("JSON session");
    assert_eq!(
        timeout["timeout_ms"], 4_000,
        "20 ticks of 200 ms cap the 10 s asked for: {body}"
    );
    drop(client);

    // Nothing else was printed, and the pipe closing is a clean stop.
    let (code, rest) = launched.close_stdin().await;
    assert_eq!(code, Some(0));
    assert_eq!(rest, "", "stdout holds the launch line alone");
}

#[tokio::test]
async fn zookeepers_shutdown_command_stops_the_server_cleanly() {
    let launched = Launched::start(&["--test-controls", "--test-controls-open-commands"]).await;
    let url = launched.line["controls_url"]
        .as_str()
        .expect("controls_url")
        .to_owned();
    let (status, body) = http("GET", &url, "/command/shutdown", None);
    assert_eq!((status, body.as_str()), (200, "command/shutdown\n"));
    assert_eq!(launched.exit().await, (Some(0), String::new()));
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn nothing_listens_that_was_not_asked_for() {
    let launched = Launched::start(&[]).await;
    assert_eq!(listening_ports(launched.pid), launched.ports());
    assert_eq!(launched.line["controls_url"], Value::Null);

    let launched = Launched::start(&["--members", "3", "--test-controls"]).await;
    let mut expected = launched.ports();
    assert_eq!(expected.len(), 3, "one port per member: {}", launched.line);
    let controls = launched.line["controls_url"]
        .as_str()
        .expect("controls_url");
    let controls_port = controls
        .rsplit(':')
        .next()
        .and_then(|p| p.parse::<u16>().ok());
    expected.extend(controls_port);
    expected.sort_unstable();
    assert_eq!(listening_ports(launched.pid), expected);
}

#[tokio::test]
async fn members_have_a_port_each_in_member_order() {
    let launched = Launched::start(&["--members", "3", "--test-controls"]).await;
    let ports = launched.ports();
    let url = launched.line["controls_url"]
        .as_str()
        .expect("controls_url");
    let token = launched.line["controls_token"].as_str().expect("token");
    let (status, body) = http("GET", url, "/members", Some(token));
    assert_eq!(status, 200, "{body}");
    let members: Value = serde_json::from_str(&body).expect("JSON members");
    let listed: Vec<(u64, String)> = members["members"]
        .as_array()
        .expect("members")
        .iter()
        .map(|m| {
            (
                m["id"].as_u64().expect("id"),
                m["addr"].as_str().expect("addr").to_owned(),
            )
        })
        .collect();
    let expected: Vec<(u64, String)> = (1..=3)
        .zip(ports.iter().map(|p| format!("127.0.0.1:{p}")))
        .collect();
    assert_eq!(listed, expected);
    let connect_string = launched.line["connect_string"].as_str().expect("connect");
    assert_eq!(
        connect_string,
        expected
            .iter()
            .map(|(_, a)| a.as_str())
            .collect::<Vec<_>>()
            .join(",")
    );
}

#[test]
fn an_unknown_setting_fails_at_start_naming_the_key() {
    for (setting, named) in [("tickTme=500", "tickTme"), ("tickTime", "tickTime")] {
        let output = Command::new(env!("CARGO_BIN_EXE_shepherd"))
            .args(["serve", "--port", "0", "--ready-json", "--set", setting])
            .stdin(Stdio::null())
            .output()
            .expect("run shepherd serve");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(named), "{stderr}");
        assert!(
            output.stdout.is_empty(),
            "no launch line for a server that never started"
        );
    }
}

#[tokio::test]
async fn a_setting_loses_to_a_flag_and_wins_over_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cfg = dir.path().join("zoo.cfg");
    std::fs::write(
        &cfg,
        "clientPort=1\nadmin.enableServer=true\nadmin.serverPort=1\n",
    )
    .expect("write zoo.cfg");
    let cfg = cfg.to_str().expect("a UTF-8 path");
    let settings = ["--set", "clientPort=2", "--set", "admin.serverPort=0"];
    let launched = Launched::start(&[&["--config", cfg][..], &settings].concat()).await;
    let line = &launched.line;
    assert!(launched.ports()[0] > 2, "--port 0 wins over both: {line}");
    let admin = line["admin_url"]
        .as_str()
        .expect("the file's AdminServer, on --set's port");
    assert!(!admin.ends_with(":1/commands"), "{admin}");
    let (status, body) = http("GET", admin, "/commands/ruok", None);
    assert_eq!(status, 200, "{body}");
}
