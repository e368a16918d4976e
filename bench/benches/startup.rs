//! Start-to-ready time of an embedded server: from `Server::builder()` to the first ConnectResponse
//! a raw client receives, median of many starts. With `--real-zk` it also times Debian's ZooKeeper
//! 3.8 from process start to its first ConnectResponse, and prints the ratio.
//!
//! Run: `cargo bench -p shepherd-bench --bench startup` (add `-- --members 3,5` to time embedded
//! ensembles until every member answers a session, `-- --serve` to time the `shepherd serve`
//! process, in memory and on an empty data directory, from spawn to its first session (build it
//! first: `cargo build --release --bin shepherd`), `-- --real-zk` where ZooKeeper is installed, and
//! `-- --real-zk-ensemble` for a real three-member ensemble's, see `startup/real_ensemble.rs`).

// In a folder of its own: a file directly in benches/ would be taken for a benchmark.
#[path = "startup/real_ensemble.rs"]
mod real_ensemble;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use shepherd_protocol::{Codec, ConnectRequest, ConnectResponse, decode_from, encode_frame};
use shepherd_testkit::spawn_serve;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const STARTS: usize = 200;

/// Opens a session on `addr` and returns once the ConnectResponse has arrived.
async fn first_session(addr: &str) -> std::io::Result<()> {
    let mut stream = TcpStream::connect(addr).await?;
    let request = ConnectRequest {
        timeout: 30_000,
        passwd: Some(vec![0; 16]),
        read_only: Some(false),
        ..Default::default()
    };
    stream
        .write_all(&encode_frame(|b| request.encode(b)))
        .await?;
    let mut len = [0u8; 4];
    stream.read_exact(&mut len).await?;
    let mut payload = vec![0u8; u32::from_be_bytes(len) as usize];
    stream.read_exact(&mut payload).await?;
    decode_from::<ConnectResponse>(&payload)
        .map(|_| ())
        .map_err(|e| std::io::Error::other(e.to_string()))
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// An embedded ensemble of `members` members: from `Server::builder()` until every member has
/// answered a session handshake (the sessions in turn, one per member), median of `starts`.
async fn shepherd_ensemble_start_to_ready(members: usize, starts: usize) -> Duration {
    let mut samples = Vec::with_capacity(starts);
    for _ in 0..starts {
        let started = Instant::now();
        let server = shepherd_server::Server::builder()
            .members(members)
            .start()
            .await
            .expect("start");
        for id in server.members().ids() {
            let addr = server.members().addr(id).expect("a member").to_string();
            first_session(&addr).await.expect("session");
        }
        samples.push(started.elapsed());
        server.shutdown().await;
    }
    median(samples)
}

/// `--members 3,5` (or `--members=3,5`): the member counts to time as embedded ensembles.
fn members_arg() -> Vec<usize> {
    let args: Vec<String> = std::env::args().collect();
    let mut value = None;
    for (i, arg) in args.iter().enumerate() {
        if arg == "--members" {
            value = args.get(i + 1).cloned();
        } else if let Some(v) = arg.strip_prefix("--members=") {
            value = Some(v.to_string());
        }
    }
    value
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_default()
}

async fn shepherd_start_to_ready() -> Duration {
    let mut samples = Vec::with_capacity(STARTS);
    for _ in 0..STARTS {
        let started = Instant::now();
        let server = shepherd_server::Server::builder()
            .start()
            .await
            .expect("start");
        first_session(&server.connect_string())
            .await
            .expect("session");
        samples.push(started.elapsed());
        server.shutdown().await;
    }
    median(samples)
}

/// How many times `--serve` starts the process, per kind.
const SERVE_STARTS: usize = 50;

/// `shepherd serve` (this build's binary) from spawn to its first session's ConnectResponse,
/// median of `starts`: in memory, or durable on an empty folder under `data_dir` when given
/// (a new folder each start, so that every start creates its data directory and first log).
/// The process prints `shepherd listening on ADDR` once it accepts; the session is opened
/// right after that line, so the time covers the process start, the configuration, the
/// storage and the first handshake.
async fn serve_start_to_ready(data_dir: Option<&Path>, starts: usize) -> Duration {
    let mut samples = Vec::with_capacity(starts);
    let shepherd = shepherd_cli::binary::shepherd().expect("the shepherd binary");
    for start in 0..starts {
        let mut command = Command::new(&shepherd);
        command.args(["serve", "--bind", "127.0.0.1", "--port", "0"]);
        if let Some(dir) = data_dir {
            command.arg("--data-dir").arg(dir.join(start.to_string()));
        }
        let started = Instant::now();
        // The first line is the listening line; a blocking read of it is what a supervisor
        // waiting for readiness does too.
        let (mut child, addr) = spawn_serve(command.env("RUST_LOG", "warn"));
        first_session(&addr).await.expect("session");
        samples.push(started.elapsed());
        let _ = child.kill();
        let _ = child.wait();
    }
    median(samples)
}

/// `--serve`: the process, in memory and durable.
async fn serve_runs() {
    let memory = serve_start_to_ready(None, SERVE_STARTS).await;
    println!(
        "shepherd serve (in memory): spawn to first session median {memory:?} over \
         {SERVE_STARTS} starts"
    );
    let dir = std::env::temp_dir().join(format!("shepherd-bench-serve-{}", std::process::id()));
    let durable = serve_start_to_ready(Some(&dir), SERVE_STARTS).await;
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "shepherd serve --data-dir (empty): spawn to first session median {durable:?} over \
         {SERVE_STARTS} starts"
    );
}

/// Starts Debian's ZooKeeper on a free port and waits for its first session.
async fn real_zk_start_to_ready(runs: usize) -> Option<Duration> {
    let jar = "/usr/share/java/zookeeper.jar";
    if !std::path::Path::new(jar).exists() {
        eprintln!("real ZooKeeper not installed ({jar}); skipping the comparison");
        return None;
    }
    let mut samples = Vec::new();
    for _ in 0..runs {
        let dir = std::env::temp_dir().join(format!("shepherd-bench-zk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("data")).ok()?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        std::fs::write(
            dir.join("zoo.cfg"),
            format!(
                "tickTime=2000\ndataDir={}\nclientPort={port}\nclientPortAddress=127.0.0.1\n\
                 admin.enableServer=false\n",
                dir.join("data").display()
            ),
        )
        .ok()?;
        std::fs::write(dir.join("log4j.properties"), "log4j.rootLogger=ERROR\n").ok()?;
        let classpath = format!(
            "{}:{jar}:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar",
            dir.display()
        );
        let started = Instant::now();
        let mut child = Command::new("java")
            .args(["-cp", &classpath])
            .arg("org.apache.zookeeper.server.ZooKeeperServerMain")
            .arg(dir.join("zoo.cfg"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let addr = format!("127.0.0.1:{port}");
        let deadline = started + Duration::from_secs(60);
        let mut ready = None;
        while Instant::now() < deadline {
            // A connection accepted while ZooKeeper is still starting may never be read, so
            // every attempt is bounded.
            let attempt = tokio::time::timeout(Duration::from_millis(500), first_session(&addr));
            if matches!(attempt.await, Ok(Ok(()))) {
                ready = Some(started.elapsed());
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let _ = child.kill();
        let _ = child.wait();
        let _ = std::fs::remove_dir_all(&dir);
        samples.push(ready?);
    }
    Some(median(samples))
}

#[tokio::main]
async fn main() {
    let with_real = std::env::args().any(|a| a == "--real-zk");
    if std::env::args().any(|a| a == "--real-zk-ensemble") {
        real_zk_ensemble().await;
    }
    let shepherd = shepherd_start_to_ready().await;
    println!("shepherd embedded: start-to-ready median {shepherd:?} over {STARTS} starts");
    if std::env::args().any(|a| a == "--serve") {
        serve_runs().await;
    }
    for members in members_arg() {
        let ready = shepherd_ensemble_start_to_ready(members, STARTS).await;
        println!(
            "shepherd embedded ensemble of {members}: start-to-ready (every member answered a \
             session) median {ready:?} over {STARTS} starts"
        );
    }
    if with_real {
        if let Some(real) = real_zk_start_to_ready(5).await {
            println!("zookeeper 3.8 (JVM): start-to-ready median {real:?} over 5 starts");
            println!(
                "ratio zookeeper/shepherd: {:.0}x",
                real.as_secs_f64() / shepherd.as_secs_f64()
            );
        }
    }
}

/// `--real-zk-ensemble`: a real three-member ensemble's start-to-ready (every member serving),
/// for the comparison with `--members` (docs/ensemble.md, "Start-to-ready").
async fn real_zk_ensemble() {
    const RUNS: usize = 5;
    if let Some(samples) = real_ensemble::start_to_ready(RUNS).await {
        let min = samples.iter().min().copied().unwrap_or_default();
        let max = samples.iter().max().copied().unwrap_or_default();
        println!(
            "zookeeper 3.8 ensemble (3 JVMs): start-to-ready (every member serving) median \
             {:?} over {RUNS} starts (min {min:?}, max {max:?})",
            median(samples.clone())
        );
    }
}
