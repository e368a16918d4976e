//! Interop tests through a client nobody on the team wrote: the `zookeeper-client` crate
//! (kezhuw, 0.11) on tokio.
//!
//! Every test body is written once and is two tests ([`shepherd_testkit::on_both_servers!`]):
//! `NAME::on_shepherd` on the embedded Shepherd server, and `NAME::on_real_zookeeper` on the real
//! ZooKeeper `SHEPHERD_REAL_ZK=host:port` names (start one with `source .ci/real-zk.sh`), ignored
//! where there is none. Each run works under its own unique root path, so runs never collide on
//! a shared real server.
//!
//! The reference is ZooKeeper 3.8 (`docs/protocol.md`; the § numbers below are its sections).
//! Where the crate assumes 3.9 (§17), the assertions state the 3.8 truth as a user of the crate
//! sees it, with a comment.
//!
//! No sleeps: conditions are awaited as events, each bounded by [`shepherd_testkit::WAIT`].
//! "Nothing happened" is asserted after a round trip on the same connection: a server delivers
//! the notifications of a change before the reply of any later request on that connection
//! (§9.6), and the crate dispatches notifications to watchers before it completes the later
//! reply.
//!
//! This file holds the per-run context and the vocabulary every module shares; `watching`
//! holds the ways to look at watches and events; each other module is one area of the API.

mod acl;
mod chroot;
mod config;
mod create;
mod lock_recipe;
mod multi;
mod nodes;
mod oneshot_watches;
mod ordering;
mod persistent_watches;
mod sessions;
mod watching;

use std::future::Future;
use std::time::Duration;

use shepherd_testkit::{Proxy, TestServer, WAIT, panic_message, unique, within};
use zookeeper_client::{
    self as zk, Acl, Acls, AddWatchMode, AuthId, AuthUser, CheckWriteError, CreateMode,
    CreateOptions, EnsembleUpdate, Error, EventType, MultiReadResult, MultiWriteError,
    MultiWriteResult, Permission, SessionState, Stat, WatchedEvent,
};

use watching::*;

const PERSISTENT: CreateOptions<'static> = CreateMode::Persistent.with_acls(Acls::anyone_all());
const EPHEMERAL: CreateOptions<'static> = CreateMode::Ephemeral.with_acls(Acls::anyone_all());
const SEQUENTIAL: CreateOptions<'static> =
    CreateMode::PersistentSequential.with_acls(Acls::anyone_all());
const CONTAINER: CreateOptions<'static> = CreateMode::Container.with_acls(Acls::anyone_all());
const HOUR: Duration = Duration::from_secs(3600);

/// `alice:secret` as a digest identity: `user:base64(sha1("user:password"))` (§12.4).
const ALICE: &[u8] = b"alice:secret";
const ALICE_ID: &str = "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=";

// ---- The per-run context -------------------------------------------------------------------

/// What a test body gets: the server, and its own root path there.
#[derive(Clone)]
struct Ctx {
    server: TestServer,
    /// `host:port` of the server.
    connect: String,
    root: String,
}

impl Ctx {
    /// An absolute path under this run's root.
    fn path(&self, relative: &str) -> String {
        format!("{}/{relative}", self.root)
    }

    async fn client(&self) -> zk::Client {
        connect(&self.connect).await
    }

    /// A client authenticated as [`ALICE`] from the handshake on.
    async fn alice(&self) -> zk::Client {
        within(
            "connect",
            zk::Client::connector()
                .with_auth("digest", ALICE)
                .connect(&self.connect),
        )
        .await
        .unwrap()
    }

    /// Expires the session of `client`, which is connected through `proxy`.
    ///
    /// Shepherd: `Controls::expire_session`, which expires the session exactly as its
    /// timeout would, closing its connection. Real ZooKeeper has no such hook, and the crate
    /// does not reveal the session password that a take-over would need: the proxy keeps the
    /// client away until the server expires the session on its timeout, seen as the deletion
    /// of an ephemeral marker, and then lets the client back.
    async fn expire(&self, client: &zk::Client, proxy: &Proxy) {
        match self.server.embedded() {
            Some(server) => server.controls().expire_session(client.session_id().0),
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
                proxy.cut_all();
                assert_eq!(
                    within("the expiry marker's NodeDeleted", gone.changed()).await,
                    event(EventType::NodeDeleted, &marker)
                );
                proxy.admit();
            }
        }
    }
}

/// Runs `body` on `server` in a task of its own (so that its panic is reported with the server's
/// name), under a fresh root that is removed afterwards. Each test is two tests, one per server
/// ([`on_both_servers!`]): the real ZooKeeper half is ignored where there is none.
async fn everywhere<F, Fut>(server: TestServer, test: &str, body: F)
where
    F: Fn(Ctx) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let root = unique(&format!("interop-{test}"));
    eprintln!(
        "--- {test} on {} ({}), root {root}",
        server.name, server.connect
    );
    let admin = connect(&server.connect).await;
    admin
        .create(&root, b"", &PERSISTENT)
        .await
        .expect("create the run's root");
    let ctx = Ctx {
        connect: server.connect.clone(),
        root: root.clone(),
        server: server.clone(),
    };
    let outcome = tokio::spawn(body(ctx)).await;
    // Best effort: leave nothing behind on a shared server.
    admin.auth("digest", ALICE).await.ok();
    let _ = tokio::time::timeout(WAIT, remove_tree(&admin, &root)).await;
    drop(admin);
    server.shutdown().await;
    if let Err(error) = outcome {
        panic!("{test} failed on {}: {}", server.name, panic_message(error));
    }
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

async fn connect(connect_string: &str) -> zk::Client {
    within("connect", zk::Client::connect(connect_string))
        .await
        .unwrap_or_else(|e| panic!("connect to {connect_string}: {e}"))
}

// ---- Shared vocabulary ---------------------------------------------------------------------

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
