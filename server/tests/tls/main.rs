//! TLS on client connections end to end, over real loopback sockets (docs/security.md, "TLS"):
//! sessions over TLS with our own client, client certificates (need, refused, untrusted), the
//! x509 ACL scheme, plaintext on the TLS port, port unification, key stores from zoo.cfg (PEM,
//! PKCS12, and JKS files made by keytool), a stalled handshake, the handshake limit, and garbage on the TLS port.
//!
//! Every wait is bounded: the client's connect timeout, or `tokio::time::timeout` on a read.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use shepherd_client::{Acl, Client, CreateOptions, Error, ErrorCode, Id, perms};
use shepherd_server::config::ClientAuth;
use shepherd_server::tls::{CLIENT_SUBJECT, ServerTls, TestCert, TestPki};
use shepherd_server::{Config, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore};

/// How long any one wait may take before the test fails.
const BOUND: Duration = Duration::from_secs(20);

async fn server(pki: &TestPki, tls: impl FnOnce(ServerTls) -> ServerTls) -> Server {
    let base = ServerTls::from_pem(pki.server.cert_pem.clone(), pki.server.key_pem.clone())
        .client_ca_pem(pki.ca_pem.clone());
    Server::builder()
        .tls(tls(base))
        .start()
        .await
        .expect("server starts")
}

async fn tls_client(
    pki: &TestPki,
    addr: SocketAddr,
    cert: Option<&TestCert>,
) -> Result<Client, Error> {
    let mut builder = Client::builder()
        .connect_timeout(Duration::from_secs(5))
        .tls_ca_pem(&pki.ca_pem);
    if let Some(cert) = cert {
        builder = builder.tls_identity_pem(&cert.cert_pem, &cert.key_pem);
    }
    builder.connect(&addr.to_string()).await
}

fn rustls_config(pki: &TestPki, cert: Option<&TestCert>) -> Arc<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from(pki.ca_der.clone()))
        .expect("the CA");
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots);
    Arc::new(match cert {
        Some(cert) => builder
            .with_client_auth_cert(
                CertificateDer::pem_slice_iter(cert.cert_pem.as_bytes())
                    .collect::<Result<Vec<_>, _>>()
                    .expect("chain"),
                PrivateKeyDer::from_pem_slice(cert.key_pem.as_bytes()).expect("key"),
            )
            .expect("client cert"),
        None => builder.with_no_client_auth(),
    })
}

/// A four-letter word over TLS: its answer, or `None` when the connection fails or closes
/// without one.
async fn tls_word(
    pki: &TestPki,
    addr: SocketAddr,
    cert: Option<&TestCert>,
    word: &[u8],
) -> Option<String> {
    let connector = TlsConnector::from(rustls_config(pki, cert));
    let tcp = TcpStream::connect(addr).await.ok()?;
    let name = ServerName::try_from("localhost").expect("name");
    let mut tls = tokio::time::timeout(BOUND, connector.connect(name, tcp))
        .await
        .expect("handshake bounded")
        .ok()?;
    tls.write_all(word).await.ok()?;
    let mut out = Vec::new();
    let read = tokio::time::timeout(BOUND, tls.read_to_end(&mut out))
        .await
        .expect("answer bounded");
    // A peer that closes without close_notify after the answer is still an answer.
    if read.is_err() && out.is_empty() {
        return None;
    }
    Some(String::from_utf8_lossy(&out).into_owned()).filter(|s| !s.is_empty())
}

/// Reads until the server closes: true when it does within the bound.
async fn closed(mut tcp: TcpStream) -> bool {
    let mut buf = [0u8; 256];
    let ended = tokio::time::timeout(BOUND, async {
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    ended.is_ok()
}

fn secure(server: &Server) -> SocketAddr {
    server.secure_addr().expect("a secure port")
}

#[tokio::test]
async fn a_session_over_tls_works_and_its_certificate_is_an_x509_identity() {
    let pki = TestPki::generate().expect("pki");
    let server = server(&pki, |t| t).await;
    assert_ne!(
        secure(&server),
        server.local_addr(),
        "beside the plain port"
    );
    let client = tls_client(&pki, secure(&server), Some(&pki.client))
        .await
        .expect("a TLS session");
    client
        .create("/a", b"over tls", &CreateOptions::persistent())
        .await
        .expect("create");
    assert_eq!(client.get_data("/a").await.expect("get").0, b"over tls");
    let who = client.who_am_i().await.expect("whoami");
    assert!(
        who.iter()
            .any(|c| c.auth_scheme == "x509" && c.user == CLIENT_SUBJECT),
        "{who:?}"
    );
    // Four-letter words are answered on the secure port too.
    let answer = tls_word(&pki, secure(&server), Some(&pki.client), b"srvr").await;
    assert!(
        answer
            .as_deref()
            .is_some_and(|a| a.starts_with("Zookeeper version")),
        "{answer:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn x509_acls_allow_the_certificate_holder_and_refuse_another() {
    let pki = TestPki::generate().expect("pki");
    let server = server(&pki, |t| t).await;
    let owner = tls_client(&pki, secure(&server), Some(&pki.client))
        .await
        .expect("owner");
    let other = tls_client(&pki, secure(&server), Some(&pki.other_client))
        .await
        .expect("other");
    let only_owner = vec![Acl {
        perms: perms::ALL,
        id: Id::new("x509", CLIENT_SUBJECT),
    }];
    owner
        .create(
            "/owned",
            b"mine",
            &CreateOptions::persistent().with_acl(only_owner),
        )
        .await
        .expect("create with an x509 ACL");
    assert_eq!(
        owner.get_data("/owned").await.expect("owner reads").0,
        b"mine"
    );
    assert!(matches!(
        other.get_data("/owned").await,
        Err(Error::Keeper(ErrorCode::NoAuth))
    ));
    // `auth` expands to the x509 identity: x509 is an authenticated scheme.
    let auth = vec![Acl {
        perms: perms::ALL,
        id: Id::new("auth", ""),
    }];
    owner
        .create("/auth", b"", &CreateOptions::persistent().with_acl(auth))
        .await
        .expect("create with auth");
    let (acl, _) = owner.get_acl("/auth").await.expect("getACL");
    assert_eq!(acl[0].id, Id::new("x509", CLIENT_SUBJECT));
    server.shutdown().await;
}

#[tokio::test]
async fn client_auth_need_refuses_no_or_untrusted_certificates_and_others_go_on() {
    let pki = TestPki::generate().expect("pki");
    let server = server(&pki, |t| t.client_auth(ClientAuth::Need)).await;
    let good = tls_client(&pki, secure(&server), Some(&pki.client))
        .await
        .expect("a session with a trusted certificate");
    good.create("/still", b"", &CreateOptions::persistent())
        .await
        .expect("create");
    assert_eq!(tls_word(&pki, secure(&server), None, b"srvr").await, None);
    let untrusted = tls_word(&pki, secure(&server), Some(&pki.untrusted_client), b"ruok").await;
    assert_eq!(untrusted, None);
    assert!(tls_client(&pki, secure(&server), None).await.is_err());
    assert!(
        good.exists("/still")
            .await
            .expect("the other session goes on")
            .is_some()
    );
    server.shutdown().await;
}

#[tokio::test]
async fn client_auth_want_serves_a_client_without_a_certificate() {
    let pki = TestPki::generate().expect("pki");
    let server = server(&pki, |t| t.client_auth(ClientAuth::Want)).await;
    let anonymous = tls_client(&pki, secure(&server), None)
        .await
        .expect("served");
    let who = anonymous.who_am_i().await.expect("whoami");
    assert!(who.iter().all(|c| c.auth_scheme != "x509"), "{who:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn plaintext_on_the_tls_port_is_closed_and_garbage_never_hurts() {
    let pki = TestPki::generate().expect("pki");
    let server = server(&pki, |t| t).await;
    // A ZooKeeper ConnectRequest's first bytes, and a four-letter word.
    for bytes in [&[0u8, 0, 0, 44, 0, 0, 0, 0][..], b"ruok"] {
        let mut tcp = TcpStream::connect(secure(&server)).await.expect("connect");
        tcp.write_all(bytes).await.expect("write");
        assert!(closed(tcp).await, "closed for {bytes:?}");
    }
    // A TLS record header followed by garbage, and odd lengths: closed, nothing else.
    let mut seed = 0x2545_f491_u32;
    for round in 0..32 {
        let mut junk = vec![0x16, 0x03, (round % 4) as u8];
        for _ in 0..(round * 37 % 600) {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            junk.push(seed as u8);
        }
        let mut tcp = TcpStream::connect(secure(&server)).await.expect("connect");
        let _ = tcp.write_all(&junk).await;
        let _ = tcp.shutdown().await;
        assert!(closed(tcp).await, "closed for round {round}");
    }
    let client = tls_client(&pki, secure(&server), Some(&pki.client))
        .await
        .expect("the server still serves TLS");
    assert!(client.exists("/").await.expect("exists").is_some());
    server.shutdown().await;
}

#[tokio::test]
async fn port_unification_serves_plain_and_tls_on_one_port() {
    let pki = TestPki::generate().expect("pki");
    let server = server(&pki, |t| t.port_unification(true)).await;
    let plain = Client::connect(&server.local_addr().to_string())
        .await
        .expect("plain on the plain port");
    plain
        .create("/p", b"", &CreateOptions::persistent())
        .await
        .expect("create");
    let tls = tls_client(&pki, server.local_addr(), Some(&pki.client))
        .await
        .expect("TLS on the plain port");
    assert!(tls.exists("/p").await.expect("exists").is_some());
    server.shutdown().await;
}

#[tokio::test]
async fn a_secure_only_server_has_no_plain_port() {
    let pki = TestPki::generate().expect("pki");
    let server = server(&pki, |t| t.secure_only()).await;
    assert_eq!(server.secure_addr(), Some(server.local_addr()));
    let tcp = TcpStream::connect(server.local_addr())
        .await
        .expect("connect");
    let mut tcp = tcp;
    tcp.write_all(b"ruok").await.expect("write");
    assert!(closed(tcp).await);
    tls_client(&pki, server.local_addr(), Some(&pki.client))
        .await
        .expect("TLS served");
    server.shutdown().await;
}

fn zoo_cfg(dir: &std::path::Path, lines: &str) -> Config {
    let mut config = Config::default();
    let text = format!("clientPort=0\nsecureClientPort=0\n{lines}")
        .replace("DIR", &dir.display().to_string());
    config.apply_zoo_cfg(&text).expect("zoo.cfg");
    config
}

#[tokio::test]
async fn pkcs12_and_pem_key_stores_load_from_zoo_cfg() {
    let pki = TestPki::generate().expect("pki");
    let dir = tempfile::tempdir().expect("dir");
    pki.write_to(dir.path()).expect("write");
    let combined = format!("{}{}", pki.server.cert_pem, pki.server.key_pem);
    std::fs::write(dir.path().join("keystore.pem"), combined).expect("write");
    for lines in [
        "ssl.keyStore.location=DIR/server.p12\nssl.keyStore.password=shepherd\n\
         ssl.trustStore.location=DIR/truststore.p12\nssl.trustStore.password=shepherd\n",
        "zookeeper.ssl.keyStore.location=DIR/keystore.pem\n\
         zookeeper.ssl.trustStore.location=DIR/ca.pem\nzookeeper.ssl.clientAuth=need\n",
    ] {
        let server = Server::builder()
            .config(zoo_cfg(dir.path(), lines))
            .start()
            .await
            .expect("server starts");
        let client = tls_client(&pki, secure(&server), Some(&pki.client))
            .await
            .expect("a TLS session");
        assert!(client.exists("/").await.expect("exists").is_some());
        assert!(
            tls_client(&pki, secure(&server), None).await.is_err(),
            "need"
        );
        server.shutdown().await;
    }
}

/// JKS, ZooKeeper's default store type, read from files `keytool` wrote (`tests/fixtures/jks/`:
/// an RSA key for `localhost`/127.0.0.1 valid for a century, its certificate as PEM, and a trust
/// store holding it): by the `.jks` extension, by `ssl.keyStore.type`, and by content alone.
#[tokio::test]
async fn jks_stores_written_by_keytool_load_from_zoo_cfg() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jks");
    let dir = tempfile::tempdir().expect("dir");
    std::fs::copy(fixtures.join("server.jks"), dir.path().join("keys.store")).expect("copy");
    let ca = std::fs::read(fixtures.join("server-cert.pem")).expect("the certificate");
    let trust = "ssl.trustStore.location=FIX/truststore.jks\nssl.trustStore.password=shepherd\n\
                 ssl.clientAuth=want\n";
    for keys in [
        "ssl.keyStore.location=FIX/server.jks\nssl.keyStore.password=shepherd\n",
        "ssl.keyStore.location=DIR/keys.store\nssl.keyStore.password=shepherd\n\
         ssl.keyStore.type=JKS\n",
        "ssl.keyStore.location=DIR/keys.store\nssl.keyStore.password=shepherd\n",
    ] {
        let lines = format!("{keys}{trust}").replace("FIX", &fixtures.display().to_string());
        let server = Server::builder()
            .config(zoo_cfg(dir.path(), &lines))
            .start()
            .await
            .unwrap_or_else(|e| panic!("{keys}: {e}"));
        let client = Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .tls_ca_pem(&ca)
            .connect(&secure(&server).to_string())
            .await
            .expect("a TLS session with the JKS key");
        assert!(client.exists("/").await.expect("exists").is_some());
        client.close().await.expect("close");
        server.shutdown().await;
    }
    let wrong = "ssl.keyStore.location=FIX/server.jks\nssl.keyStore.password=nope\n\
                 ssl.clientAuth=none\n"
        .replace("FIX", &fixtures.display().to_string());
    let error = Server::builder()
        .config(zoo_cfg(dir.path(), &wrong))
        .start()
        .await
        .expect_err("a wrong password is refused");
    assert!(
        error.to_string().contains("server.jks")
            && error
                .to_string()
                .contains("not a JKS store this password opens"),
        "{error}"
    );
}

/// ZooKeeper's default `ssl.clientAuth` is `need`, checked against the JVM's trust store; there
/// is none here, so a zoo.cfg with neither a trust store nor `ssl.clientAuth` is refused at start
/// (TLS fails closed), naming the keys to set; `ssl.clientAuth=none` or a trust store starts.
#[test]
fn no_trust_store_under_the_default_client_auth_is_refused_at_start() {
    let pki = TestPki::generate().expect("pki");
    let dir = tempfile::tempdir().expect("dir");
    pki.write_to(dir.path()).expect("write");
    let built = |lines: &str| {
        let config = zoo_cfg(dir.path(), lines);
        shepherd_server::tls::server_config(&config.tls).map(|b| b.map(|(_, warnings)| warnings))
    };
    let keys = "ssl.keyStore.location=DIR/server.p12\nssl.keyStore.password=shepherd\n";
    let refused = built(keys).expect_err("refused without a trust store");
    let message = refused.to_string();
    assert!(
        message.contains("ssl.trustStore.location") && message.contains("ssl.clientAuth=none"),
        "{message}"
    );
    let none = built(&format!("{keys}ssl.clientAuth=none\n")).expect("starts");
    assert_eq!(none.map(|w| w.len()), Some(0));
    let trusted = built(&format!(
        "{keys}ssl.trustStore.location=DIR/truststore.p12\nssl.trustStore.password=shepherd\n"
    ))
    .expect("starts");
    assert_eq!(trusted.map(|w| w.len()), Some(0));
}

#[tokio::test]
async fn bad_key_stores_are_refused_at_start_with_the_reason() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(
        dir.path().join("k.jks"),
        [0xFE, 0xED, 0xFE, 0xED, 0, 0, 0, 2],
    )
    .expect("write");
    std::fs::write(dir.path().join("k.p12"), b"not pkcs12").expect("write");
    for (lines, wanted) in [
        (
            "ssl.keyStore.location=DIR/k.jks\nssl.keyStore.password=shepherd\n",
            "not a JKS store this password opens",
        ),
        (
            "ssl.keyStore.location=DIR/k.p12\nssl.keyStore.password=x\n",
            "PKCS12",
        ),
        ("ssl.keyStore.location=DIR/missing.pem\n", "missing.pem"),
        ("", "no key store"),
    ] {
        let error = Server::builder()
            .config(zoo_cfg(dir.path(), lines))
            .start()
            .await
            .expect_err("refused");
        assert!(
            error
                .get_ref()
                .is_some_and(|e| e.is::<shepherd_server::tls::TlsError>()),
            "{error}"
        );
        assert!(error.to_string().contains(wanted), "{error}");
    }
}

#[tokio::test]
async fn a_stalled_handshake_is_dropped() {
    let pki = TestPki::generate().expect("pki");
    let server = server(&pki, |t| t).await;
    // Half a ClientHello record header, then nothing: closed at HANDSHAKE_IDLE (10 s).
    let mut tcp = TcpStream::connect(secure(&server)).await.expect("connect");
    tcp.write_all(&[0x16, 0x03, 0x01]).await.expect("write");
    let started = std::time::Instant::now();
    assert!(closed(tcp).await, "dropped within the bound");
    assert!(
        started.elapsed() >= Duration::from_secs(9),
        "not before the limit"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_restart_drops_tls_sessions_and_serves_tls_again() {
    let pki = TestPki::generate().expect("pki");
    let server = server(&pki, |t| t).await;
    let before = tls_word(&pki, secure(&server), Some(&pki.client), b"srvr").await;
    assert!(before.is_some());
    let client = tls_client(&pki, secure(&server), Some(&pki.client))
        .await
        .expect("a TLS session");
    tokio::time::timeout(BOUND, server.restart())
        .await
        .expect("the restart does not wait on TLS connections")
        .expect("restarted");
    // The session's client reconnects over TLS on its own.
    assert!(
        client
            .exists("/")
            .await
            .expect("exists after the restart")
            .is_some()
    );
    server.shutdown().await;
}

#[tokio::test]
async fn the_per_address_limit_counts_tls_connections() {
    let pki = TestPki::generate().expect("pki");
    let tls = ServerTls::from_pem(pki.server.cert_pem.clone(), pki.server.key_pem.clone());
    let server = Server::builder()
        .tls(tls)
        .max_client_connections(1)
        .start()
        .await
        .expect("server starts");
    let first = tls_client(&pki, secure(&server), None)
        .await
        .expect("the first TLS session");
    // A second connection from the same address is closed before its handshake.
    let tcp = TcpStream::connect(secure(&server)).await.expect("connect");
    assert!(closed(tcp).await);
    assert!(
        first
            .exists("/")
            .await
            .expect("the first goes on")
            .is_some()
    );
    server.shutdown().await;
}

/// `netty.server.outstandingHandshake.limit`: over the cap a connection is closed before its
/// handshake; once the handshake holding the place ends, the next one is served.
#[tokio::test]
async fn the_handshake_limit_refuses_connections_over_it() {
    let pki = TestPki::generate().expect("pki");
    let dir = tempfile::tempdir().expect("dir");
    pki.write_to(dir.path()).expect("write");
    let config = zoo_cfg(
        dir.path(),
        "ssl.keyStore.location=DIR/server.p12\nssl.keyStore.password=shepherd\n\
         ssl.clientAuth=none\nnetty.server.outstandingHandshake.limit=1\n",
    );
    let server = Server::builder()
        .config(config)
        .start()
        .await
        .expect("server starts");
    // Half a ClientHello record header, then nothing: it holds the only place.
    let mut stalled = TcpStream::connect(secure(&server)).await.expect("connect");
    stalled.write_all(&[0x16, 0x03, 0x01]).await.expect("write");
    // Its task may not have taken the place yet: wait until a handshake is refused.
    let mut refused = false;
    for _ in 0..100 {
        if tls_word(&pki, secure(&server), None, b"srvr")
            .await
            .is_none()
        {
            refused = true;
            break;
        }
    }
    assert!(
        refused,
        "a second handshake is refused while the first holds the place"
    );
    drop(stalled);
    // The server sees the close and gives the place back; bounded by count, not by sleeping.
    let mut served = None;
    for _ in 0..100 {
        served = tls_word(&pki, secure(&server), None, b"srvr").await;
        if served.is_some() {
            break;
        }
    }
    assert!(served.is_some(), "served once the place is free");
    server.shutdown().await;
}

/// Against real ZooKeeper 3.8, named by `SHEPHERD_REAL_ZK_TLS` (its secureClientPort) and
/// `SHEPHERD_SECURE_DIR` (the test certificates it was started with, `.ci/real-zk-secure.sh`);
/// ignored unless asked for: its `whoami` names our client certificate exactly as Shepherd does.
#[tokio::test]
#[ignore = "needs SHEPHERD_REAL_ZK_TLS and SHEPHERD_SECURE_DIR (.ci/real-zk-secure.sh)"]
async fn real_zookeeper_names_the_client_certificate_as_shepherd_does() {
    let (Ok(addr), Ok(dir)) = (
        std::env::var("SHEPHERD_REAL_ZK_TLS"),
        std::env::var("SHEPHERD_SECURE_DIR"),
    ) else {
        panic!(
            "SHEPHERD_REAL_ZK_TLS or SHEPHERD_SECURE_DIR is not set: run under .ci/real-zk-secure.sh"
        );
    };
    let read = |name: &str| std::fs::read(format!("{dir}/{name}")).expect("a test certificate");
    let client = Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .tls_ca_pem(read("ca.pem"))
        .tls_identity_pem(read("client.pem"), read("client-key.pem"))
        .connect(&addr)
        .await
        .expect("a TLS session with real ZooKeeper");
    let who = client.who_am_i().await.expect("whoami");
    assert!(
        who.iter()
            .any(|c| c.auth_scheme == "x509" && c.user == CLIENT_SUBJECT),
        "{who:?}"
    );
}
