//! A real ZooKeeper standalone server of our own (Debian's `zookeeper.jar`, started as
//! `.ci/real-zk.sh` starts one), that a nemesis kills with SIGKILL and starts again on the same
//! dataDir and port: the shared one CI starts must not be killed under other tests.
//!
//! Invariant: at most one JVM runs at a time and none outlives this value (killed on drop,
//! its directory removed, by `nemesis::owned::Owned`); every start waits, bounded, until
//! `srvr` answers with a `Mode:` line, the moment ZooKeeper accepts sessions (it answers `ruok`
//! earlier).

use std::path::Path;
use std::process::{Command, Stdio};

use super::owned::Owned;
use shepherd_testkit::ensemble::real::{mode, poll};

/// The classpath of Debian's ZooKeeper, as `.ci/real-zk.sh` has it.
const CLASSPATH: &str = "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-api.jar:\
                         /usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar";

/// A ZooKeeper standalone JVM that can be killed and restarted.
#[derive(Debug)]
pub struct OwnZooKeeper {
    port: u16,
    process: Owned,
}

impl OwnZooKeeper {
    /// Whether Debian's ZooKeeper and a JVM are installed here.
    pub fn available() -> bool {
        Path::new("/usr/share/java/zookeeper.jar").is_file()
            && Command::new("java")
                .arg("-version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
    }

    /// Starts one in `dir` (its zoo.cfg and dataDir) on a free loopback port; `dir` is this
    /// value's from now on, removed when it is dropped.
    pub async fn start(dir: &Path) -> OwnZooKeeper {
        let port = free_port();
        std::fs::create_dir_all(dir.join("data")).expect("create the dataDir");
        std::fs::write(
            dir.join("zoo.cfg"),
            format!(
                "tickTime=2000\ndataDir={}\nclientPort={port}\nclientPortAddress=127.0.0.1\n\
                 admin.enableServer=false\n4lw.commands.whitelist=*\nmaxClientCnxns=0\n",
                dir.join("data").display()
            ),
        )
        .expect("write zoo.cfg");
        std::fs::write(
            dir.join("log4j.properties"),
            "log4j.rootLogger=WARN, CONSOLE\n\
             log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender\n\
             log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout\n",
        )
        .expect("write log4j.properties");
        let mut zk = OwnZooKeeper {
            port,
            process: Owned::new(dir),
        };
        zk.restart().await;
        zk
    }

    /// `127.0.0.1:PORT`, the same across restarts.
    pub fn connect_string(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// SIGKILL, and reaps the JVM.
    pub fn kill9(&mut self) {
        self.process.kill9();
    }

    /// Starts the JVM (again) on the same dataDir and port; returns once it accepts sessions.
    pub async fn restart(&mut self) {
        if self.process.running() {
            return;
        }
        let dir = self.process.dir();
        let log = std::fs::File::create(dir.join("zookeeper.log")).expect("the log file");
        let child = Command::new("java")
            .args([
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-cp",
            ])
            .arg(format!("{}:{CLASSPATH}", dir.display()))
            .arg("org.apache.zookeeper.server.ZooKeeperServerMain")
            .arg(dir.join("zoo.cfg"))
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ZooKeeper's JVM");
        self.process.run(child);
        let port = self.port;
        poll("our ZooKeeper to accept sessions", || async move {
            mode(port).await.is_some()
        })
        .await;
    }
}

/// A loopback port free a moment ago (ZooKeeper cannot be asked for port 0).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}
