//! `watch`: the events of a persistent watch (recursive with `-R`), flushed as they come; the
//! test waits (bounded) for the first lines, then kills the command.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};

use shepherd_client::CreateOptions;
use shepherd_testkit::on_both_servers;
use shepherd_testkit::{connect, unique, within};

use crate::shepherd;

/// Starts `shepherd watch ARGS` and waits for its `watching` line (the watch is armed).
async fn start(
    connect: &str,
    args: &[&str],
) -> (Child, std::io::Lines<BufReader<std::process::ChildStdout>>) {
    let mut child = shepherd()
        .arg("watch")
        .args(args)
        .args(["--server", connect])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn shepherd watch");
    let stderr = child.stderr.take().expect("stderr");
    let first = within(
        "the watching line",
        tokio::task::spawn_blocking(move || {
            let mut line = String::new();
            BufReader::new(stderr).read_line(&mut line).map(|_| line)
        }),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(first.starts_with("watching "), "{first:?}");
    let stdout = child.stdout.take().expect("stdout");
    (child, BufReader::new(stdout).lines())
}

/// The next `n` lines of the command's stdout (bounded).
async fn next_lines(
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
    n: usize,
) -> (
    Vec<String>,
    std::io::Lines<BufReader<std::process::ChildStdout>>,
) {
    within(
        "watch lines",
        tokio::task::spawn_blocking(move || {
            let mut lines = lines;
            let got: Vec<String> = (&mut lines).take(n).map(|l| l.expect("a line")).collect();
            (got, lines)
        }),
    )
    .await
    .unwrap()
}

fn stop(mut child: Child) {
    child.kill().expect("kill watch");
    child.wait().expect("reap watch");
}

on_both_servers! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn watch_prints_events_recursive_or_not(server) {
        let root = unique("cli-watch");
        let client = connect(&server.connect).await;
        let p = CreateOptions::persistent();
        let (child, lines) = start(&server.connect, &["-R", &root]).await;
        client.create(&root, b"", &p).await.unwrap();
        client.create(&format!("{root}/a"), b"", &p).await.unwrap();
        client
            .set_data(&format!("{root}/a"), b"x", None)
            .await
            .unwrap();
        client.delete(&format!("{root}/a"), None).await.unwrap();
        let (got, _) = next_lines(lines, 4).await;
        assert_eq!(
            got,
            [
                format!("NodeCreated {root}"),
                format!("NodeCreated {root}/a"),
                format!("NodeDataChanged {root}/a"),
                format!("NodeDeleted {root}/a"),
            ],
            "{}",
            server.name
        );
        stop(child);
        // Not recursive: the node's own events, and its children changing; JSON lines.
        let (child, lines) = start(&server.connect, &["--json", &root]).await;
        client.create(&format!("{root}/b"), b"", &p).await.unwrap();
        client.set_data(&root, b"y", None).await.unwrap();
        let (got, _) = next_lines(lines, 2).await;
        let events: Vec<serde_json::Value> = got
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(events[0]["type"], "NodeChildrenChanged", "{}", server.name);
        assert_eq!(events[0]["path"], root.as_str());
        assert_eq!(events[1]["type"], "NodeDataChanged");
        stop(child);
        server.shutdown().await;
    }
}
