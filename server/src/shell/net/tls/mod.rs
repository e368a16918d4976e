//! TLS on client connections (docs/security.md, "TLS"): key material (`store`), the rustls
//! server configuration (`settings`), the handshake inside each connection's task and port
//! unification (`accept`), and the client certificate's x509 identity (`identity`). Also the
//! throw-away test PKI (`test_pki`).
//!
//! The test PKI is not behind a cargo feature: `shepherd tls make-test-certs` needs it in the
//! binary, and rcgen on the ring provider the server already links adds little to the build.

pub(crate) mod accept;
mod identity;
mod settings;
mod store;
mod test_pki;

pub use crate::config::ServerTls;
pub use identity::subject_rfc2253;
pub use settings::server_config;
pub use store::{KeyMaterial, TlsError, key_from_pem, load_key_store, load_trust_store};
pub use test_pki::{
    CLIENT_SUBJECT, OTHER_CLIENT_SUBJECT, TEST_PASSWORD, TestCert, TestPki, TestPkiError,
};

/// Builds the server's TLS from `config.tls` (reading its files) and logs what did not map.
/// `None` when TLS is off.
///
/// # Errors
/// `InvalidInput` wrapping the [`TlsError`] (the file or key and the reason).
pub(crate) fn prepare(
    config: &crate::Config,
) -> std::io::Result<Option<std::sync::Arc<accept::Secure>>> {
    let built = server_config(&config.tls)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let Some((rustls, warnings)) = built else {
        return Ok(None);
    };
    for warning in warnings {
        tracing::warn!("TLS: {warning}");
    }
    let secure = std::sync::Arc::new(accept::Secure::new(
        rustls,
        config.tls.x509_super_user.clone(),
        config.tls.handshake_limit(),
    ));
    Ok(Some(secure))
}
