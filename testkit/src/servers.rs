//! The servers a test body runs against: the embedded Shepherd server always, and real
//! ZooKeeper as well when `SHEPHERD_REAL_ZK=host:port` is set (`source .ci/real-zk.sh` starts
//! one and sets it).
//!
//! Invariant: the embedded server is configured as `.ci/real-zk.sh` configures real ZooKeeper
//! (tickTime 2000, TTL nodes enabled, every four-letter word, the container and TTL reaper every
//! second), so that one test body holds on both. Each call to [`servers`] starts a fresh embedded
//! server; real ZooKeeper is shared by every test and run, hence [`unique`](crate::unique).

use std::sync::Arc;
use std::time::Duration;

use shepherd_server::tls::{ServerTls, TestPki};
use shepherd_server::{Server, ServerBuilder};

/// A server to test against.
#[derive(Clone, Debug)]
pub struct TestServer {
    /// `"shepherd"` or `"zookeeper"`, for messages.
    pub name: &'static str,
    /// `host:port` (no chroot).
    pub connect: String,
    /// The embedded server (`None` for real ZooKeeper). Shared, so that a test may hand a copy
    /// of its server to a task.
    embedded: Option<Arc<Server>>,
}

impl TestServer {
    /// The embedded server's handle, with its test controls; `None` on real ZooKeeper.
    pub fn embedded(&self) -> Option<&Server> {
        self.embedded.as_deref()
    }

    /// Stops the embedded server (real ZooKeeper is left running).
    pub async fn shutdown(&self) {
        if let Some(server) = &self.embedded {
            server.shutdown().await;
        }
    }
}

/// Real ZooKeeper's connect string, when `SHEPHERD_REAL_ZK` names one.
pub fn real_zookeeper() -> Option<String> {
    std::env::var("SHEPHERD_REAL_ZK")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// A builder for the embedded server, configured like `.ci/real-zk.sh`'s ZooKeeper.
pub fn embedded_builder() -> ServerBuilder {
    Server::builder()
        .tick_time(Duration::from_millis(2000))
        .all_four_letter_words()
        .container_check_interval(Duration::from_secs(1))
        .with_config(|config| config.core.extended_types_enabled = true)
}

/// A fresh embedded server, as a [`TestServer`].
pub async fn embedded() -> TestServer {
    let server = embedded_builder()
        .start()
        .await
        .expect("the embedded server starts");
    TestServer {
        name: "shepherd",
        connect: server.connect_string(),
        embedded: Some(Arc::new(server)),
    }
}

/// A server with every four-letter word and otherwise the builder's defaults, on a free loopback
/// port: what the wire-level and hostile-client tests speak to.
pub async fn all_words_server() -> Server {
    Server::builder()
        .all_four_letter_words()
        .start()
        .await
        .expect("server starts")
}

/// The embedded server ([`embedded_builder`]) with TLS on a secure port beside the plain one
/// (client certificates signed by `pki`'s CA needed) and `alice` (password `alice-secret`) as a
/// SASL DIGEST-MD5 user; returns it and the secure port's address.
pub async fn secured_embedded(pki: &TestPki) -> (Server, String) {
    let tls = ServerTls::from_pem(pki.server.cert_pem.clone(), pki.server.key_pem.clone())
        .client_ca_pem(pki.ca_pem.clone());
    let server = embedded_builder()
        .tls(tls)
        .sasl_user("alice", "alice-secret")
        .start()
        .await
        .expect("the secured server starts");
    let secure = server.secure_addr().expect("a secure port").to_string();
    (server, secure)
}

/// Real ZooKeeper as a [`TestServer`], for a test that was asked to run there
/// ([`on_both_servers!`](crate::on_both_servers)'s `on_real_zookeeper`).
///
/// # Panics
/// When `SHEPHERD_REAL_ZK` is not set: such a test is ignored unless asked for, and asked for
/// without a server it must fail, never pass having run nothing.
pub fn real_zookeeper_server() -> TestServer {
    let connect = real_zookeeper().expect(
        "SHEPHERD_REAL_ZK is not set: this test runs on a real ZooKeeper \
         (`source .ci/real-zk.sh` starts one and sets it); without one, run it not at all \
         (leave out --ignored and --include-ignored)",
    );
    TestServer {
        name: "zookeeper",
        connect,
        embedded: None,
    }
}

/// One test body as two tests: `NAME::on_shepherd`, on a fresh embedded server
/// ([`embedded`](crate::embedded)), and `NAME::on_real_zookeeper`, on the real ZooKeeper
/// `SHEPHERD_REAL_ZK` names ([`real_zookeeper_server`](crate::real_zookeeper_server)).
///
/// The second is `#[ignore]`d, so that a machine without ZooKeeper reports it as ignored rather
/// than as passed; CI, which starts one, runs it with `--ignored on_real_zookeeper`. The body
/// sees the server under the name given in place of the argument; the attributes (the test
/// attribute first) apply to both.
///
/// ```ignore
/// on_both_servers! {
///     #[tokio::test]
///     async fn create_in_every_mode(server) {
///         let zk = connect(&server.connect).await;
///     }
/// }
/// ```
#[macro_export]
macro_rules! on_both_servers {
    ($(#[$attr:meta])* async fn $name:ident($server:ident) $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            $(#[$attr])*
            async fn on_shepherd() {
                let $server = $crate::embedded().await;
                $body
            }

            $(#[$attr])*
            #[ignore = "needs SHEPHERD_REAL_ZK=host:port (source .ci/real-zk.sh)"]
            async fn on_real_zookeeper() {
                let $server = $crate::real_zookeeper_server();
                $body
            }
        }
    };
}

/// Every server a test body runs against: a fresh embedded Shepherd server first, then real
/// ZooKeeper if `SHEPHERD_REAL_ZK` is set (a note on stderr says so when it is not). Prefer
/// [`on_both_servers!`](crate::on_both_servers), which reports the second as ignored when it
/// cannot run.
pub async fn servers() -> Vec<TestServer> {
    let mut out = vec![embedded().await];
    match real_zookeeper() {
        Some(connect) => out.push(TestServer {
            name: "zookeeper",
            connect,
            embedded: None,
        }),
        None => eprintln!("note: SHEPHERD_REAL_ZK is not set; skipping the real ZooKeeper runs"),
    }
    out
}
