//! The benchmark's TLS client configurations, from the PEM files of a certificate directory as
//! `shepherd tls make-test-certs` writes it (docs/security.md, "Test certificates"): `ca.pem`
//! to trust, `client.pem` and `client-key.pem` to present.
//!
//! Invariants: TLS 1.3 only, on rustls's ring provider; session resumption is off, so every
//! measured connect pays a full handshake, as a new client process does.

use std::path::Path;
use std::sync::Arc;

use tokio_rustls::rustls::client::Resumption;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{ClientConfig, RootCertStore, version};

/// Builds the client configuration: trusting `dir/ca.pem`, and presenting
/// `dir/client.pem` with `dir/client-key.pem` when `with_client_cert`.
///
/// # Errors
/// A message naming the file that cannot be read or parsed, or the rustls error.
pub fn client_config(dir: &Path, with_client_cert: bool) -> Result<Arc<ClientConfig>, String> {
    let mut roots = RootCertStore::empty();
    for cert in certs(&dir.join("ca.pem"))? {
        roots
            .add(cert)
            .map_err(|e| format!("{}: {e}", dir.join("ca.pem").display()))?;
    }
    let builder = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_protocol_versions(&[&version::TLS13])
        .map_err(|e| format!("TLS 1.3 on the ring provider: {e}"))?
        .with_root_certificates(roots);
    let mut config = if with_client_cert {
        let key_path = dir.join("client-key.pem");
        let key = PrivateKeyDer::from_pem_file(&key_path)
            .map_err(|e| format!("{}: {e}", key_path.display()))?;
        builder
            .with_client_auth_cert(certs(&dir.join("client.pem"))?, key)
            .map_err(|e| format!("client certificate: {e}"))?
    } else {
        builder.with_no_client_auth()
    };
    config.resumption = Resumption::disabled();
    Ok(Arc::new(config))
}

fn certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: no certificate", path.display()));
    }
    Ok(certs)
}
