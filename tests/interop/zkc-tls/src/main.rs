//! `zkc-tls HOST:PORT --certs DIR`: the `zookeeper-client` crate (feature `tls`) against a
//! server's TLS port, with the test certificates `shepherd tls make-test-certs DIR` writes
//! (docs/security.md, "Test certificates"). Run against Shepherd and real ZooKeeper 3.8 alike by
//! .ci/zkc-tls.sh; both must require a client certificate (`ssl.clientAuth=need`).
//!
//! Cases, each counted once: a session over TLS with the test CA and the client certificate;
//! `whoami` names the certificate's subject `x509:CN=client,O=Shepherd` (ZooKeeper 3.8
//! `X509AuthenticationProvider.java`); create, get and delete of a node; an ACL on that x509
//! identity set and read back, readable by its owner and refused (NoAuth) to a session with
//! another trusted certificate; and two refusals: a client whose trust anchor is not the CA that
//! signed the server, and a client certificate from a CA the server does not trust.
//!
//! Prints one line per case and `zkc-tls: N passed, M failed`; exits 1 if any failed, 2 on
//! bad arguments or unreadable certificate files. Every network step is bounded by a timeout,
//! so a server that never answers fails a case instead of hanging the run.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use zookeeper_client::{Acl, Acls, AuthId, Client, CreateMode, Error, Permission, TlsOptions};

/// The subject of `client.pem`, as ZooKeeper's x509 provider names it.
const CLIENT_ID: &str = "CN=client,O=Shepherd";
/// Bounds every connect and request: generous for a loaded CI machine, short enough that a
/// silent server fails the case rather than the job's time limit.
const STEP_TIMEOUT: Duration = Duration::from_secs(15);

/// The PEM files of the test certificate directory, read once.
struct Certs {
    ca: String,
    client: (String, String),
    other: (String, String),
    untrusted: (String, String),
}

impl Certs {
    fn read(dir: &Path) -> Result<Self, String> {
        let read = |name: &str| {
            std::fs::read_to_string(dir.join(name))
                .map_err(|error| format!("{}: {error}", dir.join(name).display()))
        };
        let pair = |name: &str| {
            Ok::<_, String>((
                read(&format!("{name}.pem"))?,
                read(&format!("{name}-key.pem"))?,
            ))
        };
        Ok(Self {
            ca: read("ca.pem")?,
            client: pair("client")?,
            other: pair("other")?,
            untrusted: pair("untrusted")?,
        })
    }
}

/// Counts and prints case outcomes.
#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
}

impl Tally {
    fn record(&mut self, name: &str, outcome: Result<(), String>) {
        match outcome {
            Ok(()) => {
                self.passed += 1;
                println!("zkc-tls: ok   {name}");
            }
            Err(why) => {
                self.failed += 1;
                println!("zkc-tls: FAIL {name}: {why}");
            }
        }
    }
}

/// Runs `step` under [`STEP_TIMEOUT`], turning both a timeout and a client error into text.
async fn bounded<T>(what: &str, step: impl Future<Output = Result<T, Error>>) -> Result<T, String> {
    match tokio::time::timeout(STEP_TIMEOUT, step).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(format!("{what}: {error}")),
        Err(_) => Err(format!("{what}: no answer within {STEP_TIMEOUT:?}")),
    }
}

/// TLS options trusting `ca` and presenting `identity` (certificate, key).
fn tls_options(ca: &str, identity: &(String, String)) -> Result<TlsOptions, String> {
    TlsOptions::new()
        .with_pem_ca(ca)
        .and_then(|options| options.with_pem_identity(&identity.0, &identity.1))
        .map_err(|error| format!("TLS options: {error}"))
}

/// Connects over TLS, bounded by [`STEP_TIMEOUT`].
async fn connect(server: &str, options: TlsOptions) -> Result<Client, String> {
    bounded("connect", connect_raw(server, options)).await
}

/// Passes if the server (or the client's own verification) refuses the session.
async fn refused(server: &str, options: Result<TlsOptions, String>) -> Result<(), String> {
    let options = options?;
    match tokio::time::timeout(STEP_TIMEOUT, connect_raw(server, options)).await {
        Ok(Err(error)) => {
            // The reason, so that a log shows which side refused.
            println!("zkc-tls:      (refused: {error})");
            Ok(())
        }
        Ok(Ok(_)) => Err("the session was established".to_string()),
        Err(_) => Err(format!(
            "neither refused nor established within {STEP_TIMEOUT:?}"
        )),
    }
}

/// `fail_eagerly` makes a refused handshake an error instead of a retry loop.
async fn connect_raw(server: &str, options: TlsOptions) -> Result<Client, Error> {
    Client::connector()
        .with_tls(options)
        .with_session_timeout(Duration::from_secs(10))
        .with_connection_timeout(Duration::from_secs(5))
        .with_fail_eagerly()
        .secure_connect(server)
        .await
}

/// `whoami` includes the client certificate's x509 identity.
async fn whoami(client: &Client) -> Result<(), String> {
    let users = bounded("whoami", client.list_auth_users()).await?;
    if users
        .iter()
        .any(|user| user.scheme() == "x509" && user.user() == CLIENT_ID)
    {
        Ok(())
    } else {
        let names: Vec<String> = users
            .iter()
            .map(|user| format!("{}:{}", user.scheme(), user.user()))
            .collect();
        Err(format!("whoami is {names:?}, expected x509:{CLIENT_ID}"))
    }
}

async fn create_get(client: &Client, path: &str) -> Result<(), String> {
    let data = b"over tls";
    bounded(
        "create",
        client.create(
            path,
            data,
            &CreateMode::Persistent.with_acls(Acls::anyone_all()),
        ),
    )
    .await?;
    let (read, _) = bounded("get", client.get_data(path)).await?;
    if read == data {
        Ok(())
    } else {
        Err(format!("get returned {read:?}, expected {data:?}"))
    }
}

/// Sets `x509:CN=client,O=Shepherd` with every permission, reads it back, and reads the node
/// as that identity.
async fn x509_acl(client: &Client, path: &str) -> Result<(), String> {
    let acl = [Acl::new(Permission::ALL, AuthId::new("x509", CLIENT_ID))];
    bounded("setACL", client.set_acl(path, &acl, None)).await?;
    let (read, _) = bounded("getACL", client.get_acl(path)).await?;
    if read.as_slice() != acl.as_slice() {
        return Err(format!("getACL returned {read:?}, expected {acl:?}"));
    }
    bounded("get as the ACL's identity", client.get_data(path))
        .await
        .map(|_| ())
}

/// A session with another trusted certificate (CN=other) may not read the x509-only node.
async fn other_refused(server: &str, certs: &Certs, path: &str) -> Result<(), String> {
    let other = connect(server, tls_options(&certs.ca, &certs.other)?).await?;
    match tokio::time::timeout(STEP_TIMEOUT, other.get_data(path)).await {
        Ok(Err(Error::NoAuth)) => Ok(()),
        Ok(Err(error)) => Err(format!("get as CN=other: {error}, expected NoAuth")),
        Ok(Ok(_)) => Err("get as CN=other succeeded, expected NoAuth".to_string()),
        Err(_) => Err(format!(
            "get as CN=other: no answer within {STEP_TIMEOUT:?}"
        )),
    }
}

async fn delete(client: &Client, path: &str) -> Result<(), String> {
    bounded("delete", client.delete(path, None)).await?;
    match bounded("exists", client.check_stat(path)).await? {
        None => Ok(()),
        Some(_) => Err("the node is still there after delete".to_string()),
    }
}

async fn run(server: &str, certs: &Certs) -> Tally {
    let mut tally = Tally::default();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|since| since.as_nanos())
        .unwrap_or(0);
    let path = format!("/zkc-tls-{}-{nanos}", std::process::id());

    let session = match tls_options(&certs.ca, &certs.client) {
        Ok(options) => connect(server, options).await,
        Err(why) => Err(why),
    };
    let client = match session {
        Ok(client) => {
            tally.record("session over TLS with a client certificate", Ok(()));
            Some(client)
        }
        Err(why) => {
            tally.record("session over TLS with a client certificate", Err(why));
            None
        }
    };
    if let Some(client) = &client {
        tally.record(
            "whoami names x509:CN=client,O=Shepherd",
            whoami(client).await,
        );
        let created = create_get(client, &path).await;
        let made = created.is_ok();
        tally.record("create and get", created);
        if made {
            let acl = x509_acl(client, &path).await;
            let acl_set = acl.is_ok();
            tally.record(
                "setACL x509:CN=client,O=Shepherd, getACL reads it back",
                acl,
            );
            if acl_set {
                tally.record(
                    "another certificate (CN=other) gets NoAuth",
                    other_refused(server, certs, &path).await,
                );
            }
            tally.record("delete", delete(client, &path).await);
        }
    }

    // The only trust anchor is untrusted.pem, a certificate the server's does not chain to
    // (make-test-certs keeps the untrusted CA itself to itself), so the client's own
    // verification refuses the handshake.
    tally.record(
        "a client trusting another CA is refused",
        refused(server, tls_options(&certs.untrusted.0, &certs.client)).await,
    );
    // With ssl.clientAuth=need the server refuses a certificate its trust store cannot verify.
    tally.record(
        "a client certificate from an untrusted CA is refused",
        refused(server, tls_options(&certs.ca, &certs.untrusted)).await,
    );
    tally
}

fn parse_args() -> Result<(String, PathBuf), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [server, flag, dir] if flag == "--certs" => Ok((server.clone(), PathBuf::from(dir))),
        _ => Err("usage: zkc-tls HOST:PORT --certs DIR".to_string()),
    }
}

fn main() -> ExitCode {
    let (server, dir) = match parse_args() {
        Ok(args) => args,
        Err(usage) => {
            eprintln!("{usage}");
            return ExitCode::from(2);
        }
    };
    let certs = match Certs::read(&dir) {
        Ok(certs) => certs,
        Err(why) => {
            eprintln!("zkc-tls: {why}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("zkc-tls: tokio runtime: {error}");
            return ExitCode::from(2);
        }
    };
    let tally = runtime.block_on(run(&server, &certs));
    println!("zkc-tls: {} passed, {} failed", tally.passed, tally.failed);
    if tally.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
