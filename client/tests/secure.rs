//! The client over TLS and with SASL DIGEST-MD5 against real servers.
//!
//! * Always: Shepherd's embedded server with TLS on its secure port (client certificates
//!   needed) and a SASL DIGEST-MD5 user: the identities both give (`x509`, `sasl`), a wrong
//!   password, and TLS alone.
//! * Always: TLS through testkit's [`TlsFront`] (the test certificates before the embedded
//!   plaintext server), with mutual TLS, reconnects, and the failures a user meets (an
//!   untrusted server, no client certificate, bad PEM).
//! * `SHEPHERD_REAL_ZK_TLS=host:port` (real ZooKeeper's `secureClientPort`, as
//!   `.ci/real-zk-secure.sh` exports it, with `SHEPHERD_SECURE_DIR` holding `ca.pem`,
//!   `client.pem` and `client-key.pem`): a session over TLS with the client certificate.
//! * `SHEPHERD_REAL_ZK_SASL=host:port` (a ZooKeeper with DIGEST-MD5 users from a JAAS `Server`
//!   section; `SHEPHERD_SASL_USER`/`SHEPHERD_SASL_PASSWORD`, default `alice`/`alice-secret`,
//!   must be one of them): the right password reads a node only `sasl:USER` may read, a wrong
//!   one ends in AuthFailed.
//!
//! Real ZooKeeper must not enforce SASL (`enforce.auth.enabled`) for the TLS-only case.
//! The real-server cases are ignored unless asked for (`--ignored`), and fail naming the variable
//! when asked for without it.

use std::path::PathBuf;
use std::time::Duration;

use shepherd_client::{Acl, Client, ClientBuilder, CreateOptions, Error, Id, perms};
use shepherd_server::tls::{CLIENT_SUBJECT, TestPki};
use shepherd_testkit::{TlsFront, embedded, secured_embedded, unique, within};

fn builder() -> ClientBuilder {
    Client::builder()
        .session_timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(5))
}

fn pki() -> TestPki {
    TestPki::generate().expect("test certificates")
}

fn mutual(pki: &TestPki) -> ClientBuilder {
    builder()
        .tls_ca_pem(&pki.ca_pem)
        .tls_identity_pem(&pki.client.cert_pem, &pki.client.key_pem)
}

/// A session over mutual TLS to `addr`, with `pki`'s trusted client certificate.
async fn mutual_session(pki: &TestPki, addr: &str) -> Client {
    within("connect", mutual(pki).connect(addr))
        .await
        .expect("a TLS session")
}

/// An ACL entry granting everything to one identity.
fn only(scheme: &str, id: &str) -> CreateOptions {
    CreateOptions::persistent().with_acl(vec![Acl {
        perms: perms::ALL,
        id: Id {
            scheme: scheme.into(),
            id: id.into(),
        },
    }])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_over_tls_with_sasl_gives_both_identities() {
    let pki = pki();
    let (server, secure) = secured_embedded(&pki).await;
    let client = within(
        "connect",
        mutual(&pki)
            .sasl_digest_md5("alice", "alice-secret")
            .connect(&secure),
    )
    .await
    .expect("a TLS session authenticated with SASL");
    let (by_sasl, by_cert) = (unique("sasl"), unique("x509"));
    within(
        "create",
        client.create(&by_sasl, b"s", &only("sasl", "alice")),
    )
    .await
    .unwrap();
    within(
        "create",
        client.create(&by_cert, b"x", &only("x509", CLIENT_SUBJECT)),
    )
    .await
    .unwrap();
    for path in [&by_sasl, &by_cert] {
        within("get", client.get_data(path))
            .await
            .expect("readable by its owner");
    }
    // The plain port, without either identity: refused both nodes.
    let anonymous = within("connect", builder().connect(&server.connect_string()))
        .await
        .unwrap();
    for path in [&by_sasl, &by_cert] {
        let refused = within("get", anonymous.get_data(path)).await;
        assert!(
            matches!(
                refused,
                Err(Error::Keeper(shepherd_client::ErrorCode::NoAuth))
            ),
            "{path}: {refused:?}"
        );
    }
    within("close", anonymous.close()).await.unwrap();
    within("close", client.close()).await.unwrap();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_refuses_a_wrong_sasl_password_as_auth_failed() {
    let pki = pki();
    let (server, secure) = secured_embedded(&pki).await;
    let wrong = within(
        "connect",
        mutual(&pki)
            .sasl_digest_md5("alice", "not-her-password")
            .connect(&secure),
    )
    .await;
    assert!(matches!(wrong, Err(Error::AuthFailed)), "{wrong:?}");
    let unknown = within(
        "connect",
        builder()
            .sasl_digest_md5("mallory", "x")
            .connect(&server.connect_string()),
    )
    .await;
    assert!(matches!(unknown, Err(Error::AuthFailed)), "{unknown:?}");
    // Nobody else was touched: a TLS session still works.
    let fine = mutual_session(&pki, &secure).await;
    within("exists", fine.exists("/")).await.unwrap();
    within("close", fine.close()).await.unwrap();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_tls_refuses_an_untrusted_client_certificate() {
    let pki = pki();
    let (server, secure) = secured_embedded(&pki).await;
    let untrusted = builder().tls_ca_pem(&pki.ca_pem).tls_identity_pem(
        &pki.untrusted_client.cert_pem,
        &pki.untrusted_client.key_pem,
    );
    let result = within("connect", untrusted.connect(&secure)).await;
    assert!(matches!(result, Err(Error::Io(_))), "{result:?}");
    server.shutdown().await;
}

/// Retries `exists` through the ConnectionLoss of calls racing a cut, until one succeeds on a
/// new connection.
async fn exists_after_cut(client: &Client, path: &str) -> bool {
    for attempt in 0.. {
        match within("exists", client.exists(path)).await {
            Ok(stat) => return stat.is_some(),
            Err(Error::ConnectionLoss) if attempt < 10 => {}
            Err(e) => panic!("exists after the cut: {e}"),
        }
    }
    unreachable!("the loop returns or panics")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_over_mutual_tls_survives_reconnects() {
    let server = embedded().await;
    let pki = pki();
    let front = TlsFront::start(&server.connect, &pki).await;
    let port = front
        .addr
        .rsplit_once(':')
        .map(|(_, p)| p.to_owned())
        .unwrap();
    // Both names the server certificate carries: a DNS name and an IP address.
    for host in ["localhost", "127.0.0.1"] {
        let client = mutual_session(&pki, &format!("{host}:{port}")).await;
        let path = unique("tls");
        within(
            "create",
            client.create(&path, b"sealed", &CreateOptions::ephemeral()),
        )
        .await
        .unwrap();
        let before = front.handshakes();
        front.cut_all();
        // The ephemeral node is still there: the same session, resumed over a new TLS link.
        assert!(exists_after_cut(&client, &path).await, "{host}: node lost");
        assert!(
            front.handshakes() > before,
            "{host}: the reconnect went through TLS"
        );
        let (data, _) = within("get", client.get_data(&path)).await.unwrap();
        assert_eq!(data, b"sealed");
        within("close", client.close()).await.unwrap();
    }
}

/// Requests that outrun the socket's buffers, over TLS: the connection task writes them in
/// pieces as the socket drains (a partial write resumes where it stopped), then flushes the TLS
/// layer, which may hold the last records it encrypted. A lost, repeated or reordered piece
/// breaks the server's framing, and a piece never written leaves a call hanging.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_requests_over_tls_reach_the_server_whole() {
    let server = embedded().await;
    let pki = pki();
    let front = TlsFront::start(&server.connect, &pki).await;
    let client = mutual_session(&pki, &front.addr).await;
    let root = unique("large");
    within(
        "root",
        client.create(&root, b"", &CreateOptions::persistent()),
    )
    .await
    .unwrap();
    // Sixteen creates of nearly jute.maxbuffer (1 MiB) each, pipelined: 16 MB in flight, more
    // than loopback's socket buffers hold, so the writes fill the socket again and again.
    let value: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
    let creates = (0..16).map(|i| {
        let (client, path, value) = (&client, format!("{root}/n{i}"), &value);
        async move {
            client
                .create(&path, value, &CreateOptions::persistent())
                .await
        }
    });
    for created in within("creates", futures_util::future::join_all(creates)).await {
        created.unwrap();
    }
    let (data, _) = within("get", client.get_data(&format!("{root}/n15")))
        .await
        .unwrap();
    assert!(data == value, "the value read back differs");
    within("close", client.close()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_server_fails_the_connect_with_the_reason() {
    let server = embedded().await;
    let front = TlsFront::start(&server.connect, &pki()).await;
    let stranger = pki();
    let result = within("connect", mutual(&stranger).connect(&front.addr)).await;
    match result {
        Err(Error::Io(e)) => {
            let text = e.to_string();
            assert!(text.contains("TLS handshake"), "{text}");
            assert!(text.to_lowercase().contains("certificate"), "{text}");
        }
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_a_certificate_is_refused_not_hung() {
    let server = embedded().await;
    let pki = pki();
    let front = TlsFront::start(&server.connect, &pki).await;
    let result = within(
        "connect",
        builder().tls_ca_pem(&pki.ca_pem).connect(&front.addr),
    )
    .await;
    assert!(matches!(result, Err(Error::Io(_))), "{result:?}");
}

#[tokio::test]
async fn bad_pem_is_a_build_error() {
    // Port 1 is never reached: the options are checked first.
    let garbage = builder()
        .tls_ca_pem("not a certificate")
        .connect("127.0.0.1:1")
        .await;
    assert!(
        matches!(garbage, Err(Error::InvalidArgument(_))),
        "{garbage:?}"
    );
    let pki = pki();
    let bad_key = builder()
        .tls_ca_pem(&pki.ca_pem)
        .tls_identity_pem(&pki.client.cert_pem, "no key here")
        .connect("127.0.0.1:1")
        .await;
    assert!(
        matches!(bad_key, Err(Error::InvalidArgument(_))),
        "{bad_key:?}"
    );
    let bad_name = builder()
        .tls_ca_pem(&pki.ca_pem)
        .tls_server_name("not a name")
        .connect("127.0.0.1:1")
        .await;
    assert!(
        matches!(bad_name, Err(Error::InvalidArgument(_))),
        "{bad_name:?}"
    );
}

/// The address a real-ZooKeeper case needs; such a case is ignored unless asked for, and asked
/// for without it fails saying so.
fn env(name: &str) -> String {
    std::env::var(name)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| panic!("{name} is not set: run this case under .ci/real-zk-secure.sh"))
}

fn secure_file(name: &str) -> Vec<u8> {
    let dir = PathBuf::from(std::env::var("SHEPHERD_SECURE_DIR").expect("SHEPHERD_SECURE_DIR"));
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[tokio::test]
#[ignore = "needs SHEPHERD_REAL_ZK_TLS and SHEPHERD_SECURE_DIR (.ci/real-zk-secure.sh)"]
async fn real_zookeeper_over_tls() {
    let addr = env("SHEPHERD_REAL_ZK_TLS");
    let client = within(
        "connect",
        builder()
            .tls_ca_pem(secure_file("ca.pem"))
            .tls_identity_pem(secure_file("client.pem"), secure_file("client-key.pem"))
            .connect(&addr),
    )
    .await
    .expect("a TLS session on real ZooKeeper");
    let path = unique("tls");
    within(
        "create",
        client.create(&path, b"x", &CreateOptions::ephemeral()),
    )
    .await
    .unwrap();
    let (data, _) = within("get", client.get_data(&path)).await.unwrap();
    assert_eq!(data, b"x");
    within("close", client.close()).await.unwrap();
}

fn sasl_user() -> (String, String) {
    let user = std::env::var("SHEPHERD_SASL_USER").unwrap_or_else(|_| "alice".into());
    let password =
        std::env::var("SHEPHERD_SASL_PASSWORD").unwrap_or_else(|_| "alice-secret".into());
    (user, password)
}

#[tokio::test]
#[ignore = "needs SHEPHERD_REAL_ZK_SASL (.ci/real-zk-secure.sh)"]
async fn real_zookeeper_with_sasl_digest_md5() {
    let addr = env("SHEPHERD_REAL_ZK_SASL");
    let (user, password) = sasl_user();
    let client = within(
        "connect",
        builder().sasl_digest_md5(&user, &password).connect(&addr),
    )
    .await
    .expect("an authenticated session");
    let path = unique("sasl");
    let only_user = only("sasl", &user);
    within("create", client.create(&path, b"mine", &only_user))
        .await
        .unwrap();
    let (data, _) = within("get", client.get_data(&path)).await.unwrap();
    assert_eq!(data, b"mine", "the SASL identity reads its node");

    // Refused by the ACL, or before it with enforce.auth.enabled.
    let anonymous = within("connect", builder().connect(&addr)).await.unwrap();
    let refused = within("get", anonymous.get_data(&path)).await;
    assert!(
        matches!(
            refused,
            Err(Error::Keeper(
                shepherd_client::ErrorCode::NoAuth
                    | shepherd_client::ErrorCode::SessionClosedRequireSaslAuth
            ))
        ),
        "{refused:?}"
    );
    within("delete", client.delete(&path, None)).await.unwrap();
    within("close", anonymous.close()).await.unwrap();
    within("close", client.close()).await.unwrap();

    let wrong = within(
        "connect",
        builder()
            .sasl_digest_md5(&user, &format!("not-{password}"))
            .connect(&addr),
    )
    .await;
    assert!(matches!(wrong, Err(Error::AuthFailed)), "{wrong:?}");
}
