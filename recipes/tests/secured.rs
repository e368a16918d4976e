//! The lock recipes over secured connections, unchanged: the Curator-style mutex under
//! contention, every session over mutual TLS and authenticated with SASL DIGEST-MD5, the lock's
//! node readable only by the SASL identity.
//!
//! * Always: Shepherd's embedded server with TLS on its secure port (client certificates
//!   needed) and a SASL user.
//! * With `SHEPHERD_REAL_ZK_TLS` (and `SHEPHERD_SECURE_DIR`), as `.ci/real-zk-secure.sh`
//!   exports them: real ZooKeeper's `secureClientPort`, with SASL as well when
//!   `SHEPHERD_REAL_ZK_SASL` says the server has the JAAS users (`SHEPHERD_SASL_USER`,
//!   `SHEPHERD_SASL_PASSWORD`; default `alice`/`alice-secret`).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use shepherd_client::{Acl, Id, perms};
use shepherd_client::{Client, ClientBuilder, CreateOptions};
use shepherd_recipes::{Guard, Lock, LockKind};
use shepherd_server::tls::TestPki;
use shepherd_testkit::{secured_embedded, unique, within};

const CLIENTS: usize = 3;
const ROUNDS: usize = 3;

/// Three secured sessions take the mutex in turn; returns the acquisitions, after checking
/// that no two held it at once. With `owner`, the lock's parent node is readable and writable
/// by that identity only.
async fn contend(secure: impl Fn() -> ClientBuilder, connect: &str, owner: Option<Id>) -> usize {
    let setup = within("connect", secure().connect(connect))
        .await
        .expect("a secured session");
    let path = unique("secured-mutex");
    let root = match owner {
        Some(id) => CreateOptions::persistent().with_acl(vec![Acl {
            perms: perms::ALL,
            id,
        }]),
        None => CreateOptions::persistent(),
    };
    within("root", setup.create(&path, b"", &root))
        .await
        .unwrap();
    let inside = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let client: Client = within("connect", secure().connect(connect))
            .await
            .expect("a secured session");
        let (path, inside, done) = (path.clone(), inside.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..ROUNDS {
                let held = LockKind::Mutex
                    .build(&client, &path)
                    .acquire()
                    .await
                    .unwrap();
                assert_eq!(
                    inside.fetch_add(1, Ordering::SeqCst),
                    0,
                    "two holders at once"
                );
                client.exists("/").await.expect("exists");
                assert_eq!(inside.fetch_sub(1, Ordering::SeqCst), 1);
                done.fetch_add(1, Ordering::SeqCst);
                held.release().await.expect("release");
            }
            client.close().await.expect("close");
        }));
    }
    for task in tasks {
        within("contenders", task).await.expect("contender task");
    }
    setup.close().await.expect("close");
    done.load(Ordering::SeqCst)
}

fn base() -> ClientBuilder {
    Client::builder()
        .session_timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(5))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mutex_over_tls_and_sasl_on_the_embedded_server() {
    let pki = TestPki::generate().expect("test certificates");
    let (server, secure_addr) = secured_embedded(&pki).await;
    let secure = || {
        base()
            .tls_ca_pem(&pki.ca_pem)
            .tls_identity_pem(&pki.client.cert_pem, &pki.client.key_pem)
            .sasl_digest_md5("alice", "alice-secret")
    };
    let owner = Id {
        scheme: "sasl".into(),
        id: "alice".into(),
    };
    let taken = contend(secure, &secure_addr, Some(owner)).await;
    assert_eq!(taken, CLIENTS * ROUNDS);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs SHEPHERD_REAL_ZK_TLS and SHEPHERD_SECURE_DIR (.ci/real-zk-secure.sh)"]
async fn the_mutex_on_secured_real_zookeeper() {
    let addr = std::env::var("SHEPHERD_REAL_ZK_TLS")
        .ok()
        .filter(|a| !a.is_empty())
        .expect("SHEPHERD_REAL_ZK_TLS is not set: run this case under .ci/real-zk-secure.sh");
    let dir = PathBuf::from(std::env::var("SHEPHERD_SECURE_DIR").expect("SHEPHERD_SECURE_DIR"));
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let (ca, cert, key) = (read("ca.pem"), read("client.pem"), read("client-key.pem"));
    let sasl = std::env::var("SHEPHERD_REAL_ZK_SASL").is_ok_and(|a| !a.is_empty());
    let user = std::env::var("SHEPHERD_SASL_USER").unwrap_or_else(|_| "alice".into());
    let password =
        std::env::var("SHEPHERD_SASL_PASSWORD").unwrap_or_else(|_| "alice-secret".into());
    let secure = || {
        let tls = base().tls_ca_pem(&ca).tls_identity_pem(&cert, &key);
        if sasl {
            tls.sasl_digest_md5(&user, &password)
        } else {
            tls
        }
    };
    let owner = sasl.then(|| Id {
        scheme: "sasl".into(),
        id: user.clone(),
    });
    assert_eq!(contend(secure, &addr, owner).await, CLIENTS * ROUNDS);
}
