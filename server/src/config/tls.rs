//! TLS for client connections, as ZooKeeper 3.8 reads it from `zoo.cfg`: `secureClientPort`,
//! the `ssl.*` keys and `client.portUnification` (docs/security.md, "TLS").
//!
//! This module only records the keys; the files are read and the rustls configuration built
//! by `shell/net/tls` ([`crate::tls::server_config`]), once, at start. Each key is accepted with or
//! without the `zookeeper.` prefix (ZooKeeper reads both, the prefixed one being the system
//! property's spelling).

use std::net::IpAddr;
use std::path::PathBuf;

use super::durability::KeyOutcome;
use super::values::{comma_list, java_bool};
use crate::config::{ClientAuth, ServerTls};

/// The cap on TLS handshakes in progress when `netty.server.outstandingHandshake.limit` is not
/// given. ZooKeeper 3.8 has none by default (`NettyServerCnxnFactory`: -1, throttling off);
/// Shepherd keeps one so that a flood of half-open handshakes from many addresses (each under
/// `maxClientCnxns`) cannot hold unbounded memory. Far above what a test suite opens at once.
pub const DEFAULT_HANDSHAKE_LIMIT: usize = 1000;

/// The format of a key or trust store file (`ssl.keyStore.type`; by default from the file
/// name's extension, as ZooKeeper's `KeyStoreFileType.fromFilename`, else from the content).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreType {
    /// PEM: certificates and (for a key store) one private key.
    Pem,
    /// PKCS#12, with a password.
    Pkcs12,
    /// Java KeyStore (ZooKeeper's default type), with a password; keys must be PKCS#8.
    Jks,
    /// Bouncy Castle FIPS: refused at start.
    Bcfks,
}

impl StoreType {
    /// Parses a `.type` value (any case); empty is `None` (by file name or content).
    ///
    /// # Errors
    /// The accepted values, for anything else.
    pub fn parse(value: &str) -> Result<Option<StoreType>, String> {
        Ok(Some(match value.to_ascii_uppercase().as_str() {
            "" => return Ok(None),
            "PEM" => StoreType::Pem,
            "PKCS12" => StoreType::Pkcs12,
            "JKS" => StoreType::Jks,
            "BCFKS" => StoreType::Bcfks,
            _ => return Err("expected PEM, PKCS12, JKS or BCFKS".into()),
        }))
    }

    /// The type a file name's extension names (`.pem`, `.p12`, `.jks`, `.bcfks`), as
    /// ZooKeeper's `KeyStoreFileType.fromFilename` reads it.
    pub fn from_file_name(path: &std::path::Path) -> Option<StoreType> {
        match path.extension()?.to_str()? {
            "pem" => Some(StoreType::Pem),
            "p12" => Some(StoreType::Pkcs12),
            "jks" => Some(StoreType::Jks),
            "bcfks" => Some(StoreType::Bcfks),
            _ => None,
        }
    }
}

/// A key or trust store file: `ssl.keyStore.*` or `ssl.trustStore.*`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreFile {
    /// `.location`.
    pub location: Option<PathBuf>,
    /// `.password` (PKCS#12; for PEM, the password of an encrypted key, which is refused).
    pub password: Option<String>,
    /// `.type`; `None` takes it from the file name.
    pub store_type: Option<StoreType>,
}

/// How client connections are secured with TLS. The default serves plaintext only.
///
/// Built by [`Default`] and the zoo.cfg keys (or the builder), never field by field outside this
/// crate, so that a key added later is not a breaking change.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct TlsSettings {
    /// `secureClientPort`: where TLS clients connect (0 picks a free one).
    pub secure_port: Option<u16>,
    /// `secureClientPortAddress`; the plain port's address when not given.
    pub secure_bind: Option<IpAddr>,
    /// `ssl.keyStore.*`: the server's certificate chain and key.
    pub key_store: StoreFile,
    /// `ssl.trustStore.*`: the CAs client certificates are checked against.
    pub trust_store: StoreFile,
    /// `ssl.clientAuth`; `None` when not given (see docs/security.md for the default).
    pub client_auth: Option<ClientAuth>,
    /// `ssl.protocol` (`TLSv1.2` by default, as ZooKeeper 3.8's `X509Util.DEFAULT_PROTOCOL`).
    pub protocol: Option<String>,
    /// `ssl.enabledProtocols`; by default only `ssl.protocol`.
    pub enabled_protocols: Option<Vec<String>>,
    /// `ssl.ciphersuites`, by their IANA (= Java) names; rustls's own list when not given.
    pub cipher_suites: Option<Vec<String>>,
    /// `client.portUnification`: the plain port accepts TLS too.
    pub port_unification: bool,
    /// `ssl.authProvider` (only `x509` is known).
    pub auth_provider: Option<String>,
    /// `zookeeper.X509AuthenticationProvider.superUser`: the certificate subject that is
    /// `super`.
    pub x509_super_user: Option<String>,
    /// Whether `clientPort` was given: without it a server with `secureClientPort` serves TLS
    /// only, as ZooKeeper does.
    pub client_port_given: bool,
    /// `netty.server.outstandingHandshake.limit`: the most TLS handshakes in progress at once,
    /// over all secure ports; a connection over it is closed at once. `None` when not given
    /// ([`DEFAULT_HANDSHAKE_LIMIT`]); a value of 0 or less turns the cap off, as on ZooKeeper.
    pub outstanding_handshake_limit: Option<i64>,
    /// Key material from the embedded builder ([`crate::ServerBuilder::tls`]), which wins over
    /// the key and trust store files.
    pub embedded: Option<ServerTls>,
}

impl PartialEq for TlsSettings {
    fn eq(&self, other: &Self) -> bool {
        // The embedded key material is compared by presence only: keys are not compared.
        self.secure_port == other.secure_port
            && self.secure_bind == other.secure_bind
            && self.key_store == other.key_store
            && self.trust_store == other.trust_store
            && self.client_auth == other.client_auth
            && self.protocol == other.protocol
            && self.enabled_protocols == other.enabled_protocols
            && self.cipher_suites == other.cipher_suites
            && self.port_unification == other.port_unification
            && self.auth_provider == other.auth_provider
            && self.x509_super_user == other.x509_super_user
            && self.client_port_given == other.client_port_given
            && self.outstanding_handshake_limit == other.outstanding_handshake_limit
            && self.embedded.is_some() == other.embedded.is_some()
    }
}

impl Eq for TlsSettings {}

impl TlsSettings {
    /// Whether TLS is on: a secure port, port unification, or embedded key material.
    pub fn is_enabled(&self) -> bool {
        self.secure_port.is_some() || self.port_unification || self.embedded.is_some()
    }

    /// Whether the plain `clientPort` is served: always, unless `secureClientPort` was given
    /// and `clientPort` was not (a secure-only server, as ZooKeeper allows).
    pub fn serves_plain(&self) -> bool {
        match &self.embedded {
            Some(tls) => !tls.secure_only,
            None => self.client_port_given || self.secure_port.is_none(),
        }
    }

    /// Whether the plain port accepts TLS too (`client.portUnification`).
    pub fn unified(&self) -> bool {
        self.embedded
            .as_ref()
            .map_or(self.port_unification, |tls| tls.port_unification)
    }

    /// The secure port: the embedded one, else `secureClientPort`.
    pub fn secure_port(&self) -> Option<u16> {
        self.embedded
            .as_ref()
            .map(|tls| tls.port)
            .or(self.secure_port)
    }

    /// The cap on TLS handshakes in progress, `None` for no cap
    /// (`netty.server.outstandingHandshake.limit`).
    pub fn handshake_limit(&self) -> Option<usize> {
        match self.outstanding_handshake_limit {
            None => Some(DEFAULT_HANDSHAKE_LIMIT),
            Some(limit) => usize::try_from(limit).ok().filter(|&l| l > 0),
        }
    }

    /// Applies one `zoo.cfg` key, if it is one of ours.
    pub(crate) fn apply_key(&mut self, key: &str, value: &str) -> Result<KeyOutcome, String> {
        let key = key.strip_prefix("zookeeper.").unwrap_or(key);
        let path = || Some(PathBuf::from(value)).filter(|_| !value.is_empty());
        match key {
            "secureClientPort" => {
                self.secure_port = Some(value.parse().map_err(|_| "expected a port")?);
            }
            "secureClientPortAddress" => {
                self.secure_bind = Some(value.parse().map_err(|_| "expected an IP address")?);
            }
            "ssl.keyStore.location" => self.key_store.location = path(),
            "ssl.keyStore.password" => self.key_store.password = Some(value.to_string()),
            "ssl.keyStore.type" => self.key_store.store_type = StoreType::parse(value)?,
            "ssl.trustStore.location" => self.trust_store.location = path(),
            "ssl.trustStore.password" => self.trust_store.password = Some(value.to_string()),
            "ssl.trustStore.type" => self.trust_store.store_type = StoreType::parse(value)?,
            // ZooKeeper's `ClientAuth.fromPropertyValue`: empty is NEED, case does not matter.
            "ssl.clientAuth" => {
                self.client_auth = Some(match value.to_ascii_lowercase().as_str() {
                    "" | "need" => ClientAuth::Need,
                    "want" => ClientAuth::Want,
                    "none" => ClientAuth::None,
                    _ => return Err("expected need, want or none".into()),
                });
            }
            "ssl.protocol" => self.protocol = Some(value.to_string()),
            "ssl.enabledProtocols" => self.enabled_protocols = Some(comma_list(value)),
            "ssl.ciphersuites" => self.cipher_suites = Some(comma_list(value)),
            "client.portUnification" => {
                self.port_unification = java_bool(value);
            }
            "ssl.authProvider" => {
                if value != "x509" {
                    self.auth_provider = Some(value.to_string());
                    return Ok(KeyOutcome::Warning(format!(
                        "ssl.authProvider={value}: only x509 is known; client certificates \
                         give x509 identities"
                    )));
                }
                self.auth_provider = Some(value.to_string());
            }
            // ZooKeeper reads it as an integer system property (`Integer.getInteger`), which a
            // zoo.cfg key becomes.
            "netty.server.outstandingHandshake.limit" => {
                self.outstanding_handshake_limit =
                    Some(value.trim().parse().map_err(|_| "expected an integer")?);
            }
            "X509AuthenticationProvider.superUser" => {
                self.x509_super_user = Some(value.to_string());
            }
            // Accepted with nothing to do: the server has no host name to verify (ZooKeeper
            // checks a client's name only under ssl.clientHostnameVerification, off by
            // default), and Netty is ZooKeeper's way to TLS, which this server has built in.
            "ssl.hostnameVerification" | "ssl.clientHostnameVerification" | "serverCnxnFactory" => {
            }
            _ => return Ok(KeyOutcome::Unknown),
        }
        Ok(KeyOutcome::Applied)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_spellings_and_lists() {
        let mut tls = TlsSettings::default();
        for (key, value) in [
            ("secureClientPort", "2281"),
            ("zookeeper.ssl.keyStore.location", "/k.p12"),
            ("ssl.keyStore.password", "pw"),
            ("ssl.trustStore.type", "pem"),
            ("zookeeper.ssl.clientAuth", "WANT"),
            ("ssl.enabledProtocols", "TLSv1.3, TLSv1.2"),
            ("zookeeper.client.portUnification", "true"),
            ("zookeeper.X509AuthenticationProvider.superUser", "CN=admin"),
            (
                "serverCnxnFactory",
                "org.apache.zookeeper.server.NettyServerCnxnFactory",
            ),
        ] {
            assert!(matches!(tls.apply_key(key, value), Ok(KeyOutcome::Applied)));
        }
        assert_eq!(tls.secure_port, Some(2281));
        assert_eq!(tls.key_store.location, Some(PathBuf::from("/k.p12")));
        assert_eq!(tls.trust_store.store_type, Some(StoreType::Pem));
        assert_eq!(tls.client_auth, Some(ClientAuth::Want));
        assert_eq!(
            tls.enabled_protocols,
            Some(vec!["TLSv1.3".to_string(), "TLSv1.2".to_string()])
        );
        assert!(tls.port_unification && tls.is_enabled());
        assert_eq!(tls.x509_super_user.as_deref(), Some("CN=admin"));
        assert!(!tls.serves_plain(), "secureClientPort without clientPort");
        tls.client_port_given = true;
        assert!(tls.serves_plain());
        assert!(tls.apply_key("ssl.clientAuth", "sometimes").is_err());
        assert!(tls.apply_key("secureClientPort", "x").is_err());
        assert_eq!(tls.handshake_limit(), Some(DEFAULT_HANDSHAKE_LIMIT));
        let limit = "zookeeper.netty.server.outstandingHandshake.limit";
        assert!(matches!(tls.apply_key(limit, "5"), Ok(KeyOutcome::Applied)));
        assert_eq!(tls.handshake_limit(), Some(5));
        assert!(matches!(
            tls.apply_key(limit, "-1"),
            Ok(KeyOutcome::Applied)
        ));
        assert_eq!(tls.handshake_limit(), None);
        assert!(tls.apply_key(limit, "many").is_err());
        assert!(matches!(
            tls.apply_key("ssl.authProvider", "custom"),
            Ok(KeyOutcome::Warning(_))
        ));
        assert!(matches!(
            tls.apply_key("other", "1"),
            Ok(KeyOutcome::Unknown)
        ));
    }
}
