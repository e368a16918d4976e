//! Test support: the servers every test runs against, unique paths, bounded event waits, and
//! a TCP proxy that can cut a connection right after a chosen request reached the server.
#![allow(dead_code)]

pub mod kinds;

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use shepherd_client::{Client, SessionState};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A server to test against.
pub struct TestServer {
    /// For messages.
    pub name: &'static str,
    /// `host:port` (no chroot).
    pub connect: String,
    /// The embedded server's handle (`None` for real ZooKeeper).
    embedded: Option<shepherd_server::ServerHandle>,
}

impl TestServer {
    /// Ends `client`'s session the way the server itself would: on the embedded server by
    /// [`shepherd_server::ServerHandle::expire_session`] (ephemerals deleted, the connection
    /// closed, the client told on reconnecting), on real ZooKeeper by [`expire`] (so `client`
    /// must talk through `proxy` there). Returns once the client has seen `Expired`.
    pub async fn expire(&self, client: &Client, proxy: &Proxy) {
        match &self.embedded {
            Some(handle) => {
                let mut status = client.status_watch();
                handle.expire_session(client.session_id());
                within(
                    "expiry",
                    status.wait_for(|s| s.state == SessionState::Expired),
                )
                .await
                .expect("status");
            }
            None => expire(client, proxy, &self.connect).await,
        }
    }
}

/// Every server the tests run against. Without any, tests pass quietly.
pub async fn servers() -> Vec<TestServer> {
    let mut out = Vec::new();
    match std::env::var("SHEPHERD_REAL_ZK") {
        Ok(addr) if !addr.is_empty() => out.push(TestServer {
            name: "zookeeper",
            connect: addr,
            embedded: None,
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
        embedded: Some(server),
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
pub const WAIT: Duration = Duration::from_secs(30);

/// Awaits `fut`, failing the test after [`WAIT`].
pub async fn within<F: Future>(what: &str, fut: F) -> F::Output {
    tokio::time::timeout(WAIT, fut)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

/// A client with a 10 s session timeout.
pub async fn connect(connect: &str) -> Client {
    connect_with(connect, Duration::from_secs(10)).await
}

/// A client asking for `timeout` as its session timeout.
pub async fn connect_with(connect: &str, timeout: Duration) -> Client {
    Client::builder()
        .session_timeout(timeout)
        .connect(connect)
        .await
        .expect("connect")
}

/// Waits (on child watches) until the children of `dir` satisfy `pred`; a missing `dir` counts
/// as no children. Returns them, sorted.
pub async fn wait_children(
    client: &Client,
    dir: &str,
    pred: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    within(&format!("children of {dir}"), async {
        loop {
            match client.get_children_w(dir).await {
                Ok((mut children, _, watcher)) => {
                    children.sort();
                    if pred(&children) {
                        return children;
                    }
                    watcher.await.expect("child watch");
                }
                Err(e) if e.is_no_node() => {
                    let (stat, watcher) = client.exists_w(dir).await.expect("exists");
                    if stat.is_none() {
                        if pred(&[]) {
                            return Vec::new();
                        }
                        watcher.await.expect("exists watch");
                    }
                }
                Err(e) => panic!("get_children {dir}: {e}"),
            }
        }
    })
    .await
}

/// The children of `dir` now (none if it is missing), sorted.
pub async fn children(client: &Client, dir: &str) -> Vec<String> {
    match client.get_children(dir).await {
        Ok(mut c) => {
            c.sort();
            c
        }
        Err(e) if e.is_no_node() => Vec::new(),
        Err(e) => panic!("get_children {dir}: {e}"),
    }
}

/// One round trip on each client: every watch event the server sent them before now has
/// resolved its watcher when this returns.
pub async fn settle(clients: &[Client]) {
    for c in clients {
        within("settle", c.exists("/")).await.expect("exists /");
    }
}

/// Ends `client`'s session on the server. `client` must talk through `proxy`: its reconnects
/// are held while a second client takes the session over with its id and password (the
/// server drops the first connection) and closes it.
pub async fn expire(client: &Client, proxy: &Proxy, connect: &str) {
    let mut status = client.status_watch();
    proxy.pause(true);
    let twin = Client::builder()
        .session(client.session_id(), client.session_password())
        .connect(connect)
        .await
        .expect("connect twin");
    within(
        "disconnect",
        status.wait_for(|s| s.state == SessionState::Disconnected),
    )
    .await
    .expect("status");
    twin.close().await.expect("close twin");
    proxy.pause(false);
    within(
        "expiry",
        status.wait_for(|s| s.state == SessionState::Expired),
    )
    .await
    .expect("status");
}

/// ZooKeeper op codes the proxy can cut after.
pub const OP_CREATE: i32 = 1;
/// create2, what the client sends for creates.
pub const OP_CREATE2: i32 = 15;
/// delete.
pub const OP_DELETE: i32 = 2;

/// What to cut: the first request of one of `ops` whose path contains `marker`.
#[derive(Debug, Clone)]
struct Arm {
    ops: Vec<i32>,
    marker: String,
}

#[derive(Default)]
struct ProxyState {
    arm: Option<Arm>,
    kills: Vec<watch::Sender<bool>>,
}

/// A TCP proxy in front of one server. Frames are parsed (4-byte length prefix) so that an
/// armed request can be forwarded, its reply read from the server and withheld, and the
/// connection then closed: the request was applied, but the client never hears of it.
pub struct Proxy {
    addr: String,
    state: Arc<Mutex<ProxyState>>,
    cuts: watch::Sender<usize>,
    paused: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub async fn start(upstream: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().unwrap().to_string();
        let state = Arc::new(Mutex::new(ProxyState::default()));
        let (cuts, _) = watch::channel(0);
        let (paused, _) = watch::channel(false);
        let upstream = upstream.to_owned();
        let (st, cuts_tx, paused_tx) = (state.clone(), cuts.clone(), paused.clone());
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (upstream, st, cuts_tx) = (upstream.clone(), st.clone(), cuts_tx.clone());
                let mut paused = paused_tx.subscribe();
                tokio::spawn(async move {
                    if paused.wait_for(|p| !*p).await.is_err() {
                        return;
                    }
                    let Ok(server) = TcpStream::connect(&upstream).await else {
                        return;
                    };
                    let (kill, killed) = watch::channel(false);
                    st.lock().unwrap().kills.push(kill);
                    pipe(client, server, killed, st, cuts_tx).await;
                });
            }
        });
        Proxy {
            addr,
            state,
            cuts,
            paused,
            task,
        }
    }

    /// The proxy's `host:port`.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Arms the proxy: the next request with an op in `ops` and a path containing `marker` is
    /// forwarded, its reply withheld, and its connection cut.
    pub fn cut_after(&self, ops: &[i32], marker: &str) {
        self.state.lock().unwrap().arm = Some(Arm {
            ops: ops.to_vec(),
            marker: marker.to_owned(),
        });
    }

    /// How many connections were cut that way.
    pub fn cuts(&self) -> usize {
        *self.cuts.borrow()
    }

    /// Closes every open connection.
    pub fn kill_all(&self) {
        for kill in self.state.lock().unwrap().kills.drain(..) {
            let _ = kill.send(true);
        }
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

async fn read_frame<R: AsyncReadExt + Unpin>(r: &mut R) -> Option<Vec<u8>> {
    let len = r.read_i32().await.ok()?;
    let mut body = vec![0; usize::try_from(len).ok()?];
    r.read_exact(&mut body).await.ok()?;
    Some(body)
}

/// One write per frame (with `TCP_NODELAY` set on both legs, no segment waits for the
/// previous one's acknowledgement).
async fn write_frame<W: AsyncWriteExt + Unpin>(w: &mut W, body: &[u8]) -> Option<()> {
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&i32::try_from(body.len()).ok()?.to_be_bytes());
    frame.extend_from_slice(body);
    w.write_all(&frame).await.ok()
}

fn be_i32(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

async fn pipe(
    mut client: TcpStream,
    mut server: TcpStream,
    mut killed: watch::Receiver<bool>,
    state: Arc<Mutex<ProxyState>>,
    cuts: watch::Sender<usize>,
) {
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (mut cr, mut cw) = client.split();
    let (mut sr, mut sw) = server.split();
    let (cut_tx, cut_rx) = watch::channel(None::<i32>);
    tokio::select! {
        _ = upstream(&mut cr, &mut sw, &state, &cut_tx) => {}
        _ = downstream(&mut sr, &mut cw, &cut_rx, &cuts) => {}
        _ = killed.wait_for(|k| *k) => {}
    }
}

/// Client to server: notes the xid of an armed request.
async fn upstream<R, W>(
    cr: &mut R,
    sw: &mut W,
    state: &Mutex<ProxyState>,
    cut: &watch::Sender<Option<i32>>,
) -> Option<()>
where
    R: AsyncReadExt + Unpin,
    W: AsyncWriteExt + Unpin,
{
    let first = read_frame(cr).await?; // ConnectRequest
    write_frame(sw, &first).await?;
    loop {
        let frame = read_frame(cr).await?;
        let (xid, op) = (be_i32(&frame, 0)?, be_i32(&frame, 4)?);
        {
            let mut st = state.lock().unwrap();
            if let Some(arm) = &st.arm {
                let path = be_i32(&frame, 8)
                    .and_then(|n| frame.get(12..12 + usize::try_from(n).ok()?))
                    .map(|p| String::from_utf8_lossy(p).into_owned());
                if arm.ops.contains(&op) && path.is_some_and(|p| p.contains(&arm.marker)) {
                    st.arm = None;
                    cut.send_replace(Some(xid));
                }
            }
        }
        write_frame(sw, &frame).await?;
    }
}

/// Server to client: withholds the armed request's reply and ends the connection.
async fn downstream<R, W>(
    sr: &mut R,
    cw: &mut W,
    cut: &watch::Receiver<Option<i32>>,
    cuts: &watch::Sender<usize>,
) -> Option<()>
where
    R: AsyncReadExt + Unpin,
    W: AsyncWriteExt + Unpin,
{
    let first = read_frame(sr).await?; // ConnectResponse
    write_frame(cw, &first).await?;
    loop {
        let frame = read_frame(sr).await?;
        if *cut.borrow() == Some(be_i32(&frame, 0)?) {
            cuts.send_modify(|n| *n += 1);
            return None;
        }
        write_frame(cw, &frame).await?;
    }
}
