//! The lock recipes over secured connections, unchanged: the Curator-style mutex under
//! contention, every session over mutual TLS (and SASL DIGEST-MD5 where the server offers it).
//!
//! * Always: through testkit's `TlsFront` (the test certificates before the embedded server).
//! * With `SHEPHERD_REAL_ZK_TLS` (and `SHEPHERD_SECURE_DIR`), as `.ci/real-zk-secure.sh`
//!   exports them: real ZooKeeper's `secureClientPort`, with SASL as well when
//!   `SHEPHERD_REAL_ZK_SASL` says the server has the JAAS users (`SHEPHERD_SASL_USER`,
//!   `SHEPHERD_SASL_PASSWORD`; default `alice`/`alice-secret`).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use shepherd_client::{Client, ClientBuilder, CreateOptions};
use shepherd_recipes::{Guard, Lock, LockKind};
use shepherd_server::tls::TestPki;
use shepherd_testkit::{TlsFront, embedded, unique, within};

const CLIENTS: usize = 3;
const ROUNDS: usize = 3;

/// Three secured sessions take the mutex in turn; returns the acquisitions, after checking
/// that no two held it at once.
async fn contend(secure: impl Fn() -> ClientBuilder, connect: &str) -> usize {
    let setup = within("connect", secure().connect(connect))
        .await
        .expect("a secured session");
    let path = unique("secured-mutex");
    within(
        "root",
        setup.create(&path, b"", &CreateOptions::persistent()),
    )
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
async fn the_mutex_over_mutual_tls() {
    let server = embedded().await;
    let pki = TestPki::generate().expect("test certificates");
    let front = TlsFront::start(&server.connect, &pki).await;
    let secure = || {
        base()
            .tls_ca_pem(&pki.ca_pem)
            .tls_identity_pem(&pki.client.cert_pem, &pki.client.key_pem)
    };
    assert_eq!(contend(secure, &front.addr).await, CLIENTS * ROUNDS);
    assert!(
        front.handshakes() > CLIENTS,
        "every session came through TLS"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mutex_on_secured_real_zookeeper() {
    let Some(addr) = std::env::var("SHEPHERD_REAL_ZK_TLS")
        .ok()
        .filter(|a| !a.is_empty())
    else {
        eprintln!("SHEPHERD_REAL_ZK_TLS is not set: skipping the real ZooKeeper case");
        return;
    };
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
    assert_eq!(contend(secure, &addr).await, CLIENTS * ROUNDS);
}
