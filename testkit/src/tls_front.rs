//! A TLS front for a plaintext server: a loopback listener that accepts TLS with the test
//! certificates (`shepherd_server::tls::TestPki`), requires a client certificate signed by the
//! test CA, and forwards the decrypted bytes unchanged to an upstream `host:port`. It lets a
//! client's TLS be tested against any plain server, the embedded one included.
//!
//! Invariants: it listens on a fresh loopback port (port 0); each connection's bytes are copied
//! through tokio's bounded buffers (back-pressure, not piling up); [`TlsFront::cut_all`] and
//! dropping the front end every connection through aborts, never through sleeping; every
//! completed TLS handshake is counted, so a test can see a reconnect go through TLS again.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use shepherd_server::tls::TestPki;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{AbortHandle, JoinHandle};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{self, RootCertStore, ServerConfig};

/// A running TLS front; see the module docs. Dropping it stops it and cuts its connections.
pub struct TlsFront {
    /// `127.0.0.1:port`, where clients connect with TLS.
    pub addr: String,
    accept: JoinHandle<()>,
    conns: Arc<Mutex<Vec<AbortHandle>>>,
    handshakes: Arc<AtomicUsize>,
}

impl TlsFront {
    /// Starts a front for `upstream`, serving `pki`'s server certificate (names `localhost`,
    /// `127.0.0.1`, `::1`) and requiring a client certificate signed by `pki`'s CA. Panics if
    /// it cannot (a failed setup is a failed test).
    pub async fn start(upstream: &str, pki: &TestPki) -> TlsFront {
        let acceptor = TlsAcceptor::from(Arc::new(server_config(pki)));
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind TLS front");
        let addr = listener
            .local_addr()
            .expect("TLS front address")
            .to_string();
        let conns = Arc::new(Mutex::new(Vec::new()));
        let handshakes = Arc::new(AtomicUsize::new(0));
        let accept = tokio::spawn(accept_loop(
            listener,
            acceptor,
            upstream.to_owned(),
            Arc::clone(&conns),
            Arc::clone(&handshakes),
        ));
        TlsFront {
            addr,
            accept,
            conns,
            handshakes,
        }
    }

    /// How many TLS handshakes completed so far.
    pub fn handshakes(&self) -> usize {
        self.handshakes.load(Ordering::SeqCst)
    }

    /// Cuts every open connection (both sides see it closed); new ones are still accepted.
    pub fn cut_all(&self) {
        let conns = std::mem::take(&mut *self.conns.lock().expect("front lock"));
        for conn in conns {
            conn.abort();
        }
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut_all();
    }
}

fn server_config(pki: &TestPki) -> ServerConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from(pki.ca_der.clone()))
        .expect("test CA");
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .expect("client verifier");
    let chain = vec![CertificateDer::from(pki.server.cert_der.clone())];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pki.server.key_der.clone()));
    ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .expect("server certificate")
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    upstream: String,
    conns: Arc<Mutex<Vec<AbortHandle>>>,
    handshakes: Arc<AtomicUsize>,
) {
    while let Ok((socket, _)) = listener.accept().await {
        let (acceptor, upstream) = (acceptor.clone(), upstream.clone());
        let handshakes = Arc::clone(&handshakes);
        let task = tokio::spawn(async move {
            // A refused handshake just ends this connection, as a TLS server's would.
            let Ok(mut tls) = acceptor.accept(socket).await else {
                return;
            };
            handshakes.fetch_add(1, Ordering::SeqCst);
            let Ok(mut plain) = TcpStream::connect(&upstream).await else {
                return;
            };
            let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
        });
        let mut conns = conns.lock().expect("front lock");
        conns.retain(|c| !c.is_finished());
        conns.push(task.abort_handle());
    }
}
