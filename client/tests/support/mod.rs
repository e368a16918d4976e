//! Test support: the servers every test body runs against, unique paths, bounded waits, and a
//! TCP proxy whose connections can be cut, silenced or held.
#![allow(dead_code)]

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use shepherd_client::{Client, SessionState, SessionStatus};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A server to test against. `guard` keeps an embedded server alive for the test's duration.
pub struct TestServer {
    /// For messages.
    pub name: &'static str,
    /// `host:port` (no chroot).
    pub connect: String,
    _guard: Option<Box<dyn std::any::Any + Send>>,
}

/// Every server the test bodies run against: the embedded Shepherd server always, and real
/// ZooKeeper when `SHEPHERD_REAL_ZK` is set.
pub async fn servers() -> Vec<TestServer> {
    let mut out = Vec::new();
    match std::env::var("SHEPHERD_REAL_ZK") {
        Ok(addr) if !addr.is_empty() => out.push(TestServer {
            name: "zookeeper",
            connect: addr,
            _guard: None,
        }),
        _ => eprintln!("note: SHEPHERD_REAL_ZK is not set; skipping the real ZooKeeper runs"),
    }
    // The embedded Shepherd server, always: the runtime of each test owns it.
    // Reaping every second, as .ci/real-zk.sh configures real ZooKeeper.
    let server = shepherd_server::Server::builder()
        .container_check_interval(std::time::Duration::from_secs(1))
        .start()
        .await
        .expect("embedded server");
    out.push(TestServer {
        name: "shepherd",
        connect: server.connect_string(),
        _guard: Some(Box::new(server)),
    });
    out
}

/// A path no other test (or earlier run) uses: `/t-<name>-<pid>-<n>-<nanos>`.
pub fn unique(name: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let n = N.fetch_add(1, Ordering::Relaxed);
    format!("/t-{name}-{}-{n}-{nanos}", std::process::id())
}

/// The bound on any single wait in these tests.
pub const WAIT: Duration = Duration::from_secs(20);

/// Awaits `fut`, failing the test after [`WAIT`].
pub async fn within<F: Future>(what: &str, fut: F) -> F::Output {
    tokio::time::timeout(WAIT, fut)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

/// Waits until the session reaches `state`.
pub async fn wait_state(
    rx: &mut watch::Receiver<SessionStatus>,
    state: SessionState,
) -> SessionStatus {
    within(
        &format!("state {state:?}"),
        rx.wait_for(|s| s.state == state),
    )
    .await
    .expect("status channel closed")
    .clone()
}

/// A client with a 10 s session timeout.
pub async fn connect(connect: &str) -> Client {
    Client::builder()
        .session_timeout(Duration::from_secs(10))
        .connect(connect)
        .await
        .expect("connect")
}

/// A TCP proxy in front of one server.
pub struct Proxy {
    addr: String,
    conns: Arc<Registry>,
    paused: watch::Sender<bool>,
    swallowed: watch::Sender<usize>,
    task: JoinHandle<()>,
}

/// Per-connection controls: a kill switch and a blackhole flag (std mutex, never held across
/// an await).
type Registry = Mutex<Vec<(watch::Sender<bool>, Arc<AtomicBool>)>>;

impl Proxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub async fn start(upstream: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().unwrap().to_string();
        let conns = Arc::new(Registry::default());
        let (paused, _) = watch::channel(false);
        let (swallowed, _) = watch::channel(0);
        let upstream = upstream.to_owned();
        let (registry, pause_tx, hole_tx) = (conns.clone(), paused.clone(), swallowed.clone());
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (upstream, registry) = (upstream.clone(), registry.clone());
                let hole_tx = hole_tx.clone();
                let mut pause = pause_tx.subscribe();
                tokio::spawn(async move {
                    if pause.wait_for(|p| !*p).await.is_err() {
                        return;
                    }
                    let Ok(server) = TcpStream::connect(&upstream).await else {
                        return;
                    };
                    let (kill, killed) = watch::channel(false);
                    let blackhole = Arc::new(AtomicBool::new(false));
                    registry.lock().unwrap().push((kill, blackhole.clone()));
                    pipe(client, server, killed, (blackhole, hole_tx)).await;
                });
            }
        });
        Proxy {
            addr,
            conns,
            paused,
            swallowed,
            task,
        }
    }

    /// The proxy's `host:port`.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Closes every open connection (both sides).
    pub fn kill_all(&self) {
        for (kill, _) in self.conns.lock().unwrap().drain(..) {
            let _ = kill.send(true);
        }
    }

    /// Makes every open connection silently drop what it carries, both ways.
    pub fn blackhole_all(&self) {
        for (_, hole) in self.conns.lock().unwrap().iter() {
            hole.store(true, Ordering::SeqCst);
        }
    }

    /// Counts the bytes blackholed so far, both ways.
    pub fn swallowed(&self) -> watch::Receiver<usize> {
        self.swallowed.subscribe()
    }

    /// Holds new connections (accepted, not forwarded) until unpaused.
    pub fn pause(&self, paused: bool) {
        self.paused.send_replace(paused);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.kill_all();
        self.task.abort();
    }
}

async fn pipe(
    mut client: TcpStream,
    mut server: TcpStream,
    mut killed: watch::Receiver<bool>,
    blackhole: (Arc<AtomicBool>, watch::Sender<usize>),
) {
    let (mut cr, mut cw) = client.split();
    let (mut sr, mut sw) = server.split();
    tokio::select! {
        _ = copy(&mut cr, &mut sw, &blackhole) => {}
        _ = copy(&mut sr, &mut cw, &blackhole) => {}
        _ = killed.wait_for(|k| *k) => {}
    }
}

async fn copy<R, W>(
    r: &mut R,
    w: &mut W,
    (blackhole, swallowed): &(Arc<AtomicBool>, watch::Sender<usize>),
) -> std::io::Result<()>
where
    R: AsyncReadExt + Unpin,
    W: AsyncWriteExt + Unpin,
{
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = r.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        if blackhole.load(Ordering::SeqCst) {
            swallowed.send_modify(|total| *total += n);
        } else {
            w.write_all(&buf[..n]).await?;
        }
    }
}
