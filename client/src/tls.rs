//! TLS to a `secureClientPort`: the builder's TLS options, checked once at build time, and the
//! connector that wraps every stream of the session in a TLS client session.
//!
//! Invariants: options are parsed into one [`TlsSetup`] before the first connection, so bad PEM
//! or a bad server name is an [`Error::InvalidArgument`] from `connect`, never a failure found
//! later on a reconnect; every connection of the session (the first, each reconnect, each host
//! of the connect string) goes through the same [`TlsConnector`] with the same rustls config;
//! a failed TLS handshake fails that attempt only, like a refused TCP connect, with rustls'
//! reason kept in the I/O error. Crypto is rustls with the `ring` provider; TLS 1.2 stays on
//! because ZooKeeper 3.8's `ssl.protocol` defaults to TLSv1.2.

use std::fmt;
use std::future::Future;
use std::io;
use std::sync::Arc;

use tokio_rustls::client::TlsStream;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore};

use crate::connector::Connector;
use crate::error::Error;

/// The TLS options as given to the builder, not yet parsed.
#[derive(Clone, Default)]
pub(crate) struct TlsOptions {
    /// PEM blocks of trusted CA certificates, in the order given.
    pub(crate) ca_pem: Vec<Vec<u8>>,
    /// Trusted CA certificates given as DER (from a key store), after the PEM ones.
    pub(crate) ca_der: Vec<CertificateDer<'static>>,
    /// The certificate chain and private key for mutual TLS, as given.
    pub(crate) identity: Option<Identity>,
    /// The name to verify the server's certificate against, instead of the connect string's host.
    pub(crate) server_name: Option<String>,
    /// A ready rustls config, which replaces `ca_pem` and `identity_pem`.
    pub(crate) config: Option<Arc<ClientConfig>>,
}

impl fmt::Debug for TlsOptions {
    // The private key stays out of logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsOptions")
            .field("ca_pem_blocks", &self.ca_pem.len())
            .field("ca_der", &self.ca_der.len())
            .field("identity", &self.identity.is_some())
            .field("server_name", &self.server_name)
            .field("config", &self.config.is_some())
            .finish()
    }
}

/// A client certificate chain and its private key, as PEM text or as DER from a key store.
#[derive(Clone)]
pub(crate) enum Identity {
    /// PEM certificate chain and PEM private key.
    Pem(Vec<u8>, Vec<u8>),
    /// DER certificates and the private key's DER bytes (PKCS#8, PKCS#1 or SEC1).
    Der(Vec<CertificateDer<'static>>, Vec<u8>),
}

/// What every TLS connection of a session uses, checked at build time.
#[derive(Debug, Clone)]
pub(crate) struct TlsSetup {
    config: Arc<ClientConfig>,
    /// The fixed name to verify, or `None` to use each host of the connect string.
    server_name: Option<ServerName<'static>>,
}

impl TlsOptions {
    /// Parses the PEM inputs and names into a [`TlsSetup`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for PEM without a certificate or key, a key rustls does not
    /// take, no trust roots at all, or a server name that is neither a DNS name nor an IP address.
    pub(crate) fn build(self) -> Result<TlsSetup, Error> {
        let bad =
            |what: &str, e: &dyn fmt::Display| Error::InvalidArgument(format!("TLS {what}: {e}"));
        let server_name = match self.server_name {
            Some(name) => Some(parse_name(&name).map_err(|e| bad("server name", &e))?),
            None => None,
        };
        if let Some(config) = self.config {
            return Ok(TlsSetup {
                config,
                server_name,
            });
        }
        let mut roots = RootCertStore::empty();
        for pem in &self.ca_pem {
            let certs = certificates(pem).map_err(|e| bad("trust roots", &e))?;
            for cert in certs {
                roots.add(cert).map_err(|e| bad("trust root", &e))?;
            }
        }
        for cert in self.ca_der {
            roots.add(cert).map_err(|e| bad("trust root", &e))?;
        }
        if roots.is_empty() {
            return Err(Error::InvalidArgument(
                "TLS needs trust roots: give the CA certificate(s) as PEM (tls_ca_pem) or a rustls config (tls_config)".into(),
            ));
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| bad("protocol versions", &e))?
            .with_root_certificates(roots);
        let config = match self.identity {
            None => builder.with_no_client_auth(),
            Some(identity) => {
                let (chain, key) = match identity {
                    Identity::Pem(chain_pem, key_pem) => (
                        certificates(&chain_pem).map_err(|e| bad("client certificate", &e))?,
                        PrivateKeyDer::from_pem_slice(&key_pem)
                            .map_err(|e| bad("client private key", &e))?,
                    ),
                    Identity::Der(chain, key) => (
                        chain,
                        PrivateKeyDer::try_from(key).map_err(|e| bad("client private key", &e))?,
                    ),
                };
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| bad("client certificate and key", &e))?
            }
        };
        Ok(TlsSetup {
            config: Arc::new(config),
            server_name,
        })
    }
}

/// Every certificate in `pem`; at least one.
fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    if certs.is_empty() {
        return Err("no CERTIFICATE block in the PEM".into());
    }
    Ok(certs)
}

/// A DNS name or an IP address (IPv6 with or without brackets), as a name to verify.
fn parse_name(name: &str) -> Result<ServerName<'static>, String> {
    let bare = name
        .strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .unwrap_or(name);
    ServerName::try_from(bare.to_owned()).map_err(|e| format!("{name:?}: {e}"))
}

/// The host part of a connect string's `host:port` (`[::1]:2181` gives `::1`).
fn host_of(host_port: &str) -> &str {
    if let Some(rest) = host_port.strip_prefix('[') {
        return rest.split_once(']').map_or(rest, |(h, _)| h);
    }
    host_port.rsplit_once(':').map_or(host_port, |(h, _)| h)
}

/// Wraps the streams of `inner` in TLS: the connector of a session built with TLS options.
///
/// Errors, cancellation and ordering are [`Connector`]'s: a failed TLS handshake is that
/// attempt's `io::Error` (kind `InvalidData` for a certificate rustls refused, with rustls'
/// reason and the host in the message); dropping the future mid-handshake drops the stream.
pub(crate) struct TlsConnector<C> {
    inner: C,
    setup: TlsSetup,
}

impl<C> TlsConnector<C> {
    pub(crate) fn new(inner: C, setup: TlsSetup) -> Self {
        TlsConnector { inner, setup }
    }
}

impl<C: Connector> Connector for TlsConnector<C> {
    type Stream = TlsStream<C::Stream>;

    fn connect(&self, host: &str) -> impl Future<Output = io::Result<Self::Stream>> + Send {
        let name = match &self.setup.server_name {
            Some(name) => Ok(name.clone()),
            None => parse_name(host_of(host)).map_err(io::Error::other),
        };
        let tls = tokio_rustls::TlsConnector::from(Arc::clone(&self.setup.config));
        let stream = self.inner.connect(host);
        let host = host.to_owned();
        async move {
            let name = name?;
            let stream = stream.await?;
            tls.connect(name, stream)
                .await
                .map_err(|e| io::Error::new(e.kind(), format!("TLS handshake with {host}: {e}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_names() {
        assert_eq!(host_of("zk1.example:2281"), "zk1.example");
        assert_eq!(host_of("[::1]:2281"), "::1");
        assert_eq!(host_of("127.0.0.1:2281"), "127.0.0.1");
        assert!(matches!(
            parse_name("127.0.0.1"),
            Ok(ServerName::IpAddress(_))
        ));
        assert!(matches!(parse_name("[::1]"), Ok(ServerName::IpAddress(_))));
        assert!(matches!(
            parse_name("zk1.example"),
            Ok(ServerName::DnsName(_))
        ));
        assert!(parse_name("not a name").is_err());
    }

    #[test]
    fn bad_pem_is_a_build_error() {
        let no_roots = TlsOptions::default().build();
        assert!(matches!(no_roots, Err(Error::InvalidArgument(_))));
        let garbage = TlsOptions {
            ca_pem: vec![b"not pem at all".to_vec()],
            ..TlsOptions::default()
        };
        let err = garbage.build().unwrap_err().to_string();
        assert!(err.contains("trust roots"), "{err}");
    }
}
