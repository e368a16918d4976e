//! Start-to-ready of a real ZooKeeper 3.8 ensemble (`--real-zk-ensemble`): three
//! `QuorumPeerMain` JVMs of Debian's jar on loopback, configured as `.ci/real-zk-ensemble.sh`
//! configures them (tickTime 500, the same JVM options), timed from the first process start to
//! the moment every member has served a session (a ConnectResponse on a raw connection), which
//! is after the leader election and every follower's sync.
//!
//! Each run gets fresh ports and data directories, and its JVMs are killed and reaped before
//! the next one starts.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::first_session;

const JAR: &str = "/usr/share/java/zookeeper.jar";
const MEMBERS: u64 = 3;

/// The JVM options of `.ci/real-zk.sh` (REAL_ZK_JAVA_OPTS) and the ensemble script's
/// election connect timeout.
const JAVA_OPTS: &[&str] = &[
    "-Xmx256m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Dzookeeper.extendedTypesEnabled=true",
    "-Dznode.container.checkIntervalMs=1000",
    "-Dzookeeper.cnxTimeout=1000",
];

fn free_port() -> Option<u16> {
    Some(
        std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port(),
    )
}

/// Kills and reaps the run's JVMs however the run ends.
struct Jvms(Vec<Child>);

impl Drop for Jvms {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Writes member `id`'s directory under `dir` and starts its JVM.
fn start_member(dir: &Path, id: u64, client: u16, servers: &str) -> Option<Child> {
    let home = dir.join(id.to_string());
    std::fs::create_dir_all(home.join("data")).ok()?;
    std::fs::write(home.join("data").join("myid"), format!("{id}\n")).ok()?;
    std::fs::write(
        home.join("zoo.cfg"),
        format!(
            "tickTime=500\ninitLimit=10\nsyncLimit=5\ndataDir={}\nclientPort={client}\n\
             clientPortAddress=127.0.0.1\nadmin.enableServer=false\n{servers}",
            home.join("data").display()
        ),
    )
    .ok()?;
    std::fs::write(home.join("log4j.properties"), "log4j.rootLogger=ERROR\n").ok()?;
    let classpath = format!(
        "{}:{JAR}:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-log4j12.jar:\
         /usr/share/java/log4j-1.2.jar",
        home.display()
    );
    Command::new("java")
        .args(JAVA_OPTS)
        .args(["-cp", &classpath])
        .arg("org.apache.zookeeper.server.quorum.QuorumPeerMain")
        .arg(home.join("zoo.cfg"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()
}

/// One run: the time from the first JVM's start until every member has served a session.
async fn one_run(dir: &Path) -> Option<Duration> {
    let _ = std::fs::remove_dir_all(dir);
    let mut clients = Vec::new();
    let mut servers = String::new();
    for id in 1..=MEMBERS {
        clients.push(free_port()?);
        servers += &format!("server.{id}=127.0.0.1:{}:{}\n", free_port()?, free_port()?);
    }
    let started = Instant::now();
    let mut jvms = Jvms(Vec::new());
    for (id, &client) in (1..=MEMBERS).zip(&clients) {
        jvms.0.push(start_member(dir, id, client, &servers)?);
    }
    let deadline = started + Duration::from_secs(120);
    for client in clients {
        let addr = format!("127.0.0.1:{client}");
        loop {
            if Instant::now() >= deadline {
                return None;
            }
            // A member accepts connections before it serves (it closes them while it looks for
            // a leader or syncs), and one accepted while it starts may never be read: every
            // attempt is bounded.
            let attempt = tokio::time::timeout(Duration::from_millis(500), first_session(&addr));
            if matches!(attempt.await, Ok(Ok(()))) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    let ready = started.elapsed();
    drop(jvms);
    let _ = std::fs::remove_dir_all(dir);
    Some(ready)
}

/// The start-to-ready of each of `runs` starts of a three-member real ensemble, or `None` if
/// ZooKeeper is not installed or a run failed (a port taken meanwhile, say).
pub async fn start_to_ready(runs: usize) -> Option<Vec<Duration>> {
    if !Path::new(JAR).exists() {
        eprintln!("real ZooKeeper not installed ({JAR}); skipping the ensemble comparison");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("shepherd-bench-zk-ens-{}", std::process::id()));
    let mut samples = Vec::with_capacity(runs);
    for run in 0..runs {
        match one_run(&dir).await {
            Some(ready) => samples.push(ready),
            None => {
                eprintln!("real ZooKeeper ensemble run {run} did not become ready");
                return None;
            }
        }
    }
    Some(samples)
}
