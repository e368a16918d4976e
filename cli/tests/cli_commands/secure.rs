//! The client commands over TLS and SASL DIGEST-MD5: certificates as PEM, PKCS#12 or a zkCli
//! client configuration file, SASL from `--auth sasl:…` or a JAAS `Client` section, against the
//! embedded server with a secure port and a SASL user (`secured_embedded`). What is refused:
//! TLS without trust roots, a wrong SASL password, SASL through `addauth`.

use shepherd_server::tls::{TEST_PASSWORD, TestPki};
use shepherd_testkit::secured_embedded;

use crate::run;

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_and_sasl_from_flags_a_client_config_and_a_jaas_file() {
    let pki = TestPki::generate().expect("pki");
    let dir = tempfile::tempdir().expect("dir");
    pki.write_to(dir.path()).expect("write the pki");
    let (server, secure) = secured_embedded(&pki).await;
    let file = |name: &str| dir.path().join(name).display().to_string();

    // PEM flags, and a SASL identity the server reports back.
    let pem = [
        "--tls-ca",
        &file("ca.pem"),
        "--tls-cert",
        &file("client.pem"),
        "--tls-key",
        &file("client-key.pem"),
    ];
    let who = run(
        &secure,
        &[
            &["addauth", "--json", "digest:bob:pw"][..],
            &pem,
            &["--auth", "sasl:alice:alice-secret"],
        ]
        .concat(),
    )
    .await;
    let json = who.json();
    let identities = json.to_string();
    assert!(
        identities.contains("\"sasl\"") && identities.contains("alice"),
        "{identities}"
    );
    assert!(
        identities.contains("\"x509\""),
        "the certificate is an identity: {identities}"
    );
    assert!(
        identities.contains("\"digest\""),
        "addauth's one-word form: {identities}"
    );

    // A PKCS#12 client key store with its password.
    let p12 = [
        "--tls-ca",
        &file("truststore.p12"),
        "--tls-cert",
        &file("client.p12"),
        "--tls-password",
        TEST_PASSWORD,
    ];
    assert_eq!(
        run(&secure, &[&["ls", "/"][..], &p12].concat()).await.ok(),
        "zookeeper\n"
    );

    // zkCli's client configuration file and a JAAS Client section.
    let config = write(
        dir.path(),
        "client.properties",
        &format!(
            "zookeeper.client.secure=true\n\
             zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty\n\
             zookeeper.ssl.keyStore.location={}\nzookeeper.ssl.keyStore.password={TEST_PASSWORD}\n\
             zookeeper.ssl.trustStore.location={}\nzookeeper.ssl.trustStore.password={TEST_PASSWORD}\n",
            file("client.p12"),
            file("truststore.p12")
        ),
    );
    let jaas = write(
        dir.path(),
        "jaas.conf",
        "Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n  \
         username=\"alice\"\n  password=\"alice-secret\";\n};\n",
    );
    let via_files = run(
        &secure,
        &[
            "addauth",
            "--json",
            "digest:carol:pw",
            "--client-config",
            &config,
            "--jaas",
            &jaas,
        ],
    )
    .await;
    assert!(
        via_files.json().to_string().contains("alice"),
        "{via_files:?}"
    );

    // Refused: TLS with no trust roots; a wrong SASL password; SASL through addauth.
    let no_roots = run(
        &secure,
        &[
            "ls",
            "/",
            "--tls-cert",
            &file("client.p12"),
            "--tls-password",
            TEST_PASSWORD,
        ],
    )
    .await;
    assert_eq!(no_roots.code, Some(2), "{no_roots:?}");
    assert!(no_roots.stderr.contains("--tls-ca"), "{no_roots:?}");
    let wrong = run(
        &secure,
        &[&["ls", "/"][..], &pem, &["--auth", "sasl:alice:nope"]].concat(),
    )
    .await;
    assert_eq!(wrong.code, Some(1), "{wrong:?}");
    assert!(wrong.stderr.contains("AuthFailed"), "{wrong:?}");
    let late = run(
        &secure,
        &[&["addauth", "sasl:alice:alice-secret"][..], &pem].concat(),
    )
    .await;
    assert_eq!(late.code, Some(2), "{late:?}");
    server.shutdown().await;
}
