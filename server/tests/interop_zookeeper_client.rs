//! Interop tests through a client nobody on the team wrote: the `zookeeper-client` crate
//! (kezhuw, 0.11) on tokio.
//!
//! Every test body is written once and runs against every server of [`servers`]: the embedded
//! Shepherd server always, plus real ZooKeeper when `SHEPHERD_REAL_ZK=host:port` is set (start one
//! with `source .ci/real-zk.sh`). Each run works under its own random root path, so runs never
//! collide on a shared real server. A test body that fails on one server does not stop it from
//! running on the others; the test then fails naming the servers where it failed.
//!
//! The reference is ZooKeeper 3.8 (`/work/shared/zk-protocol.md`). Where the crate assumes 3.9
//! (§17 of the reference), the assertions state the 3.8 truth as a user of the crate sees it,
//! with a comment.
//!
//! No sleeps: conditions are awaited as events, each bounded by [`LIMIT`]. "Nothing happened"
//! is asserted after a round trip on the same connection: a server delivers the notifications of
//! a change before the reply of any later request on that connection (§9.6), and the crate
//! dispatches notifications to watchers before it completes the later reply.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use shepherd_server::{Server, ServerHandle};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use zookeeper_client::{
    self as zk, Acl, Acls, AddWatchMode, AuthId, AuthUser, CheckWriteError, CreateMode,
    CreateOptions, EnsembleUpdate, Error, EventType, MultiReadResult, MultiWriteError,
    MultiWriteResult, Permission, SessionState, Stat, WatchedEvent,
};

/// The bound on every wait for the network, an event or a state change.
const LIMIT: Duration = Duration::from_secs(10);

const PERSISTENT: CreateOptions<'static> = CreateMode::Persistent.with_acls(Acls::anyone_all());
const EPHEMERAL: CreateOptions<'static> = CreateMode::Ephemeral.with_acls(Acls::anyone_all());
const SEQUENTIAL: CreateOptions<'static> =
    CreateMode::PersistentSequential.with_acls(Acls::anyone_all());
const CONTAINER: CreateOptions<'static> = CreateMode::Container.with_acls(Acls::anyone_all());
const HOUR: Duration = Duration::from_secs(3600);

/// `alice:secret` as a digest identity: `user:base64(sha1("user:password"))` (§12.4).
const ALICE: &[u8] = b"alice:secret";
const ALICE_ID: &str = "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=";

// ------------------------------------------------------------------------------------------------
// Servers and per-run context
// ------------------------------------------------------------------------------------------------

/// One server a test runs against.
struct Target {
    name: &'static str,
    /// `host:port`.
    connect: String,
    /// The embedded server, for Shepherd only.
    shepherd: Option<Arc<ServerHandle>>,
}

/// Real ZooKeeper's connect string, when `SHEPHERD_REAL_ZK=host:port` is set.
fn real_zookeeper() -> Option<String> {
    std::env::var("SHEPHERD_REAL_ZK")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The servers every test runs against: a fresh embedded Shepherd, and real ZooKeeper if set.
async fn servers() -> Vec<Target> {
    // Configured like .ci/real-zk.sh: tickTime 2000, TTL nodes enabled, every four-letter word,
    // and the container/TTL reaper every second (-Dznode.container.checkIntervalMs=1000).
    let shepherd = Server::builder()
        .tick_time(Duration::from_millis(2000))
        .all_four_letter_words()
        .with_config(|config| {
            config.core.extended_types_enabled = true;
            config.core.container_check_interval_ms = 1000;
        })
        .start()
        .await
        .expect("the embedded server starts");
    let mut all = vec![Target {
        name: "shepherd",
        connect: shepherd.connect_string(),
        shepherd: Some(Arc::new(shepherd)),
    }];
    if let Some(connect) = real_zookeeper() {
        all.push(Target {
            name: "zookeeper",
            connect,
            shepherd: None,
        });
    }
    all
}

/// What a test body gets: where to connect and its own root path.
#[derive(Clone)]
struct Ctx {
    connect: String,
    root: String,
    shepherd: Option<Arc<ServerHandle>>,
}

impl Ctx {
    /// An absolute path under this run's root.
    fn path(&self, relative: &str) -> String {
        format!("{}/{relative}", self.root)
    }

    async fn client(&self) -> zk::Client {
        connect(&self.connect).await
    }

    /// Expires the session of `client`, which is connected through `proxy`.
    ///
    /// Shepherd: `ServerHandle::expire_session`, which expires the session exactly as its
    /// timeout would, closing its connection. This test depends on that method (the server team
    /// is finishing it). Real ZooKeeper has no such hook: the proxy keeps the client away until
    /// the server expires the session on its timeout, seen as the deletion of an ephemeral
    /// marker, and then lets the client back.
    async fn expire(&self, client: &zk::Client, proxy: &Proxy) {
        match &self.shepherd {
            Some(server) => server.expire_session(client.session_id().0),
            None => {
                let marker = self.path(&format!("expiry-marker-{:x}", client.session_id().0));
                client
                    .create(&marker, b"", &EPHEMERAL)
                    .await
                    .expect("create the expiry marker");
                let observer = self.client().await;
                let (_, gone) = observer
                    .check_and_watch_stat(&marker)
                    .await
                    .expect("watch the expiry marker");
                proxy.hold();
                proxy.cut();
                assert_eq!(
                    within("the expiry marker's NodeDeleted", gone.changed()).await,
                    event(EventType::NodeDeleted, &marker)
                );
                proxy.resume();
            }
        }
    }
}

fn unique_root(test: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("/interop-{test}-{nanos:x}-{:x}-{n}", std::process::id())
}

/// Runs `body` once per server, each in its own task so that a failure on one server does not
/// hide the outcome on the others; fails naming every server where the body failed.
async fn everywhere<F, Fut>(test: &str, body: F)
where
    F: Fn(Ctx) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut failures = Vec::new();
    for target in servers().await {
        let root = unique_root(test);
        eprintln!(
            "--- {test} on {} ({}), root {root}",
            target.name, target.connect
        );
        let admin = connect(&target.connect).await;
        admin
            .create(&root, b"", &PERSISTENT)
            .await
            .expect("create the run's root");
        let ctx = Ctx {
            connect: target.connect.clone(),
            root: root.clone(),
            shepherd: target.shepherd.clone(),
        };
        if let Err(error) = tokio::spawn(body(ctx)).await {
            let message = match error.try_into_panic() {
                Ok(panic) => panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "panic".to_string()),
                Err(error) => error.to_string(),
            };
            eprintln!("--- {test} FAILED on {}: {message}", target.name);
            failures.push(format!("{}: {message}", target.name));
        }
        // Best effort: leave nothing behind on a shared server.
        admin.auth("digest", ALICE).await.ok();
        let _ = tokio::time::timeout(LIMIT, remove_tree(&admin, &root)).await;
        drop(admin);
        if let Some(server) = target.shepherd {
            server.shutdown().await;
        }
    }
    assert!(failures.is_empty(), "{test} failed on {failures:#?}");
}

async fn remove_tree(client: &zk::Client, root: &str) {
    let mut all = vec![root.to_string()];
    let mut i = 0;
    while i < all.len() {
        if let Ok(children) = client.list_children(&all[i]).await {
            let parent = all[i].clone();
            all.extend(children.into_iter().map(|c| format!("{parent}/{c}")));
        }
        i += 1;
    }
    for path in all.iter().rev() {
        let _ = client.delete(path, None).await;
    }
}

// ------------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------------

async fn within<F: Future>(what: &str, future: F) -> F::Output {
    tokio::time::timeout(LIMIT, future)
        .await
        .unwrap_or_else(|_| panic!("timed out after {LIMIT:?} waiting for {what}"))
}

async fn connect(connect_string: &str) -> zk::Client {
    within("connect", zk::Client::connect(connect_string))
        .await
        .unwrap_or_else(|e| panic!("connect to {connect_string}: {e}"))
}

/// Polls `future` once, without waiting.
fn poll_now<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    Pin::new(future).poll(&mut cx)
}

/// The output of `future`, which must be complete already.
fn ready<F: Future + Unpin>(future: &mut F, what: &str) -> F::Output {
    match poll_now(future) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("{what}: not delivered yet, but it must be by now"),
    }
}

fn assert_pending<F>(future: &mut F, what: &str)
where
    F: Future + Unpin,
    F::Output: std::fmt::Debug,
{
    if let Poll::Ready(output) = poll_now(future) {
        panic!("{what}: expected nothing yet, got {output:?}");
    }
}

/// A pending one-shot watch, pollable without consuming it.
type Oneshot = Pin<Box<dyn Future<Output = WatchedEvent> + Send>>;

fn oneshot(watcher: zk::OneshotWatcher) -> Oneshot {
    Box::pin(watcher.changed())
}

fn event(event_type: EventType, path: &str) -> WatchedEvent {
    // 3.8 notifications carry zxid -1 in their header (§0, §9.5); the crate reports it as is.
    WatchedEvent::new(event_type, path)
}

async fn next_event(watcher: &mut zk::PersistentWatcher) -> WatchedEvent {
    within("a persistent watch event", watcher.changed()).await
}

/// After a round trip on the watcher's connection: no event is waiting.
fn assert_no_event(watcher: &mut zk::PersistentWatcher, what: &str) {
    let mut next = Box::pin(watcher.changed());
    assert_pending(&mut next, what);
}

async fn next_state(watcher: &mut zk::StateWatcher) -> SessionState {
    within("a session state change", watcher.changed()).await
}

/// A round trip on `client`'s connection: every event triggered before it has been dispatched
/// when it returns (§9.6).
async fn barrier(client: &zk::Client) {
    within("a sync round trip", client.sync("/"))
        .await
        .expect("sync");
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

fn users(list: Vec<AuthUser>) -> Vec<(String, String)> {
    let mut list: Vec<_> = list
        .into_iter()
        .map(|u| (u.scheme().to_string(), u.user().to_string()))
        .collect();
    list.sort();
    list
}

fn user(scheme: &str, name: &str) -> (String, String) {
    (scheme.to_string(), name.to_string())
}

fn acl(permission: Permission, scheme: &str, id: &str) -> Acl {
    Acl::new(permission, AuthId::new(scheme, id))
}

fn ttl_options(mode: CreateMode, ttl: Duration) -> CreateOptions<'static> {
    mode.with_acls(Acls::anyone_all()).with_ttl(ttl)
}

/// Sends a four-letter word and returns the whole answer (the server closes after it).
async fn four_letter(connect: &str, word: &str) -> String {
    let mut stream = within("4lw connect", TcpStream::connect(connect))
        .await
        .expect("4lw connect");
    stream.write_all(word.as_bytes()).await.expect("4lw send");
    // Half-close as Java's FourLetterWordMain does (§14.1).
    stream.shutdown().await.expect("4lw half-close");
    let mut answer = String::new();
    within("4lw answer", stream.read_to_string(&mut answer))
        .await
        .expect("4lw read");
    answer
}

/// The paths under this run's root where the server holds a data-table watch (data, exist,
/// persistent or recursive) for `session`, according to `wchp` (§14.3).
async fn watched_paths(ctx: &Ctx, session: zk::SessionId) -> Vec<String> {
    let text = four_letter(&ctx.connect, "wchp").await;
    let me = format!("\t0x{:x}", session.0);
    let mut current = "";
    let mut paths = Vec::new();
    for line in text.lines() {
        if line.starts_with('\t') {
            if line == me && (current == ctx.root || current.starts_with(&ctx.path(""))) {
                paths.push(current.to_string());
            }
        } else {
            current = line;
        }
    }
    paths.sort();
    paths.dedup();
    paths
}

// ------------------------------------------------------------------------------------------------
// A TCP proxy that can cut the connection and hold new ones
// ------------------------------------------------------------------------------------------------

struct Proxy {
    addr: SocketAddr,
    shared: Arc<ProxyShared>,
    accept: tokio::task::JoinHandle<()>,
}

struct ProxyShared {
    upstream: String,
    pipes: Mutex<Vec<tokio::task::AbortHandle>>,
    /// False: accepted connections wait before being connected upstream.
    open: tokio::sync::watch::Sender<bool>,
    accepted: AtomicUsize,
}

impl Proxy {
    async fn start(upstream: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("proxy bind");
        let addr = listener.local_addr().expect("proxy address");
        let shared = Arc::new(ProxyShared {
            upstream: upstream.to_string(),
            pipes: Mutex::new(Vec::new()),
            open: tokio::sync::watch::channel(true).0,
            accepted: AtomicUsize::new(0),
        });
        let accept = tokio::spawn({
            let shared = shared.clone();
            async move {
                while let Ok((mut down, _)) = listener.accept().await {
                    shared.accepted.fetch_add(1, Ordering::SeqCst);
                    let mut open = shared.open.subscribe();
                    let upstream = shared.upstream.clone();
                    let pipe = tokio::spawn(async move {
                        if open.wait_for(|open| *open).await.is_err() {
                            return;
                        }
                        let Ok(mut up) = TcpStream::connect(&upstream).await else {
                            return;
                        };
                        let _ = tokio::io::copy_bidirectional(&mut down, &mut up).await;
                    });
                    shared.pipes.lock().unwrap().push(pipe.abort_handle());
                }
            }
        });
        Proxy {
            addr,
            shared,
            accept,
        }
    }

    fn connect_string(&self) -> String {
        self.addr.to_string()
    }

    /// Drops every connection through the proxy, both ways.
    fn cut(&self) {
        for pipe in self.shared.pipes.lock().unwrap().drain(..) {
            pipe.abort();
        }
    }

    /// New connections are accepted but held, not connected upstream, until [`Proxy::resume`].
    fn hold(&self) {
        self.shared.open.send_replace(false);
    }

    fn resume(&self) {
        self.shared.open.send_replace(true);
    }

    fn accepted(&self) -> usize {
        self.shared.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}

// ------------------------------------------------------------------------------------------------
// Sessions
// ------------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_timeout_negotiation() {
    everywhere("negotiation", session_timeout_negotiation_on).await;
}

async fn session_timeout_negotiation_on(ctx: Ctx) {
    // tickTime 2000: the bounds are 2 and 20 ticks (§2.4, §18).
    for (asked, granted) in [
        (Duration::from_secs(1), Duration::from_secs(4)),
        (Duration::from_secs(6), Duration::from_secs(6)),
        (Duration::from_secs(100), Duration::from_secs(40)),
    ] {
        let client = within(
            "connect",
            zk::Client::connector()
                .with_session_timeout(asked)
                .connect(&ctx.connect),
        )
        .await
        .expect("connect");
        assert_eq!(client.session_timeout(), granted, "asked for {asked:?}");
        assert_eq!(client.state(), SessionState::SyncConnected);
        assert_ne!(client.session_id().0, 0);
        assert!(!client.session().is_readonly());
    }
    // A client that accepts read-only servers still gets a read-write session from a
    // read-write server.
    let client = within(
        "connect",
        zk::Client::connector()
            .with_readonly(true)
            .connect(&ctx.connect),
    )
    .await
    .expect("connect");
    assert_eq!(client.state(), SessionState::SyncConnected);
    assert!(!client.session().is_readonly());
    let other = ctx.client().await;
    assert_ne!(other.session_id(), client.session_id());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_reestablished_then_closed() {
    everywhere("reestablish", session_reestablished_then_closed_on).await;
}

async fn session_reestablished_then_closed_on(ctx: Ctx) {
    let observer = ctx.client().await;
    let eph = ctx.path("eph");

    let first = within(
        "connect",
        zk::Client::connector()
            .with_detached()
            .connect(&ctx.connect),
    )
    .await
    .expect("connect");
    let (stat, _) = first.create(&eph, b"", &EPHEMERAL).await.unwrap();
    let id = first.session_id();
    assert_eq!(stat.ephemeral_owner, id.0);
    let session = first.session().clone();
    // Detached: dropping the client drops the connection but does not close the session.
    drop(first);

    let second = within(
        "reattach",
        zk::Client::connector()
            .with_session(session.clone())
            .connect(&ctx.connect),
    )
    .await
    .expect("reattach with id and password");
    assert_eq!(second.session_id(), id);
    assert_eq!(second.state(), SessionState::SyncConnected);
    assert_eq!(
        second.list_ephemerals(&ctx.root).await.unwrap(),
        vec![eph.clone()]
    );
    let (stat, _) = second
        .create(&ctx.path("eph2"), b"", &EPHEMERAL)
        .await
        .unwrap();
    assert_eq!(
        stat.ephemeral_owner, id.0,
        "the same session owns new ephemerals"
    );

    let (stat, deleted) = observer.check_and_watch_stat(&eph).await.unwrap();
    assert_eq!(stat.map(|s| s.ephemeral_owner), Some(id.0));
    // Not detached: dropping the last handle sends closeSession, which deletes the ephemerals.
    drop(second);
    assert_eq!(
        within("NodeDeleted of the ephemeral", deleted.changed()).await,
        event(EventType::NodeDeleted, &eph)
    );
    assert_eq!(observer.check_stat(&ctx.path("eph2")).await.unwrap(), None);
    assert_eq!(
        within(
            "reattach",
            zk::Client::connector()
                .with_session(session)
                .connect(&ctx.connect)
        )
        .await
        .unwrap_err(),
        Error::SessionExpired,
        "a closed session cannot be reattached"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_resumes_after_connection_drop() {
    everywhere("resume", session_resumes_after_connection_drop_on).await;
}

async fn session_resumes_after_connection_drop_on(ctx: Ctx) {
    let other = ctx.client().await;
    for name in ["changed", "unchanged", "parent", "gone", "lister", "quiet"] {
        other
            .create(&ctx.path(name), b"v0", &PERSISTENT)
            .await
            .unwrap();
    }
    let secret = ctx.path("secret");
    let proxy = Proxy::start(&ctx.connect).await;
    let client = within(
        "connect through the proxy",
        zk::Client::connector()
            .with_session_timeout(Duration::from_secs(20))
            .with_auth("digest", ALICE)
            .connect(&proxy.connect_string()),
    )
    .await
    .expect("connect through the proxy");
    let id = client.session_id();
    let eph = ctx.path("eph");
    client.create(&eph, b"", &EPHEMERAL).await.unwrap();
    client
        .create(
            &secret,
            b"s",
            &CreateMode::Persistent.with_acls(Acls::creator_all()),
        )
        .await
        .unwrap();

    let (_, _, changed) = client
        .get_and_watch_data(&ctx.path("changed"))
        .await
        .unwrap();
    let (_, _, unchanged) = client
        .get_and_watch_data(&ctx.path("unchanged"))
        .await
        .unwrap();
    let (missing, appears) = client
        .check_and_watch_stat(&ctx.path("appears"))
        .await
        .unwrap();
    assert_eq!(missing, None);
    let (_, children) = client
        .list_and_watch_children(&ctx.path("parent"))
        .await
        .unwrap();
    let (_, _, gone) = client.get_and_watch_data(&ctx.path("gone")).await.unwrap();
    let (_, lister) = client
        .list_and_watch_children(&ctx.path("lister"))
        .await
        .unwrap();
    let (_, quiet) = client
        .list_and_watch_children(&ctx.path("quiet"))
        .await
        .unwrap();
    let (_, still_missing) = client
        .check_and_watch_stat(&ctx.path("later"))
        .await
        .unwrap();
    let mut persistent = client
        .watch(&ctx.path("changed"), AddWatchMode::Persistent)
        .await
        .unwrap();
    let mut states = client.state_watcher();

    // Drop the TCP connection and hold the client's reconnection until the others have changed
    // what it watches.
    proxy.hold();
    proxy.cut();
    assert_eq!(next_state(&mut states).await, SessionState::Disconnected);
    other
        .set_data(&ctx.path("changed"), b"v1", None)
        .await
        .unwrap();
    other
        .create(&ctx.path("appears"), b"", &PERSISTENT)
        .await
        .unwrap();
    other
        .create(&ctx.path("parent/child"), b"", &PERSISTENT)
        .await
        .unwrap();
    other.delete(&ctx.path("gone"), None).await.unwrap();
    other.delete(&ctx.path("lister"), None).await.unwrap();
    proxy.resume();
    assert_eq!(next_state(&mut states).await, SessionState::SyncConnected);
    assert_eq!(proxy.accepted(), 2, "one connection cut, one resumed");
    // A persistent watcher hears of the session's ups and downs. (zookeeper-client 0.11.2 does
    // not re-arm persistent watches after a reconnect: its resend_watches never sends
    // SetWatches2, so their node events stop here, whatever the server. Not asserted.)
    assert_eq!(
        next_event(&mut persistent).await,
        WatchedEvent::new_session(SessionState::Disconnected)
    );
    assert_eq!(
        next_event(&mut persistent).await,
        WatchedEvent::new_session(SessionState::SyncConnected)
    );

    // The crate re-arms its watches with SetWatches(relativeZxid = last zxid seen): what
    // changed meanwhile fires at once (§9.7).
    assert_eq!(
        within("catch-up NodeDataChanged", oneshot(changed)).await,
        event(EventType::NodeDataChanged, &ctx.path("changed"))
    );
    assert_eq!(
        within("catch-up NodeCreated", oneshot(appears)).await,
        event(EventType::NodeCreated, &ctx.path("appears"))
    );
    assert_eq!(
        within("catch-up NodeChildrenChanged", oneshot(children)).await,
        event(EventType::NodeChildrenChanged, &ctx.path("parent"))
    );
    assert_eq!(
        within("catch-up NodeDeleted", oneshot(gone)).await,
        event(EventType::NodeDeleted, &ctx.path("gone"))
    );
    assert_eq!(
        within("catch-up NodeDeleted of a child watch", oneshot(lister)).await,
        event(EventType::NodeDeleted, &ctx.path("lister"))
    );
    // What did not change is watched again, and fires on the next change.
    let mut unchanged = oneshot(unchanged);
    let mut quiet = oneshot(quiet);
    let mut still_missing = oneshot(still_missing);
    barrier(&client).await;
    assert_pending(
        &mut unchanged,
        "data watch on an unchanged node after reconnect",
    );
    assert_pending(
        &mut quiet,
        "child watch on an unchanged node after reconnect",
    );
    assert_pending(&mut still_missing, "exist watch on a still missing node");
    other
        .set_data(&ctx.path("unchanged"), b"v1", None)
        .await
        .unwrap();
    other
        .create(&ctx.path("quiet/c"), b"", &PERSISTENT)
        .await
        .unwrap();
    other
        .create(&ctx.path("later"), b"", &PERSISTENT)
        .await
        .unwrap();
    assert_eq!(
        within("NodeDataChanged after reconnect", unchanged).await,
        event(EventType::NodeDataChanged, &ctx.path("unchanged"))
    );
    assert_eq!(
        within("NodeChildrenChanged after reconnect", quiet).await,
        event(EventType::NodeChildrenChanged, &ctx.path("quiet"))
    );
    assert_eq!(
        within("NodeCreated after reconnect", still_missing).await,
        event(EventType::NodeCreated, &ctx.path("later"))
    );

    // Same session: its ephemeral survived, and new ones belong to the same id.
    assert_eq!(client.session_id(), id);
    let stat = other
        .check_stat(&eph)
        .await
        .unwrap()
        .expect("ephemeral survives");
    assert_eq!(stat.ephemeral_owner, id.0);
    let (stat, _) = client
        .create(&ctx.path("eph2"), b"", &EPHEMERAL)
        .await
        .unwrap();
    assert_eq!(stat.ephemeral_owner, id.0);
    assert_eq!(
        sorted(client.list_ephemerals(&ctx.root).await.unwrap()),
        vec![eph.clone(), ctx.path("eph2")]
    );
    // The crate sent its auth again on the new connection.
    assert_eq!(client.get_data(&secret).await.unwrap().0, b"s".to_vec());
    assert_eq!(
        users(client.list_auth_users().await.unwrap()),
        vec![user("digest", "alice"), user("ip", "127.0.0.1")]
    );
    if let Some(server) = &ctx.shepherd {
        let sessions = server.sessions();
        let session = sessions
            .iter()
            .find(|s| s.id == id.0)
            .expect("the server still knows the session");
        assert_eq!(session.ephemerals, vec![eph, ctx.path("eph2")]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_expiry_is_observed() {
    everywhere("expiry", session_expiry_is_observed_on).await;
}

async fn session_expiry_is_observed_on(ctx: Ctx) {
    let proxy = Proxy::start(&ctx.connect).await;
    // The shortest timeout the servers grant (2 ticks), through a proxy we can cut (see
    // Ctx::expire).
    let client = within(
        "connect through the proxy",
        zk::Client::connector()
            .with_session_timeout(Duration::from_secs(4))
            .connect(&proxy.connect_string()),
    )
    .await
    .expect("connect through the proxy");
    assert_eq!(client.session_timeout(), Duration::from_secs(4));
    let observer = ctx.client().await;
    let dir = ctx.path("dir");
    observer.create(&dir, b"", &PERSISTENT).await.unwrap();
    let eph = ctx.path("dir/eph");
    client.create(&eph, b"", &EPHEMERAL).await.unwrap();
    let (_, deleted) = observer.check_and_watch_stat(&eph).await.unwrap();
    let (_, before, children) = observer.get_and_watch_children(&dir).await.unwrap();
    assert_eq!((before.num_children, before.cversion), (1, 1));
    let (_, _, watch) = client.get_and_watch_data(&ctx.root).await.unwrap();
    // On a quiet path: only session events reach it.
    let mut persistent = client
        .watch(&ctx.path("quiet"), AddWatchMode::PersistentRecursive)
        .await
        .unwrap();
    let mut states = client.state_watcher();
    let id = client.session_id();

    ctx.expire(&client, &proxy).await;

    // The server closes the connection without a word (§13.2); the client learns of the expiry
    // when it reconnects and gets sessionId 0 (or, kept away long enough, gives up by itself).
    let mut seen = Vec::new();
    loop {
        let state = next_state(&mut states).await;
        seen.push(state);
        if state.is_terminated() {
            break;
        }
    }
    assert_eq!(
        seen.last(),
        Some(&SessionState::Expired),
        "states: {seen:?}"
    );
    assert!(
        seen[..seen.len() - 1]
            .iter()
            .all(|s| *s == SessionState::Disconnected),
        "states: {seen:?}"
    );
    assert_eq!(client.state(), SessionState::Expired);
    assert_eq!(
        within("the expiry at the one-shot watcher", oneshot(watch)).await,
        WatchedEvent::new_session(SessionState::Expired)
    );
    // A persistent watcher sees every state change, ending with Expired.
    loop {
        let seen = next_event(&mut persistent).await;
        assert_eq!(seen.event_type, EventType::Session, "{seen:?}");
        if seen.session_state == SessionState::Expired {
            break;
        }
        assert_eq!(seen.session_state, SessionState::Disconnected, "{seen:?}");
    }
    assert_eq!(
        within(
            "NodeDeleted of the expired session's ephemeral",
            deleted.changed()
        )
        .await,
        event(EventType::NodeDeleted, &eph)
    );
    assert_eq!(
        within("the parent's NodeChildrenChanged", children.changed()).await,
        event(EventType::NodeChildrenChanged, &dir)
    );
    assert_eq!(observer.check_stat(&eph).await.unwrap(), None);
    let (names, after) = observer.get_children(&dir).await.unwrap();
    assert!(names.is_empty());
    assert_eq!((after.num_children, after.cversion), (0, 2));
    assert!(after.pzxid > before.pzxid);
    assert_eq!(after.mzxid, before.mzxid);
    assert_eq!(
        client.get_data(&ctx.root).await.unwrap_err(),
        Error::SessionExpired
    );
    assert_eq!(
        within(
            "reattach",
            zk::Client::connector()
                .with_session(client.session().clone())
                .connect(&ctx.connect)
        )
        .await
        .unwrap_err(),
        Error::SessionExpired
    );
    if let Some(server) = &ctx.shepherd {
        assert!(server.sessions().iter().all(|s| s.id != id.0));
    }
}

// ------------------------------------------------------------------------------------------------
// create, in every mode
// ------------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_in_every_mode() {
    everywhere("create", create_in_every_mode_on).await;
}

async fn create_in_every_mode_on(ctx: Ctx) {
    let client = ctx.client().await;
    let me = client.session_id().0;
    let p = ctx.path("p");

    let (stat, sequence) = client.create(&p, b"hello", &PERSISTENT).await.unwrap();
    assert_eq!(sequence.into_i64(), -1);
    assert!(stat.czxid > 0, "{stat:?}");
    assert_eq!(
        stat,
        Stat {
            czxid: stat.czxid,
            mzxid: stat.czxid,
            pzxid: stat.czxid,
            ctime: stat.ctime,
            mtime: stat.ctime,
            version: 0,
            cversion: 0,
            aversion: 0,
            ephemeral_owner: 0,
            data_length: 5,
            num_children: 0,
        }
    );
    assert!(stat.ctime > 0);
    assert_eq!(
        client.get_data(&p).await.unwrap(),
        (b"hello".to_vec(), stat)
    );
    let (children, root) = client.get_children(&ctx.root).await.unwrap();
    assert_eq!(children, vec!["p".to_string()]);
    assert_eq!((root.num_children, root.cversion), (1, 1));
    assert_eq!(root.pzxid, stat.czxid);

    // Children in every mode. The sequence suffix is the parent's count of children ever
    // created, taken before the create (§8.1).
    let (a, _) = client
        .create(&ctx.path("p/a"), b"", &PERSISTENT)
        .await
        .unwrap();
    assert_eq!(a.data_length, 0);
    let (s, sequence) = client
        .create(&ctx.path("p/s-"), b"", &SEQUENTIAL)
        .await
        .unwrap();
    assert_eq!(sequence.into_i64(), 1);
    assert_eq!(sequence.to_string(), "0000000001");
    assert_eq!(s.ephemeral_owner, 0);
    let (e, sequence) = client
        .create(
            &ctx.path("p/e-"),
            b"",
            &CreateMode::EphemeralSequential.with_acls(Acls::anyone_all()),
        )
        .await
        .unwrap();
    assert_eq!(sequence.into_i64(), 2);
    assert_eq!(e.ephemeral_owner, me);
    let (eph, _) = client
        .create(&ctx.path("p/eph"), b"x", &EPHEMERAL)
        .await
        .unwrap();
    assert_eq!((eph.ephemeral_owner, eph.data_length), (me, 1));
    // Containers (op 19) and TTL nodes (op 21) show ephemeralOwner 0 to clients (§7).
    let (container, _) = client
        .create(&ctx.path("p/box"), b"", &CONTAINER)
        .await
        .unwrap();
    assert_eq!((container.ephemeral_owner, container.version), (0, 0));
    assert_eq!(container.mzxid, container.czxid);
    let (ttl, sequence) = client
        .create(
            &ctx.path("p/ttl"),
            b"t",
            &ttl_options(CreateMode::Persistent, HOUR),
        )
        .await
        .unwrap();
    assert_eq!(sequence.into_i64(), -1);
    assert_eq!((ttl.ephemeral_owner, ttl.data_length), (0, 1));
    let (ttls, sequence) = client
        .create(
            &ctx.path("p/ttls-"),
            b"",
            &ttl_options(CreateMode::PersistentSequential, HOUR),
        )
        .await
        .unwrap();
    assert_eq!(sequence.into_i64(), 6);
    assert_eq!(ttls.ephemeral_owner, 0);
    for (path, created) in [
        ("p/box", container),
        ("p/ttl", ttl),
        ("p/e-0000000002", e),
        ("p/ttls-0000000006", ttls),
    ] {
        assert_eq!(
            client.check_stat(&ctx.path(path)).await.unwrap(),
            Some(created)
        );
    }
    assert_eq!(
        sorted(client.list_children(&p).await.unwrap()),
        [
            "a",
            "box",
            "e-0000000002",
            "eph",
            "s-0000000001",
            "ttl",
            "ttls-0000000006"
        ]
    );
    let (_, parent) = client.get_children(&p).await.unwrap();
    assert_eq!((parent.num_children, parent.cversion), (7, 7));
    assert_eq!(parent.pzxid, ttls.czxid);
    assert_eq!(
        parent.version, 0,
        "child changes leave the data version alone"
    );
    assert_eq!(parent.mzxid, stat.mzxid);

    // A delete raises cversion but not the sequence counter.
    client.delete(&ctx.path("p/a"), None).await.unwrap();
    let (_, sequence) = client
        .create(&ctx.path("p/s-"), b"", &SEQUENTIAL)
        .await
        .unwrap();
    assert_eq!(sequence.into_i64(), 7);
    // A sequential create may end in '/': the name is then the bare suffix (§6.1).
    let (_, sequence) = client
        .create(&format!("{p}/"), b"", &SEQUENTIAL)
        .await
        .unwrap();
    assert_eq!(sequence.into_i64(), 8);
    assert_eq!(
        client
            .check_stat(&ctx.path("p/0000000008"))
            .await
            .unwrap()
            .map(|s| s.czxid > 0),
        Some(true)
    );
    let (_, parent) = client.get_children(&p).await.unwrap();
    assert_eq!((parent.num_children, parent.cversion), (8, 10));

    // Errors from the server.
    assert_eq!(
        client.create(&p, b"", &PERSISTENT).await.unwrap_err(),
        Error::NodeExists
    );
    assert_eq!(
        client
            .create(&ctx.path("missing/x"), b"", &PERSISTENT)
            .await
            .unwrap_err(),
        Error::NoNode
    );
    assert_eq!(
        client
            .create(&ctx.path("p/eph/x"), b"", &PERSISTENT)
            .await
            .unwrap_err(),
        Error::NoChildrenForEphemerals
    );
    assert_eq!(
        client
            .create(
                &ctx.path("p/auth"),
                b"",
                &CreateMode::Persistent.with_acls(Acls::creator_all())
            )
            .await
            .unwrap_err(),
        Error::InvalidAcl,
        "auth ACL without an authenticated identity"
    );
    let someone = [acl(Permission::ALL, "world", "someone")];
    assert_eq!(
        client
            .create(
                &ctx.path("p/someone"),
                b"",
                &CreateMode::Persistent.with_acls(Acls::new(&someone))
            )
            .await
            .unwrap_err(),
        Error::InvalidAcl
    );
    let bad_mask = [acl(Permission::ALL, "ip", "127.0.0.1/33")];
    assert_eq!(
        client
            .create(
                &ctx.path("p/mask"),
                b"",
                &CreateMode::Persistent.with_acls(Acls::new(&bad_mask))
            )
            .await
            .unwrap_err(),
        Error::InvalidAcl
    );
    // Errors the crate raises without asking the server.
    assert_eq!(
        client
            .create(
                &ctx.path("p/x"),
                b"",
                &ttl_options(CreateMode::Ephemeral, HOUR)
            )
            .await
            .unwrap_err(),
        Error::BadArguments(&"ttl can only be specified with persistent node")
    );
    assert_eq!(
        client
            .create(
                &ctx.path("p/x"),
                b"",
                &CreateMode::Persistent.with_acls(Acls::new(&[]))
            )
            .await
            .unwrap_err(),
        Error::InvalidAcl
    );
    assert_eq!(
        client.create("/", b"", &PERSISTENT).await.unwrap_err(),
        Error::BadArguments(&"can not create root node")
    );
    // Nothing was created by the failed calls.
    let (_, parent) = client.get_children(&p).await.unwrap();
    assert_eq!((parent.num_children, parent.cversion), (8, 10));

    // Told the server is 3.4, the crate creates with op 1, which returns no Stat.
    let old = within(
        "connect",
        zk::Client::connector()
            .with_server_version(3, 4, 0)
            .connect(&ctx.connect),
    )
    .await
    .unwrap();
    let (stat, _) = old
        .create(&ctx.path("v34"), b"", &PERSISTENT)
        .await
        .unwrap();
    assert_eq!(stat, invalid_stat());
    let (stat, sequence) = old
        .create(&ctx.path("v34s-"), b"", &SEQUENTIAL)
        .await
        .unwrap();
    assert_eq!((stat, sequence.into_i64()), (invalid_stat(), 2));
    assert!(
        old.check_stat(&ctx.path("v34s-0000000002"))
            .await
            .unwrap()
            .is_some()
    );

    // mkdir -p, a crate helper over create.
    client.mkdir(&ctx.path("m/n/o"), &PERSISTENT).await.unwrap();
    client.mkdir(&ctx.path("m/n/o"), &PERSISTENT).await.unwrap();
    assert_eq!(
        client
            .count_descendants_number(&ctx.path("m"))
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        client.mkdir(&ctx.path("q"), &EPHEMERAL).await.unwrap_err(),
        Error::BadArguments(&"directory node must not be ephemeral")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn container_is_reaped_after_its_last_child_goes() {
    everywhere(
        "container",
        container_is_reaped_after_its_last_child_goes_on,
    )
    .await;
}

async fn container_is_reaped_after_its_last_child_goes_on(ctx: Ctx) {
    let client = ctx.client().await;
    let container = ctx.path("box");
    client.create(&container, b"", &CONTAINER).await.unwrap();
    client
        .create(&ctx.path("box/child"), b"", &PERSISTENT)
        .await
        .unwrap();
    let (stat, deleted) = client.check_and_watch_stat(&container).await.unwrap();
    assert_eq!(stat.map(|s| s.num_children), Some(1));
    let (_, empty_again) = client.list_and_watch_children(&container).await.unwrap();
    let (_, root_children) = client.list_and_watch_children(&ctx.root).await.unwrap();
    client.delete(&ctx.path("box/child"), None).await.unwrap();
    assert_eq!(
        within("the container's NodeChildrenChanged", empty_again.changed()).await,
        event(EventType::NodeChildrenChanged, &container)
    );
    // The reaper runs every second on both servers (checkIntervalMs=1000); its delete fires
    // like any other (§8.3).
    assert_eq!(
        within("the container's NodeDeleted", deleted.changed()).await,
        event(EventType::NodeDeleted, &container)
    );
    assert_eq!(
        within("the root's NodeChildrenChanged", root_children.changed()).await,
        event(EventType::NodeChildrenChanged, &ctx.root)
    );
    assert_eq!(client.check_stat(&container).await.unwrap(), None);
    let (children, root) = client.get_children(&ctx.root).await.unwrap();
    assert!(children.is_empty());
    assert_eq!((root.num_children, root.cversion), (0, 2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ttl_node_expires() {
    everywhere("ttl", ttl_node_expires_on).await;
}

async fn ttl_node_expires_on(ctx: Ctx) {
    let client = ctx.client().await;
    let short = ttl_options(CreateMode::Persistent, Duration::from_millis(200));
    // `held` is older than `lone`, so it is past its TTL whenever `lone` is; its child keeps it.
    let held = ctx.path("held");
    client.create(&held, b"", &short).await.unwrap();
    client
        .create(&ctx.path("held/child"), b"", &PERSISTENT)
        .await
        .unwrap();
    let lone = ctx.path("lone");
    client.create(&lone, b"", &short).await.unwrap();
    let (stat, deleted) = client.check_and_watch_stat(&lone).await.unwrap();
    assert!(stat.is_some());
    assert_eq!(
        within("the TTL node's NodeDeleted", deleted.changed()).await,
        event(EventType::NodeDeleted, &lone)
    );
    assert_eq!(client.check_stat(&lone).await.unwrap(), None);
    let stat = client.check_stat(&held).await.unwrap();
    assert_eq!(
        stat.map(|s| s.num_children),
        Some(1),
        "a TTL node with children stays"
    );
    let (_, deleted) = client.check_and_watch_stat(&held).await.unwrap();
    client.delete(&ctx.path("held/child"), None).await.unwrap();
    assert_eq!(
        within("the emptied TTL node's NodeDeleted", deleted.changed()).await,
        event(EventType::NodeDeleted, &held)
    );
}

// ------------------------------------------------------------------------------------------------
// delete, exists, getData, setData
// ------------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_checks_version_and_children() {
    everywhere("delete", delete_checks_version_and_children_on).await;
}

async fn delete_checks_version_and_children_on(ctx: Ctx) {
    let client = ctx.client().await;
    let d = ctx.path("d");
    client.create(&d, b"", &PERSISTENT).await.unwrap();
    let (child, _) = client
        .create(&ctx.path("d/c"), b"", &PERSISTENT)
        .await
        .unwrap();
    assert_eq!(client.delete(&d, None).await.unwrap_err(), Error::NotEmpty);
    assert_eq!(
        client.delete(&ctx.path("d/c"), Some(5)).await.unwrap_err(),
        Error::BadVersion
    );
    client.set_data(&ctx.path("d/c"), b"1", None).await.unwrap();
    assert_eq!(
        client.delete(&ctx.path("d/c"), Some(0)).await.unwrap_err(),
        Error::BadVersion
    );
    client.delete(&ctx.path("d/c"), Some(1)).await.unwrap();
    assert_eq!(
        client.delete(&ctx.path("d/c"), None).await.unwrap_err(),
        Error::NoNode
    );
    assert_eq!(
        client
            .delete(&ctx.path("missing/c"), None)
            .await
            .unwrap_err(),
        Error::NoNode
    );
    let (children, parent) = client.get_children(&d).await.unwrap();
    assert!(children.is_empty());
    assert_eq!((parent.num_children, parent.cversion), (0, 2));
    assert!(parent.pzxid > child.czxid, "delete moves pzxid: {parent:?}");
    let later = client.set_data(&d, b"x", None).await.unwrap();
    assert!(parent.pzxid < later.mzxid);
    assert_eq!(later.pzxid, parent.pzxid, "setData leaves pzxid alone");
    // System nodes cannot be deleted: the server answers BadArguments (§6.3).
    assert_eq!(
        client.delete("/zookeeper", None).await.unwrap_err(),
        Error::BadArguments(&"server error")
    );
    assert_eq!(
        client.delete("/", None).await.unwrap_err(),
        Error::BadArguments(&"can not delete root node")
    );
    client.delete(&d, Some(1)).await.unwrap();
    assert_eq!(client.check_stat(&d).await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exists_get_and_set_data() {
    everywhere("data", exists_get_and_set_data_on).await;
}

async fn exists_get_and_set_data_on(ctx: Ctx) {
    let client = ctx.client().await;
    let n = ctx.path("n");
    assert_eq!(client.check_stat(&n).await.unwrap(), None);
    assert_eq!(client.get_data(&n).await.unwrap_err(), Error::NoNode);
    assert_eq!(
        client.set_data(&n, b"x", None).await.unwrap_err(),
        Error::NoNode
    );

    let (created, _) = client.create(&n, b"", &PERSISTENT).await.unwrap();
    assert_eq!(client.get_data(&n).await.unwrap(), (Vec::new(), created));
    assert_eq!(client.check_stat(&n).await.unwrap(), Some(created));

    let first = client.set_data(&n, b"abc", None).await.unwrap();
    assert_eq!(
        first,
        Stat {
            mzxid: first.mzxid,
            mtime: first.mtime,
            version: 1,
            data_length: 3,
            ..created
        }
    );
    assert!(first.mzxid > created.mzxid);
    assert!(first.mtime >= created.mtime);
    // Same data again: the version still moves.
    let second = client.set_data(&n, b"abc", None).await.unwrap();
    assert_eq!(second.version, 2);
    assert!(second.mzxid > first.mzxid);
    assert_eq!(
        client.set_data(&n, b"zz", Some(1)).await.unwrap_err(),
        Error::BadVersion
    );
    let third = client.set_data(&n, b"zz", Some(2)).await.unwrap();
    assert_eq!((third.version, third.data_length), (3, 2));
    assert_eq!(client.get_data(&n).await.unwrap(), (b"zz".to_vec(), third));
    assert_eq!(client.check_stat(&n).await.unwrap(), Some(third));

    // A large value round-trips whole.
    let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let stat = client.set_data(&n, &big, None).await.unwrap();
    assert_eq!(stat.data_length, 200_000);
    assert_eq!(client.get_data(&n).await.unwrap().0, big);
    // Back to empty.
    let stat = client.set_data(&n, b"", None).await.unwrap();
    assert_eq!((stat.version, stat.data_length), (5, 0));
    assert_eq!(client.get_data(&n).await.unwrap().0, Vec::<u8>::new());

    // The root and /zookeeper exist; /zookeeper/config is read-only (§6.4, §16).
    assert!(client.check_stat("/").await.unwrap().is_some());
    assert!(client.check_stat("/zookeeper").await.unwrap().is_some());
    assert_eq!(
        client
            .set_data("/zookeeper/config", b"x", None)
            .await
            .unwrap_err(),
        Error::NoAuth
    );
}

// ------------------------------------------------------------------------------------------------
// children, descendants, ephemerals, sync
// ------------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn children_descendants_and_ephemerals() {
    everywhere("children", children_descendants_and_ephemerals_on).await;
}

async fn children_descendants_and_ephemerals_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    let p = ctx.path("p");
    client.create(&p, b"pp", &PERSISTENT).await.unwrap();
    for name in ["b", "a", "c"] {
        client
            .create(&ctx.path(&format!("p/{name}")), b"x", &PERSISTENT)
            .await
            .unwrap();
    }
    client
        .create(&ctx.path("p/a/deep"), b"", &PERSISTENT)
        .await
        .unwrap();

    assert_eq!(
        sorted(client.list_children(&p).await.unwrap()),
        ["a", "b", "c"]
    );
    let (children, stat) = client.get_children(&p).await.unwrap();
    assert_eq!(sorted(children), ["a", "b", "c"]);
    assert_eq!(
        (
            stat.num_children,
            stat.cversion,
            stat.data_length,
            stat.version
        ),
        (3, 3, 2, 0)
    );
    assert_eq!(stat, client.check_stat(&p).await.unwrap().unwrap());
    let (children, leaf) = client.get_children(&ctx.path("p/b")).await.unwrap();
    assert!(children.is_empty());
    assert_eq!((leaf.num_children, leaf.cversion), (0, 0));
    assert_eq!(
        client.list_children(&ctx.path("nope")).await.unwrap_err(),
        Error::NoNode
    );
    assert_eq!(
        client.get_children(&ctx.path("nope")).await.unwrap_err(),
        Error::NoNode
    );

    // getAllChildrenNumber counts every descendant, not the node itself (§6.5).
    assert_eq!(client.count_descendants_number(&p).await.unwrap(), 4);
    assert_eq!(client.count_descendants_number(&ctx.root).await.unwrap(), 5);
    assert_eq!(
        client
            .count_descendants_number(&ctx.path("p/b"))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        client
            .count_descendants_number(&ctx.path("nope"))
            .await
            .unwrap_err(),
        Error::NoNode
    );

    // getEphemerals: the caller's own, by string prefix (§6.9).
    for name in ["p/ea", "p/eb", "p/a/e"] {
        client
            .create(&ctx.path(name), b"", &EPHEMERAL)
            .await
            .unwrap();
    }
    other
        .create(&ctx.path("p/ec"), b"", &EPHEMERAL)
        .await
        .unwrap();
    assert_eq!(
        sorted(client.list_ephemerals(&ctx.path("p/e")).await.unwrap()),
        [ctx.path("p/ea"), ctx.path("p/eb")]
    );
    assert_eq!(
        sorted(client.list_ephemerals(&ctx.root).await.unwrap()),
        [ctx.path("p/a/e"), ctx.path("p/ea"), ctx.path("p/eb")]
    );
    assert_eq!(
        sorted(client.list_ephemerals("/").await.unwrap()),
        [ctx.path("p/a/e"), ctx.path("p/ea"), ctx.path("p/eb")],
        "the session has no other ephemerals"
    );
    assert_eq!(
        other.list_ephemerals(&ctx.root).await.unwrap(),
        [ctx.path("p/ec")]
    );
    assert_eq!(
        client.list_ephemerals(&ctx.path("nope")).await.unwrap(),
        Vec::<String>::new()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_needs_no_node() {
    everywhere("sync", sync_needs_no_node_on).await;
}

async fn sync_needs_no_node_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    client.sync(&ctx.root).await.unwrap();
    client.sync("/").await.unwrap();
    // No existence check (§6.8).
    client.sync(&ctx.path("missing/node")).await.unwrap();
    other
        .create(&ctx.path("n"), b"fresh", &PERSISTENT)
        .await
        .unwrap();
    client.sync(&ctx.path("n")).await.unwrap();
    assert_eq!(client.get_data(&ctx.path("n")).await.unwrap().0, b"fresh");
}

// ------------------------------------------------------------------------------------------------
// ACLs and authentication
// ------------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acl_get_and_set() {
    everywhere("acl", acl_get_and_set_on).await;
}

async fn acl_get_and_set_on(ctx: Ctx) {
    let client = ctx.client().await;
    let n = ctx.path("n");
    let (created, _) = client.create(&n, b"", &PERSISTENT).await.unwrap();
    let (acls, stat) = client.get_acl(&n).await.unwrap();
    assert_eq!(acls, vec![acl(Permission::ALL, "world", "anyone")]);
    assert_eq!(stat, created);

    let (_, _, data_watch) = client.get_and_watch_data(&n).await.unwrap();
    let mut data_watch = oneshot(data_watch);
    let read_only = [acl(Permission::READ, "world", "anyone")];
    assert_eq!(
        client.set_acl(&n, &read_only, Some(1)).await.unwrap_err(),
        Error::BadVersion,
        "the expected version is the aversion"
    );
    let stat = client.set_acl(&n, &read_only, Some(0)).await.unwrap();
    assert_eq!(
        stat,
        Stat {
            aversion: 1,
            ..created
        },
        "setACL moves only the aversion"
    );
    assert_eq!(
        client.get_acl(&n).await.unwrap(),
        (read_only.to_vec(), stat)
    );
    barrier(&client).await;
    assert_pending(&mut data_watch, "setACL fires no watch (§6.7)");

    // READ only: reads pass, the rest is refused.
    assert_eq!(client.get_data(&n).await.unwrap().1, stat);
    assert!(client.list_children(&n).await.unwrap().is_empty());
    assert_eq!(
        client.set_data(&n, b"x", None).await.unwrap_err(),
        Error::NoAuth
    );
    assert_eq!(
        client
            .create(&ctx.path("n/c"), b"", &PERSISTENT)
            .await
            .unwrap_err(),
        Error::NoAuth
    );
    assert_eq!(
        client.set_acl(&n, &read_only, None).await.unwrap_err(),
        Error::NoAuth,
        "setACL needs ADMIN"
    );
    // setACL validates the list before looking the node up (§6.7).
    assert_eq!(
        client
            .set_acl(&ctx.path("missing"), &[], None)
            .await
            .unwrap_err(),
        Error::InvalidAcl
    );
    assert_eq!(
        client
            .set_acl(&ctx.path("missing"), &read_only, None)
            .await
            .unwrap_err(),
        Error::NoNode
    );
    assert_eq!(
        client.get_acl(&ctx.path("missing")).await.unwrap_err(),
        Error::NoNode
    );

    // A digest id is masked for a reader without ADMIN (§6.6).
    let mixed = [
        acl(Permission::READ, "world", "anyone"),
        acl(Permission::ALL, "digest", ALICE_ID),
    ];
    let q = ctx.path("q");
    client
        .create(
            &q,
            b"",
            &CreateMode::Persistent.with_acls(Acls::new(&mixed)),
        )
        .await
        .unwrap();
    assert_eq!(
        client.get_acl(&q).await.unwrap().0,
        vec![
            acl(Permission::READ, "world", "anyone"),
            acl(Permission::ALL, "digest", "alice:x"),
        ]
    );
    let alice = within(
        "connect",
        zk::Client::connector()
            .with_auth("digest", ALICE)
            .connect(&ctx.connect),
    )
    .await
    .unwrap();
    assert_eq!(alice.get_acl(&q).await.unwrap().0, mixed.to_vec());

    // No permission at all: even getACL is refused; exists is not checked on 3.8.0 (§12.2).
    let none = ctx.path("none");
    let nothing = [acl(Permission::NONE, "world", "anyone")];
    client
        .create(
            &none,
            b"",
            &CreateMode::Persistent.with_acls(Acls::new(&nothing)),
        )
        .await
        .unwrap();
    assert_eq!(client.get_acl(&none).await.unwrap_err(), Error::NoAuth);
    assert_eq!(client.get_data(&none).await.unwrap_err(), Error::NoAuth);
    assert!(client.check_stat(&none).await.unwrap().is_some());

    // ip ACLs match the client's address.
    let local = [acl(Permission::ALL, "ip", "127.0.0.1")];
    client
        .create(
            &ctx.path("local"),
            b"l",
            &CreateMode::Persistent.with_acls(Acls::new(&local)),
        )
        .await
        .unwrap();
    assert_eq!(client.get_data(&ctx.path("local")).await.unwrap().0, b"l");
    let elsewhere = [acl(Permission::ALL, "ip", "10.0.0.0/8")];
    client
        .create(
            &ctx.path("far"),
            b"",
            &CreateMode::Persistent.with_acls(Acls::new(&elsewhere)),
        )
        .await
        .unwrap();
    assert_eq!(
        client.get_data(&ctx.path("far")).await.unwrap_err(),
        Error::NoAuth
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn digest_auth_and_no_auth() {
    everywhere("auth", digest_auth_and_no_auth_on).await;
}

async fn digest_auth_and_no_auth_on(ctx: Ctx) {
    let alice = within(
        "connect",
        zk::Client::connector()
            .with_auth("digest", ALICE)
            .connect(&ctx.connect),
    )
    .await
    .unwrap();
    let anonymous = ctx.client().await;
    let wrong = ctx.client().await;
    wrong.auth("digest", b"alice:wrong").await.unwrap();

    let s = ctx.path("s");
    alice
        .create(
            &s,
            b"secret",
            &CreateMode::Persistent.with_acls(Acls::creator_all()),
        )
        .await
        .unwrap();
    // The auth scheme is expanded into the creator's digest identity (§12.3).
    assert_eq!(
        alice.get_acl(&s).await.unwrap().0,
        vec![acl(Permission::ALL, "digest", ALICE_ID)]
    );
    alice
        .create(&ctx.path("s/child"), b"", &PERSISTENT)
        .await
        .unwrap();

    for client in [&anonymous, &wrong] {
        assert_eq!(client.get_data(&s).await.unwrap_err(), Error::NoAuth);
        assert_eq!(
            client.set_data(&s, b"x", None).await.unwrap_err(),
            Error::NoAuth
        );
        assert_eq!(client.list_children(&s).await.unwrap_err(), Error::NoAuth);
        assert_eq!(client.get_children(&s).await.unwrap_err(), Error::NoAuth);
        assert_eq!(
            client.count_descendants_number(&s).await.unwrap_err(),
            Error::NoAuth
        );
        assert_eq!(client.get_acl(&s).await.unwrap_err(), Error::NoAuth);
        assert_eq!(
            client
                .set_acl(&s, &[acl(Permission::ALL, "world", "anyone")], None)
                .await
                .unwrap_err(),
            Error::NoAuth
        );
        assert_eq!(
            client
                .create(&ctx.path("s/x"), b"", &PERSISTENT)
                .await
                .unwrap_err(),
            Error::NoAuth
        );
        assert_eq!(
            client.delete(&ctx.path("s/child"), None).await.unwrap_err(),
            Error::NoAuth,
            "delete needs DELETE on the parent"
        );
        assert_eq!(
            client.get_and_watch_data(&s).await.unwrap_err(),
            Error::NoAuth
        );
        // 3.8.0 checks no ACL on exists (§0, §12.2).
        assert_eq!(
            client.check_stat(&s).await.unwrap().map(|s| s.num_children),
            Some(1)
        );
    }

    // check inside multi needs READ; create needs CREATE on the parent (§10.3, §12.2).
    let mut writer = anonymous.new_multi_writer();
    writer.add_check_version(&s, -1).unwrap();
    assert_eq!(
        within("multi", writer.commit()).await.unwrap_err(),
        MultiWriteError::OperationFailed {
            index: 0,
            source: Error::NoAuth
        }
    );
    let mut writer = anonymous.new_multi_writer();
    writer
        .add_create(&ctx.path("fine"), b"", &PERSISTENT)
        .unwrap();
    writer
        .add_create(&ctx.path("s/x"), b"", &PERSISTENT)
        .unwrap();
    assert_eq!(
        within("multi", writer.commit()).await.unwrap_err(),
        MultiWriteError::OperationFailed {
            index: 1,
            source: Error::NoAuth
        }
    );
    assert_eq!(anonymous.check_stat(&ctx.path("fine")).await.unwrap(), None);
    let mut writer = alice.new_multi_writer();
    writer.add_check_version(&s, 0).unwrap();
    writer
        .add_create(&ctx.path("s/x"), b"", &PERSISTENT)
        .unwrap();
    writer.add_delete(&ctx.path("s/x"), None).unwrap();
    assert_eq!(
        within("multi", writer.commit()).await.unwrap(),
        vec![
            MultiWriteResult::Check,
            MultiWriteResult::Create {
                path: ctx.path("s/x"),
                stat: invalid_stat(),
            },
            MultiWriteResult::Delete,
        ]
    );

    // whoami (§6.10): ip always, digest once authenticated, identities deduplicated.
    assert_eq!(
        users(anonymous.list_auth_users().await.unwrap()),
        vec![user("ip", "127.0.0.1")]
    );
    assert_eq!(
        users(alice.list_auth_users().await.unwrap()),
        vec![user("digest", "alice"), user("ip", "127.0.0.1")]
    );
    // Auth applies to later requests of the same connection.
    anonymous.auth("digest", ALICE).await.unwrap();
    anonymous.auth("digest", ALICE).await.unwrap();
    assert_eq!(
        users(anonymous.list_auth_users().await.unwrap()),
        vec![user("digest", "alice"), user("ip", "127.0.0.1")]
    );
    assert_eq!(anonymous.get_data(&s).await.unwrap().0, b"secret");
    anonymous.delete(&ctx.path("s/child"), None).await.unwrap();
    // The node's own ACL does not guard its deletion: the parent's does.
    wrong.delete(&s, None).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_auth_scheme_fails_the_session() {
    everywhere("authfailed", unknown_auth_scheme_fails_the_session_on).await;
}

async fn unknown_auth_scheme_fails_the_session_on(ctx: Ctx) {
    // `super` is not an auth scheme either (§12.5).
    for scheme in ["bogus", "super"] {
        let client = ctx.client().await;
        let mut states = client.state_watcher();
        assert_eq!(
            within("auth", client.auth(scheme, b"x")).await.unwrap_err(),
            Error::AuthFailed
        );
        assert_eq!(next_state(&mut states).await, SessionState::AuthFailed);
        assert_eq!(
            client.get_data(&ctx.root).await.unwrap_err(),
            Error::AuthFailed
        );
        // Given to the connector, the same auth makes the connect fail.
        assert_eq!(
            within(
                "connect",
                zk::Client::connector()
                    .with_auth(scheme, b"x")
                    .connect(&ctx.connect)
            )
            .await
            .unwrap_err(),
            Error::AuthFailed
        );
    }
}

// ------------------------------------------------------------------------------------------------
// multi and multiRead
// ------------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_write_commits_all() {
    everywhere("multi", multi_write_commits_all_on).await;
}

async fn multi_write_commits_all_on(ctx: Ctx) {
    let client = ctx.client().await;
    let m = ctx.path("m");
    client.create(&m, b"v0", &PERSISTENT).await.unwrap();
    client
        .create(&ctx.path("m/old"), b"", &PERSISTENT)
        .await
        .unwrap();

    let mut writer = client.new_multi_writer();
    writer.add_check_version(&m, 0).unwrap();
    writer
        .add_create(&ctx.path("m/new"), b"n", &PERSISTENT)
        .unwrap();
    writer
        .add_create(&ctx.path("m/seq-"), b"", &SEQUENTIAL)
        .unwrap();
    writer.add_set_data(&m, b"v1", Some(0)).unwrap();
    writer.add_delete(&ctx.path("m/old"), None).unwrap();
    writer
        .add_create(&ctx.path("m/box"), b"", &CONTAINER)
        .unwrap();
    writer
        .add_create(
            &ctx.path("m/ttl"),
            b"t",
            &ttl_options(CreateMode::Persistent, HOUR),
        )
        .unwrap();
    // Later ops see earlier ones.
    writer
        .add_create(&ctx.path("m/new/child"), b"", &EPHEMERAL)
        .unwrap();
    let results = within("multi", writer.commit()).await.unwrap();
    assert_eq!(results.len(), 8, "{results:?}");

    let (_, m_stat) = client.get_data(&m).await.unwrap();
    let zxid = m_stat.mzxid;
    let stat_of = |path: &str| {
        let path = ctx.path(path);
        let client = &client;
        async move { client.get_data(&path).await.unwrap().1 }
    };
    let new = stat_of("m/new").await;
    let box_stat = stat_of("m/box").await;
    let ttl = stat_of("m/ttl").await;
    let child = stat_of("m/new/child").await;
    // One zxid for the whole multi (§10.3).
    for stat in [new, box_stat, ttl, child] {
        assert_eq!(stat.czxid, zxid, "{stat:?}");
    }
    assert_eq!(child.ephemeral_owner, client.session_id().0);
    assert_eq!(m_stat.pzxid, zxid);
    // The crate sends create2 (op 15) inside multi and expects a Stat back (3.9). A 3.8 server
    // answers create2 inside multi with a plain create result, path only (ZOOKEEPER-4026), so
    // the crate reports an invalid Stat (czxid -1): that is what users of the crate see on 3.8.
    // Containers and TTL nodes come back with their Stat on both versions (§10.2).
    assert_eq!(
        results,
        vec![
            MultiWriteResult::Check,
            MultiWriteResult::Create {
                path: ctx.path("m/new"),
                stat: invalid_stat(),
            },
            MultiWriteResult::Create {
                path: ctx.path("m/seq-0000000002"),
                stat: invalid_stat(),
            },
            // The Stat as of the setData op: m then had old, new and seq-.
            MultiWriteResult::SetData {
                stat: Stat {
                    num_children: 3,
                    cversion: 3,
                    ..m_stat
                }
            },
            MultiWriteResult::Delete,
            MultiWriteResult::Create {
                path: ctx.path("m/box"),
                stat: box_stat,
            },
            MultiWriteResult::Create {
                path: ctx.path("m/ttl"),
                stat: ttl,
            },
            MultiWriteResult::Create {
                path: ctx.path("m/new/child"),
                stat: invalid_stat(),
            },
        ]
    );
    assert_eq!(
        (m_stat.version, m_stat.data_length, m_stat.num_children),
        (1, 2, 4)
    );
    // old (1), new, seq, box, ttl: five creates and one delete.
    assert_eq!(m_stat.cversion, 6);
    assert_eq!(
        sorted(client.list_children(&m).await.unwrap()),
        ["box", "new", "seq-0000000002", "ttl"]
    );
    assert_eq!((ttl.ephemeral_owner, box_stat.ephemeral_owner), (0, 0));
    assert_eq!(ttl.data_length, 1);

    // An empty multi never reaches the server.
    let mut empty = client.new_multi_writer();
    assert_eq!(empty.commit().await.unwrap(), vec![]);

    // CheckWriter: a multi whose first op checks a path.
    let mut guarded = client.new_check_writer(&m, Some(1)).unwrap();
    guarded.add_set_data(&m, b"v2", Some(1)).unwrap();
    let results = within("check writer", guarded.commit()).await.unwrap();
    let (_, now) = client.get_data(&m).await.unwrap();
    assert_eq!(results, vec![MultiWriteResult::SetData { stat: now }]);
    assert_eq!(now.version, 2);
}

/// What the crate reports for a create result that carries no Stat.
fn invalid_stat() -> Stat {
    Stat {
        czxid: -1,
        mzxid: -1,
        pzxid: -1,
        ctime: 0,
        mtime: 0,
        version: -1,
        cversion: -1,
        aversion: -1,
        ephemeral_owner: 0,
        data_length: 0,
        num_children: 0,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_write_fails_whole() {
    everywhere("multifail", multi_write_fails_whole_on).await;
}

async fn multi_write_fails_whole_on(ctx: Ctx) {
    let client = ctx.client().await;
    let m = ctx.path("m");
    client.create(&m, b"", &PERSISTENT).await.unwrap();
    client
        .create(&ctx.path("m/y"), b"", &PERSISTENT)
        .await
        .unwrap();
    let (_, before) = client.get_children(&m).await.unwrap();
    let (_, _, watch) = client.get_and_watch_data(&ctx.path("m/y")).await.unwrap();
    let mut watch = oneshot(watch);

    let mut writer = client.new_multi_writer();
    writer
        .add_create(&ctx.path("m/x"), b"", &PERSISTENT)
        .unwrap();
    writer.add_check_version(&m, 7).unwrap();
    writer.add_delete(&ctx.path("m/y"), None).unwrap();
    writer
        .add_create(&ctx.path("m/z"), b"", &PERSISTENT)
        .unwrap();
    assert_eq!(
        within("multi", writer.commit()).await.unwrap_err(),
        MultiWriteError::OperationFailed {
            index: 1,
            source: Error::BadVersion
        }
    );
    // Nothing applied, nothing fired.
    assert_pending(&mut watch, "a watch on a node a failed multi would delete");
    assert_eq!(client.check_stat(&ctx.path("m/x")).await.unwrap(), None);
    assert_eq!(client.check_stat(&ctx.path("m/z")).await.unwrap(), None);
    assert!(client.check_stat(&ctx.path("m/y")).await.unwrap().is_some());
    let (children, after) = client.get_children(&m).await.unwrap();
    assert_eq!(children, ["y"]);
    assert_eq!(after, before);

    let failures: [(&str, usize, Error); 4] = [
        ("check missing", 0, Error::NoNode),
        ("create existing", 2, Error::NodeExists),
        ("delete non-empty", 1, Error::NotEmpty),
        ("child of ephemeral", 2, Error::NoChildrenForEphemerals),
    ];
    for (case, index, source) in failures {
        let mut writer = client.new_multi_writer();
        match case {
            "check missing" => {
                writer.add_check_version(&ctx.path("nope"), -1).unwrap();
                writer
                    .add_create(&ctx.path("m/a"), b"", &PERSISTENT)
                    .unwrap();
            }
            "create existing" => {
                writer
                    .add_create(&ctx.path("m/a"), b"", &PERSISTENT)
                    .unwrap();
                writer.add_set_data(&ctx.path("m/y"), b"1", None).unwrap();
                writer
                    .add_create(&ctx.path("m/y"), b"", &PERSISTENT)
                    .unwrap();
            }
            "delete non-empty" => {
                writer
                    .add_create(&ctx.path("m/y/c"), b"", &PERSISTENT)
                    .unwrap();
                writer.add_delete(&ctx.path("m/y"), None).unwrap();
            }
            _ => {
                writer
                    .add_create(&ctx.path("m/e"), b"", &EPHEMERAL)
                    .unwrap();
                writer
                    .add_set_data(&ctx.path("m/e"), b"1", Some(0))
                    .unwrap();
                writer
                    .add_create(&ctx.path("m/e/c"), b"", &PERSISTENT)
                    .unwrap();
            }
        }
        assert_eq!(
            within("multi", writer.commit()).await.unwrap_err(),
            MultiWriteError::OperationFailed { index, source },
            "{case}"
        );
        let (_, after) = client.get_children(&m).await.unwrap();
        assert_eq!(after, before, "{case}: nothing applied");
    }
    let (_, y) = client.get_data(&ctx.path("m/y")).await.unwrap();
    assert_eq!(y.version, 0);

    // CheckWriter reports its own check apart.
    let mut guarded = client.new_check_writer(&m, Some(9)).unwrap();
    guarded
        .add_create(&ctx.path("m/q"), b"", &PERSISTENT)
        .unwrap();
    assert_eq!(
        within("check writer", guarded.commit()).await.unwrap_err(),
        CheckWriteError::CheckFailed {
            source: Error::BadVersion
        }
    );
    let mut guarded = client.new_check_writer(&m, None).unwrap();
    guarded.add_delete(&ctx.path("m/q"), None).unwrap();
    assert_eq!(
        within("check writer", guarded.commit()).await.unwrap_err(),
        CheckWriteError::OperationFailed {
            index: 0,
            source: Error::NoNode
        }
    );
    barrier(&client).await;
    assert_pending(&mut watch, "a watch on a node no multi touched");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_read_reports_each_op() {
    everywhere("multiread", multi_read_reports_each_op_on).await;
}

async fn multi_read_reports_each_op_on(ctx: Ctx) {
    let client = ctx.client().await;
    let alice = within(
        "connect",
        zk::Client::connector()
            .with_auth("digest", ALICE)
            .connect(&ctx.connect),
    )
    .await
    .unwrap();
    let r = ctx.path("r");
    client.create(&r, b"rd", &PERSISTENT).await.unwrap();
    for name in ["r/b", "r/a"] {
        client
            .create(&ctx.path(name), b"", &PERSISTENT)
            .await
            .unwrap();
    }
    let s = ctx.path("s");
    alice
        .create(
            &s,
            b"",
            &CreateMode::Persistent.with_acls(Acls::creator_all()),
        )
        .await
        .unwrap();
    let (_, r_stat) = client.get_data(&r).await.unwrap();

    let mut reader = client.new_multi_reader();
    reader.add_get_data(&r).unwrap();
    reader.add_get_children(&r).unwrap();
    reader.add_get_data(&ctx.path("nope")).unwrap();
    reader.add_get_children(&ctx.path("nope")).unwrap();
    reader.add_get_data(&s).unwrap();
    reader.add_get_children(&s).unwrap();
    reader.add_get_data(&ctx.path("r/a")).unwrap();
    let results = within("multiRead", reader.commit()).await.unwrap();
    assert_eq!(results.len(), 7, "{results:?}");
    let mut results = results.into_iter();
    match results.next().unwrap() {
        MultiReadResult::Data { data, stat } => {
            assert_eq!(data, b"rd");
            assert_eq!(stat, r_stat);
        }
        other => panic!("getData: {other:?}"),
    }
    match results.next().unwrap() {
        MultiReadResult::Children { children } => assert_eq!(sorted(children), ["a", "b"]),
        other => panic!("getChildren: {other:?}"),
    }
    for expected in [Error::NoNode, Error::NoNode, Error::NoAuth, Error::NoAuth] {
        match results.next().unwrap() {
            MultiReadResult::Error { err } => assert_eq!(err, expected),
            other => panic!("expected {expected:?}, got {other:?}"),
        }
    }
    match results.next().unwrap() {
        MultiReadResult::Data { data, stat } => {
            assert!(data.is_empty());
            assert_eq!(stat.num_children, 0);
        }
        other => panic!("getData: {other:?}"),
    }
    let mut empty = client.new_multi_reader();
    assert!(empty.commit().await.unwrap().is_empty());
}

// ------------------------------------------------------------------------------------------------
// Configuration and reconfig
// ------------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_node_and_reconfig() {
    everywhere("config", config_node_and_reconfig_on).await;
}

async fn config_node_and_reconfig_on(ctx: Ctx) {
    let client = ctx.client().await;
    // Standalone: /zookeeper/config is empty, all zeros except aversion -1 (§16).
    let empty_config = (
        Vec::new(),
        Stat {
            czxid: 0,
            mzxid: 0,
            pzxid: 0,
            ctime: 0,
            mtime: 0,
            version: 0,
            cversion: 0,
            aversion: -1,
            ephemeral_owner: 0,
            data_length: 0,
            num_children: 0,
        },
    );
    assert_eq!(client.get_config().await.unwrap(), empty_config);
    assert_eq!(
        client.get_acl("/zookeeper/config").await.unwrap().0,
        vec![acl(Permission::READ, "world", "anyone")]
    );
    // getConfig ignores the chroot.
    let chrooted = client.clone().chroot(ctx.root.as_str()).unwrap();
    assert_eq!(chrooted.get_config().await.unwrap(), empty_config);
    let (data, stat, watcher) = client.get_and_watch_config().await.unwrap();
    assert_eq!((data, stat), empty_config);
    let mut watcher = oneshot(watcher);
    // reconfig is disabled by default (§11).
    assert_eq!(
        within(
            "reconfig",
            client.update_ensemble(
                EnsembleUpdate::New {
                    ensemble: ["server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181"]
                        .into_iter()
                },
                None
            )
        )
        .await
        .unwrap_err(),
        Error::ReconfigDisabled
    );
    assert_eq!(
        within(
            "reconfig",
            client.update_ensemble(
                EnsembleUpdate::Incremental {
                    joinings: ["server.2=127.0.0.1:2889:3889:participant"].into_iter(),
                    // The crate skips empty entries: no server leaves.
                    leavings: [""].into_iter(),
                },
                Some(0)
            )
        )
        .await
        .unwrap_err(),
        Error::ReconfigDisabled
    );
    barrier(&client).await;
    assert_pending(&mut watcher, "the config watch");
    assert_eq!(client.state(), SessionState::SyncConnected);
}

// ------------------------------------------------------------------------------------------------
// One-shot watches
// ------------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_watch_fires_once() {
    everywhere("datawatch", data_watch_fires_once_on).await;
}

async fn data_watch_fires_once_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    let me = client.session_id();
    let n = ctx.path("n");
    other.create(&n, b"v0", &PERSISTENT).await.unwrap();
    assert_eq!(
        client
            .get_and_watch_data(&ctx.path("nope"))
            .await
            .unwrap_err(),
        Error::NoNode
    );

    let (data, _, watcher) = client.get_and_watch_data(&n).await.unwrap();
    assert_eq!(data, b"v0");
    assert_eq!(watched_paths(&ctx, me).await, vec![n.clone()]);
    other.set_data(&n, b"v1", None).await.unwrap();
    assert_eq!(
        within("NodeDataChanged", oneshot(watcher)).await,
        event(EventType::NodeDataChanged, &n)
    );
    // Consumed by the first event: the server holds no watch any more (§9.1).
    barrier(&client).await;
    assert_eq!(watched_paths(&ctx, me).await, Vec::<String>::new());
    other.set_data(&n, b"v2", None).await.unwrap();

    // Child changes do not trigger a data watch.
    let (data, _, watcher) = client.get_and_watch_data(&n).await.unwrap();
    assert_eq!(data, b"v2");
    let mut watcher = oneshot(watcher);
    other
        .create(&ctx.path("n/c"), b"", &PERSISTENT)
        .await
        .unwrap();
    other.delete(&ctx.path("n/c"), None).await.unwrap();
    barrier(&client).await;
    assert_pending(&mut watcher, "a data watch after child changes");
    other.set_data(&n, b"v3", None).await.unwrap();
    assert_eq!(
        within("NodeDataChanged", watcher).await,
        event(EventType::NodeDataChanged, &n)
    );

    // Deletion fires NodeDeleted to a data watch.
    let (_, _, watcher) = client.get_and_watch_data(&n).await.unwrap();
    other.delete(&n, None).await.unwrap();
    assert_eq!(
        within("NodeDeleted", oneshot(watcher)).await,
        event(EventType::NodeDeleted, &n)
    );
    barrier(&client).await;
    assert_eq!(watched_paths(&ctx, me).await, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exist_watch_fires_once() {
    everywhere("existwatch", exist_watch_fires_once_on).await;
}

async fn exist_watch_fires_once_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    let me = client.session_id();
    let n = ctx.path("n");

    // exists registers a watch even on a missing node (§6.5).
    let (stat, watcher) = client.check_and_watch_stat(&n).await.unwrap();
    assert_eq!(stat, None);
    assert_eq!(watched_paths(&ctx, me).await, vec![n.clone()]);
    let (created, _) = other.create(&n, b"", &PERSISTENT).await.unwrap();
    assert_eq!(
        within("NodeCreated", oneshot(watcher)).await,
        event(EventType::NodeCreated, &n)
    );
    barrier(&client).await;
    assert_eq!(watched_paths(&ctx, me).await, Vec::<String>::new());

    let (stat, watcher) = client.check_and_watch_stat(&n).await.unwrap();
    assert_eq!(stat, Some(created));
    let mut watcher = oneshot(watcher);
    other
        .create(&ctx.path("n/c"), b"", &PERSISTENT)
        .await
        .unwrap();
    barrier(&client).await;
    assert_pending(&mut watcher, "an exist watch after a child create");
    other.set_data(&n, b"1", None).await.unwrap();
    assert_eq!(
        within("NodeDataChanged", watcher).await,
        event(EventType::NodeDataChanged, &n)
    );

    let (_, watcher) = client.check_and_watch_stat(&n).await.unwrap();
    other.delete(&ctx.path("n/c"), None).await.unwrap();
    other.delete(&n, None).await.unwrap();
    assert_eq!(
        within("NodeDeleted", oneshot(watcher)).await,
        event(EventType::NodeDeleted, &n)
    );
    barrier(&client).await;
    assert_eq!(watched_paths(&ctx, me).await, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn child_watch_fires_once() {
    everywhere("childwatch", child_watch_fires_once_on).await;
}

async fn child_watch_fires_once_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    let p = ctx.path("p");
    other.create(&p, b"", &PERSISTENT).await.unwrap();
    assert_eq!(
        client
            .list_and_watch_children(&ctx.path("nope"))
            .await
            .unwrap_err(),
        Error::NoNode
    );
    assert_eq!(
        client
            .get_and_watch_children(&ctx.path("nope"))
            .await
            .unwrap_err(),
        Error::NoNode
    );

    let (children, watcher) = client.list_and_watch_children(&p).await.unwrap();
    assert!(children.is_empty());
    let mut watcher = oneshot(watcher);
    other.set_data(&p, b"x", None).await.unwrap();
    barrier(&client).await;
    assert_pending(&mut watcher, "a child watch after setData");
    other
        .create(&ctx.path("p/a"), b"", &PERSISTENT)
        .await
        .unwrap();
    assert_eq!(
        within("NodeChildrenChanged", watcher).await,
        event(EventType::NodeChildrenChanged, &p)
    );
    // Consumed: a second create is not reported, and a grandchild never is.
    other
        .create(&ctx.path("p/b"), b"", &PERSISTENT)
        .await
        .unwrap();

    let (children, stat, watcher) = client.get_and_watch_children(&p).await.unwrap();
    assert_eq!(sorted(children), ["a", "b"]);
    assert_eq!((stat.num_children, stat.cversion, stat.version), (2, 2, 1));
    let mut watcher = oneshot(watcher);
    other
        .create(&ctx.path("p/a/g"), b"", &PERSISTENT)
        .await
        .unwrap();
    barrier(&client).await;
    assert_pending(&mut watcher, "a child watch after a grandchild create");
    other.delete(&ctx.path("p/b"), None).await.unwrap();
    assert_eq!(
        within("NodeChildrenChanged", watcher).await,
        event(EventType::NodeChildrenChanged, &p)
    );

    // The watched node's own deletion.
    other.delete(&ctx.path("p/a/g"), None).await.unwrap();
    other.delete(&ctx.path("p/a"), None).await.unwrap();
    let (_, watcher) = client.list_and_watch_children(&p).await.unwrap();
    other.delete(&p, None).await.unwrap();
    assert_eq!(
        within("NodeDeleted", oneshot(watcher)).await,
        event(EventType::NodeDeleted, &p)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_event_reaches_every_watcher() {
    everywhere("fanout", one_event_reaches_every_watcher_on).await;
}

async fn one_event_reaches_every_watcher_on(ctx: Ctx) {
    let client = ctx.client().await;
    let second = ctx.client().await;
    let writer = ctx.client().await;
    let n = ctx.path("n");
    writer.create(&n, b"", &PERSISTENT).await.unwrap();

    // Data, exist and child watches of one connection on one node, plus another connection's.
    let (_, _, data) = client.get_and_watch_data(&n).await.unwrap();
    let (_, exist) = client.check_and_watch_stat(&n).await.unwrap();
    let (_, child) = client.list_and_watch_children(&n).await.unwrap();
    let (_, _, elsewhere) = second.get_and_watch_data(&n).await.unwrap();
    writer.delete(&n, None).await.unwrap();
    for (what, watcher) in [
        ("data", data),
        ("exist", exist),
        ("child", child),
        ("second client", elsewhere),
    ] {
        assert_eq!(
            within(what, oneshot(watcher)).await,
            event(EventType::NodeDeleted, &n),
            "{what}"
        );
    }

    // Two one-shot watchers on one path get the same single event.
    writer.create(&n, b"", &PERSISTENT).await.unwrap();
    let (_, _, first) = client.get_and_watch_data(&n).await.unwrap();
    let (_, _, again) = client.get_and_watch_data(&n).await.unwrap();
    writer.set_data(&n, b"1", None).await.unwrap();
    assert_eq!(
        within("first", oneshot(first)).await,
        event(EventType::NodeDataChanged, &n)
    );
    assert_eq!(
        within("again", oneshot(again)).await,
        event(EventType::NodeDataChanged, &n)
    );
}

// ------------------------------------------------------------------------------------------------
// Persistent watches and removal
// ------------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_watch() {
    everywhere("persistent", persistent_watch_on).await;
}

async fn persistent_watch_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    let me = client.session_id();
    let n = ctx.path("n");
    other.create(&n, b"", &PERSISTENT).await.unwrap();
    let mut watcher = client.watch(&n, AddWatchMode::Persistent).await.unwrap();
    let mut missing = client
        .watch(&ctx.path("later"), AddWatchMode::Persistent)
        .await
        .unwrap();
    assert_eq!(
        watched_paths(&ctx, me).await,
        vec![ctx.path("later"), n.clone()]
    );

    other.set_data(&n, b"1", None).await.unwrap();
    other
        .create(&ctx.path("n/c"), b"", &PERSISTENT)
        .await
        .unwrap();
    other
        .create(&ctx.path("n/c/d"), b"", &PERSISTENT)
        .await
        .unwrap();
    other.set_data(&ctx.path("n/c"), b"1", None).await.unwrap();
    other.delete(&ctx.path("n/c/d"), None).await.unwrap();
    other.delete(&ctx.path("n/c"), None).await.unwrap();
    other.delete(&n, None).await.unwrap();
    other.create(&n, b"", &PERSISTENT).await.unwrap();
    other.set_data(&n, b"2", None).await.unwrap();
    other
        .create(&ctx.path("later"), b"", &PERSISTENT)
        .await
        .unwrap();
    // Every change of the node itself and of its child list, nothing below (§9.1).
    for expected in [
        event(EventType::NodeDataChanged, &n),
        event(EventType::NodeChildrenChanged, &n),
        event(EventType::NodeChildrenChanged, &n),
        event(EventType::NodeDeleted, &n),
        event(EventType::NodeCreated, &n),
        event(EventType::NodeDataChanged, &n),
    ] {
        assert_eq!(next_event(&mut watcher).await, expected);
    }
    assert_eq!(
        next_event(&mut missing).await,
        event(EventType::NodeCreated, &ctx.path("later"))
    );
    barrier(&client).await;
    assert_no_event(&mut watcher, "persistent watch");
    assert_no_event(&mut missing, "persistent watch on a created node");
    // It persists.
    assert_eq!(
        watched_paths(&ctx, me).await,
        vec![ctx.path("later"), n.clone()]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_recursive_watch() {
    everywhere("recursive", persistent_recursive_watch_on).await;
}

async fn persistent_recursive_watch_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    let r = ctx.path("r");
    other.create(&r, b"", &PERSISTENT).await.unwrap();
    let mut watcher = client
        .watch(&r, AddWatchMode::PersistentRecursive)
        .await
        .unwrap();

    other
        .create(&ctx.path("r/a"), b"", &PERSISTENT)
        .await
        .unwrap();
    other
        .create(&ctx.path("r/a/b"), b"", &PERSISTENT)
        .await
        .unwrap();
    other
        .set_data(&ctx.path("r/a/b"), b"1", None)
        .await
        .unwrap();
    other.set_data(&r, b"1", None).await.unwrap();
    // A sibling whose name merely starts with the watched one is not below it.
    other
        .create(&ctx.path("rx"), b"", &PERSISTENT)
        .await
        .unwrap();
    other.delete(&ctx.path("r/a/b"), None).await.unwrap();
    other.delete(&ctx.path("r/a"), None).await.unwrap();
    other.delete(&r, None).await.unwrap();
    other.create(&r, b"", &PERSISTENT).await.unwrap();
    // Created, changed and deleted for the node and every descendant; never
    // NodeChildrenChanged (§9.1).
    for expected in [
        event(EventType::NodeCreated, &ctx.path("r/a")),
        event(EventType::NodeCreated, &ctx.path("r/a/b")),
        event(EventType::NodeDataChanged, &ctx.path("r/a/b")),
        event(EventType::NodeDataChanged, &r),
        event(EventType::NodeDeleted, &ctx.path("r/a/b")),
        event(EventType::NodeDeleted, &ctx.path("r/a")),
        event(EventType::NodeDeleted, &r),
        event(EventType::NodeCreated, &r),
    ] {
        assert_eq!(next_event(&mut watcher).await, expected);
    }
    barrier(&client).await;
    assert_no_event(&mut watcher, "recursive watch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchers_are_removed() {
    everywhere("removal", watchers_are_removed_on).await;
}

async fn watchers_are_removed_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    let me = client.session_id();
    let n = ctx.path("n");
    other.create(&n, b"", &PERSISTENT).await.unwrap();
    let nothing = Vec::<String>::new();

    // Explicit removal (removeWatches, op 18) answers with the server's verdict.
    let (_, _, watcher) = client.get_and_watch_data(&n).await.unwrap();
    assert_eq!(watched_paths(&ctx, me).await, vec![n.clone()]);
    #[allow(deprecated)]
    let removed = within("removeWatches", watcher.remove()).await;
    assert_eq!(removed, Ok(()));
    assert_eq!(watched_paths(&ctx, me).await, nothing);

    let watcher = client.watch(&n, AddWatchMode::Persistent).await.unwrap();
    assert_eq!(watched_paths(&ctx, me).await, vec![n.clone()]);
    #[allow(deprecated)]
    let removed = within("removeWatches", watcher.remove()).await;
    assert_eq!(removed, Ok(()));
    assert_eq!(watched_paths(&ctx, me).await, nothing);

    let watcher = client
        .watch(&n, AddWatchMode::PersistentRecursive)
        .await
        .unwrap();
    assert_eq!(watched_paths(&ctx, me).await, vec![n.clone()]);
    #[allow(deprecated)]
    let removed = within("removeWatches", watcher.remove()).await;
    assert_eq!(removed, Ok(()));
    assert_eq!(watched_paths(&ctx, me).await, nothing);

    // Dropping a watcher removes it too; the server hears before any later request.
    let (_, _, data) = client.get_and_watch_data(&n).await.unwrap();
    let (_, exist) = client.check_and_watch_stat(&n).await.unwrap();
    drop(data);
    barrier(&client).await;
    assert_eq!(
        watched_paths(&ctx, me).await,
        vec![n.clone()],
        "the exist watcher still needs the server's data watch"
    );
    drop(exist);
    barrier(&client).await;
    assert_eq!(watched_paths(&ctx, me).await, nothing);

    // A child watcher, then a data watcher, on the same node.
    let (_, child) = client.list_and_watch_children(&n).await.unwrap();
    let (_, _, data) = client.get_and_watch_data(&n).await.unwrap();
    #[allow(deprecated)]
    let removed = within("removeWatches", child.remove()).await;
    assert_eq!(removed, Ok(()));
    assert_eq!(
        watched_paths(&ctx, me).await,
        vec![n.clone()],
        "removing the child watch leaves the data watch"
    );
    let mut data = oneshot(data);
    other
        .create(&ctx.path("n/c"), b"", &PERSISTENT)
        .await
        .unwrap();
    barrier(&client).await;
    assert_pending(&mut data, "data watch after a child create");
    other.set_data(&n, b"1", None).await.unwrap();
    assert_eq!(
        within("NodeDataChanged", data).await,
        event(EventType::NodeDataChanged, &n)
    );
    assert_eq!(watched_paths(&ctx, me).await, nothing);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_watch_modes_on_one_path() {
    everywhere("modes", several_watch_modes_on_one_path_on).await;
}

/// The crate assumes 3.9, where watch modes on one path add up (ZOOKEEPER-4466). A 3.8 server
/// keeps one mode per connection, path and table, the last registration winning (§9.4). This is
/// what a user of the crate sees on 3.8.
async fn several_watch_modes_on_one_path_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    let n = ctx.path("n");
    other.create(&n, b"", &PERSISTENT).await.unwrap();

    // A persistent watch, then a one-shot data watch on the same path: the one-shot replaces
    // the persistent one in the data table, so data events stop after the first.
    let mut persistent = client.watch(&n, AddWatchMode::Persistent).await.unwrap();
    let (_, _, data) = client.get_and_watch_data(&n).await.unwrap();
    other.set_data(&n, b"1", None).await.unwrap();
    assert_eq!(
        within("one-shot", oneshot(data)).await,
        event(EventType::NodeDataChanged, &n)
    );
    assert_eq!(
        next_event(&mut persistent).await,
        event(EventType::NodeDataChanged, &n)
    );
    other.set_data(&n, b"2", None).await.unwrap();
    barrier(&client).await;
    assert_no_event(
        &mut persistent,
        "3.8: the persistent data watch was downgraded to the consumed one-shot",
    );
    // The child table still holds the persistent mode.
    other
        .create(&ctx.path("n/c"), b"", &PERSISTENT)
        .await
        .unwrap();
    assert_eq!(
        next_event(&mut persistent).await,
        event(EventType::NodeChildrenChanged, &n)
    );
    #[allow(deprecated)]
    let removed = within("removeWatches", persistent.remove()).await;
    assert_eq!(removed, Ok(()));

    // A persistent watch, then a recursive one: the recursive replaces the persistent, so the
    // node's child list is no longer reported (recursive watches ignore NodeChildrenChanged).
    let mut persistent = client.watch(&n, AddWatchMode::Persistent).await.unwrap();
    let mut recursive = client
        .watch(&n, AddWatchMode::PersistentRecursive)
        .await
        .unwrap();
    other
        .create(&ctx.path("n/d"), b"", &PERSISTENT)
        .await
        .unwrap();
    other.set_data(&n, b"3", None).await.unwrap();
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeCreated, &ctx.path("n/d"))
    );
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeDataChanged, &n)
    );
    assert_eq!(
        next_event(&mut persistent).await,
        event(EventType::NodeDataChanged, &n),
        "3.8: no NodeChildrenChanged before it"
    );
    barrier(&client).await;
    assert_no_event(
        &mut persistent,
        "persistent watch replaced by a recursive one",
    );
    assert_no_event(&mut recursive, "recursive watch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_need_read_permission() {
    everywhere("eventacl", events_need_read_permission_on).await;
}

/// Debian's 3.8.0 carries the CVE-2024-23944 fix: a watcher without READ on the node
/// concerned does not get its event (§9.9).
async fn events_need_read_permission_on(ctx: Ctx) {
    let watcher = ctx.client().await;
    let alice = within(
        "connect",
        zk::Client::connector()
            .with_auth("digest", ALICE)
            .connect(&ctx.connect),
    )
    .await
    .unwrap();
    let r = ctx.path("r");
    alice.create(&r, b"", &PERSISTENT).await.unwrap();
    let mut recursive = watcher
        .watch(&r, AddWatchMode::PersistentRecursive)
        .await
        .unwrap();
    let private = CreateMode::Persistent.with_acls(Acls::creator_all());
    alice
        .create(&ctx.path("r/secret"), b"", &private)
        .await
        .unwrap();
    alice
        .create(&ctx.path("r/open"), b"", &PERSISTENT)
        .await
        .unwrap();
    alice
        .set_data(&ctx.path("r/secret"), b"1", None)
        .await
        .unwrap();
    alice
        .set_data(&ctx.path("r/open"), b"1", None)
        .await
        .unwrap();
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeCreated, &ctx.path("r/open"))
    );
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeDataChanged, &ctx.path("r/open"))
    );
    barrier(&watcher).await;
    assert_no_event(&mut recursive, "events of a node the watcher may not read");

    // A private parent does not hide the events of a readable child; its own reader still gets
    // its NodeChildrenChanged.
    let (_, children) = alice
        .list_and_watch_children(&ctx.path("r/secret"))
        .await
        .unwrap();
    let (_, exist) = watcher
        .check_and_watch_stat(&ctx.path("r/secret/x"))
        .await
        .unwrap();
    let mut exist = oneshot(exist);
    alice
        .create(&ctx.path("r/secret/x"), b"", &PERSISTENT)
        .await
        .unwrap();
    assert_eq!(
        within("the reader's event", oneshot(children)).await,
        event(EventType::NodeChildrenChanged, &ctx.path("r/secret"))
    );
    assert_eq!(
        within("an event of a readable node", exist.as_mut()).await,
        event(EventType::NodeCreated, &ctx.path("r/secret/x"))
    );
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeCreated, &ctx.path("r/secret/x"))
    );
}

// ------------------------------------------------------------------------------------------------
// chroot
// ------------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chroot_is_applied_by_the_client() {
    everywhere("chroot", chroot_is_applied_by_the_client_on).await;
}

async fn chroot_is_applied_by_the_client_on(ctx: Ctx) {
    let plain = ctx.client().await;
    let base = ctx.path("app");
    let (base_stat, _) = plain.create(&base, b"base", &PERSISTENT).await.unwrap();
    let client = connect(&format!("{}{base}", ctx.connect)).await;
    assert_eq!(client.path(), base);

    let (stat, _) = client.create("/x", b"1", &PERSISTENT).await.unwrap();
    assert_eq!(
        plain.get_data(&ctx.path("app/x")).await.unwrap(),
        (b"1".to_vec(), stat)
    );
    let (_, sequence) = client.create("/s-", b"", &SEQUENTIAL).await.unwrap();
    assert_eq!(sequence.into_i64(), 1);
    assert!(
        plain
            .check_stat(&ctx.path("app/s-0000000001"))
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(client.get_data("/").await.unwrap().0, b"base");
    assert_eq!(
        client.check_stat("/").await.unwrap().map(|s| s.czxid),
        Some(base_stat.czxid)
    );
    assert_eq!(
        sorted(client.list_children("/").await.unwrap()),
        ["s-0000000001", "x"]
    );
    assert_eq!(client.count_descendants_number("/").await.unwrap(), 2);
    client.set_data("/x", b"2", None).await.unwrap();
    assert_eq!(client.get_acl("/x").await.unwrap().1.version, 1);
    client.sync("/x").await.unwrap();

    // Events come back relative to the chroot.
    let (_, created) = client.check_and_watch_stat("/y").await.unwrap();
    let mut recursive = client
        .watch("/", AddWatchMode::PersistentRecursive)
        .await
        .unwrap();
    plain
        .create(&ctx.path("app/y"), b"", &PERSISTENT)
        .await
        .unwrap();
    assert_eq!(
        within("NodeCreated", oneshot(created)).await,
        event(EventType::NodeCreated, "/y")
    );
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeCreated, "/y")
    );
    let (_, children) = client.list_and_watch_children("/").await.unwrap();
    plain
        .create(&ctx.path("app/z"), b"", &PERSISTENT)
        .await
        .unwrap();
    assert_eq!(
        within("NodeChildrenChanged", oneshot(children)).await,
        event(EventType::NodeChildrenChanged, "/")
    );
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeCreated, "/z")
    );

    // multi results and ephemerals are relative too.
    let mut writer = client.new_multi_writer();
    writer.add_create("/m", b"", &PERSISTENT).unwrap();
    writer.add_create("/q-", b"", &SEQUENTIAL).unwrap();
    writer.add_delete("/z", None).unwrap();
    let results = within("multi", writer.commit()).await.unwrap();
    assert_eq!(
        results,
        vec![
            MultiWriteResult::Create {
                path: "/m".to_string(),
                stat: invalid_stat(),
            },
            MultiWriteResult::Create {
                path: "/q-0000000005".to_string(),
                stat: invalid_stat(),
            },
            MultiWriteResult::Delete,
        ]
    );
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeCreated, "/m")
    );
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeCreated, "/q-0000000005")
    );
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeDeleted, "/z")
    );
    client.create("/e", b"", &EPHEMERAL).await.unwrap();
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeCreated, "/e")
    );
    assert_eq!(client.list_ephemerals("/").await.unwrap(), ["/e"]);
    assert_eq!(
        plain.list_ephemerals("/").await.unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        client.delete("/", None).await.unwrap_err(),
        Error::BadArguments(&"can not delete root node")
    );

    // Client::chroot shares the session of the client it comes from.
    let rooted = plain.clone().chroot(base.as_str()).unwrap();
    assert_eq!(rooted.session_id(), plain.session_id());
    assert_eq!(rooted.get_data("/x").await.unwrap().0, b"2");
    rooted.create("/own", b"", &EPHEMERAL).await.unwrap();
    assert_eq!(
        next_event(&mut recursive).await,
        event(EventType::NodeCreated, "/own")
    );
    assert_eq!(
        plain.list_ephemerals(&ctx.root).await.unwrap(),
        [ctx.path("app/own")]
    );
    assert_eq!(rooted.list_ephemerals("/").await.unwrap(), ["/own"]);

    // The chroot node is neither created nor checked by the client.
    let nowhere = connect(&format!("{}{}", ctx.connect, ctx.path("nowhere"))).await;
    assert_eq!(nowhere.get_data("/").await.unwrap_err(), Error::NoNode);
    assert_eq!(
        nowhere.create("/a", b"", &PERSISTENT).await.unwrap_err(),
        Error::NoNode
    );
    barrier(&client).await;
    assert_no_event(&mut recursive, "recursive watch through the chroot");
}

// ------------------------------------------------------------------------------------------------
// Ordering: an event precedes the reply of any later request (§9.6)
// ------------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_precedes_later_reply() {
    everywhere("ordering", event_precedes_later_reply_on).await;
}

async fn event_precedes_later_reply_on(ctx: Ctx) {
    let client = ctx.client().await;
    let other = ctx.client().await;
    let n = ctx.path("n");
    client.create(&n, b"v0", &PERSISTENT).await.unwrap();

    // The watcher's own write: the event is in before the setData reply.
    let (_, _, watcher) = client.get_and_watch_data(&n).await.unwrap();
    let mut watcher = oneshot(watcher);
    client.set_data(&n, b"v1", None).await.unwrap();
    assert_eq!(
        ready(&mut watcher, "NodeDataChanged before the setData reply"),
        event(EventType::NodeDataChanged, &n)
    );

    // Someone else's write, then a read by the watcher: the event is in before the read's reply,
    // and the read sees the change.
    let (_, _, watcher) = client.get_and_watch_data(&n).await.unwrap();
    let mut watcher = oneshot(watcher);
    other.set_data(&n, b"v2", None).await.unwrap();
    let (data, _) = client.get_data(&n).await.unwrap();
    assert_eq!(data, b"v2");
    assert_eq!(
        ready(&mut watcher, "NodeDataChanged before the getData reply"),
        event(EventType::NodeDataChanged, &n)
    );

    // A multi fires every event before its reply, in op order.
    let (_, _, data) = client.get_and_watch_data(&n).await.unwrap();
    let (_, exist) = client
        .check_and_watch_stat(&ctx.path("n/new"))
        .await
        .unwrap();
    let (_, children) = client.list_and_watch_children(&n).await.unwrap();
    let (mut data, mut exist, mut children) = (oneshot(data), oneshot(exist), oneshot(children));
    let mut recursive = client
        .watch(&ctx.root, AddWatchMode::PersistentRecursive)
        .await
        .unwrap();
    let mut writer = other.new_multi_writer();
    writer
        .add_create(&ctx.path("n/new"), b"", &PERSISTENT)
        .unwrap();
    writer.add_set_data(&ctx.path("n/new"), b"x", None).unwrap();
    writer.add_set_data(&n, b"v3", None).unwrap();
    writer.add_delete(&ctx.path("n/new"), None).unwrap();
    within("multi", writer.commit()).await.unwrap();
    let (data_now, _) = client.get_data(&n).await.unwrap();
    assert_eq!(data_now, b"v3");
    assert_eq!(
        ready(&mut exist, "NodeCreated before a later reply"),
        event(EventType::NodeCreated, &ctx.path("n/new"))
    );
    assert_eq!(
        ready(&mut children, "NodeChildrenChanged before a later reply"),
        event(EventType::NodeChildrenChanged, &n)
    );
    assert_eq!(
        ready(&mut data, "NodeDataChanged before a later reply"),
        event(EventType::NodeDataChanged, &n)
    );
    for expected in [
        event(EventType::NodeCreated, &ctx.path("n/new")),
        event(EventType::NodeDataChanged, &ctx.path("n/new")),
        event(EventType::NodeDataChanged, &n),
        event(EventType::NodeDeleted, &ctx.path("n/new")),
    ] {
        let mut next = Box::pin(recursive.changed());
        assert_eq!(
            ready(&mut next, "recursive event before a later reply"),
            expected
        );
    }
    assert_no_event(&mut recursive, "recursive watch after the multi");
}

// ------------------------------------------------------------------------------------------------
// The lock recipe: multi with a check, as a user of the crate's recipes sees it
// ------------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lock_recipe() {
    everywhere("lock", lock_recipe_on).await;
}

async fn lock_recipe_on(ctx: Ctx) {
    let client = ctx.client().await;
    let contender = ctx.client().await;
    let dir = ctx.path("locks/job");
    let options = || {
        zk::LockOptions::new(Acls::anyone_all())
            .with_ancestor_options(PERSISTENT)
            .unwrap()
    };

    let prefix = zk::LockPrefix::new_curator(&dir, "lock-").unwrap();
    let lock = within("the free lock", client.lock(prefix, b"a", options()))
        .await
        .unwrap();
    let path = lock.lock_path().to_string();
    assert!(path.starts_with(&format!("{dir}/_c_")), "{path}");
    assert!(path.ends_with("-lock-0000000000"), "{path}");
    let (_, stat) = client.get_data(&path).await.unwrap();
    assert_eq!(stat.ephemeral_owner, client.session_id().0);

    // The second contender waits for the first.
    let (_, queue) = client.list_and_watch_children(&dir).await.unwrap();
    let waiting = tokio::spawn({
        let dir = dir.clone();
        async move {
            let prefix = zk::LockPrefix::new_curator(&dir, "lock-").unwrap();
            let lock = contender
                .lock(prefix, b"b", zk::LockOptions::new(Acls::anyone_all()))
                .await
                .unwrap();
            lock.lock_path().to_string()
        }
    });
    assert_eq!(
        within("the second contender's node", oneshot(queue)).await,
        event(EventType::NodeChildrenChanged, &dir)
    );

    // Writes guarded by the lock: a multi of check(lock) + op. The crate sends create2 inside the
    // multi; 3.8 answers with a plain create result, so the Stat is invalid (ZOOKEEPER-4026).
    let data = ctx.path("locks/data");
    let (stat, sequence) = lock.create(&data, b"0", &PERSISTENT).await.unwrap();
    assert!(stat.is_invalid(), "{stat:?}");
    assert_eq!(stat, invalid_stat());
    assert_eq!(sequence.into_i64(), -1);
    let stat = lock.set_data(&data, b"1", Some(0)).await.unwrap();
    assert_eq!((stat.version, stat.data_length), (1, 1));
    assert_eq!(client.get_data(&data).await.unwrap(), (b"1".to_vec(), stat));
    lock.delete(&data, Some(1)).await.unwrap();
    assert_eq!(client.check_stat(&data).await.unwrap(), None);
    assert!(!waiting.is_finished());

    // Release: the waiter gets the lock.
    drop(lock);
    let second = within("the second contender's lock", waiting)
        .await
        .unwrap();
    assert!(second.ends_with("-lock-0000000001"), "{second}");
    assert_eq!(client.check_stat(&path).await.unwrap(), None);

    // A lock whose node vanished guards nothing. A shared prefix does not match the curator
    // nodes, so this contender is first in its own queue.
    let shared = format!("{dir}/shared-");
    let prefix = zk::LockPrefix::new_shared(&shared).unwrap();
    let lock = within("a shared-prefix lock", client.lock(prefix, b"", options()))
        .await
        .unwrap();
    assert_eq!(lock.lock_path(), format!("{dir}/shared-0000000002"));
    client.delete(lock.lock_path(), None).await.unwrap();
    assert_eq!(
        lock.set_data(&dir, b"x", None).await.unwrap_err(),
        Error::RuntimeInconsistent
    );
    assert_eq!(client.get_data(&dir).await.unwrap().1.version, 0);
}
