//! What a client is configured with: the parsed connect string and the builder's options.
//!
//! Invariants: a [`Config`] always has at least one host, already shuffled; its timeouts are
//! non-zero; its chroot is valid. Everything here is plain data, fixed once the client exists
//! (credentials added later with `add_auth` live in the connection task, not here).

use std::time::Duration;

use rand::seq::SliceRandom;
use shepherd_protocol::DEFAULT_MAX_BUFFER;

use crate::chroot::Chroot;
use crate::error::Error;
use crate::sasl::SaslOptions;
use crate::tls::{Identity, TlsOptions, TlsSetup};
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The session timeout requested when none is given (the server clamps it, docs/protocol.md §2.4).
pub const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_secs(30);
/// The per-host limit on TCP connect plus handshake when none is given.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything the connection task needs to know, fixed at build time.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// `host:port` strings, in the (shuffled) order they are tried.
    pub(crate) hosts: Vec<String>,
    pub(crate) chroot: Chroot,
    pub(crate) session_timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) read_only: bool,
    /// Credentials sent after every handshake, before anything else.
    pub(crate) auths: Vec<(String, Vec<u8>)>,
    /// A session to resume: id and password.
    pub(crate) session: Option<(i64, Vec<u8>)>,
    /// The largest reply payload accepted.
    pub(crate) max_frame: usize,
    /// SASL credentials, exchanged after every handshake before anything else is sent.
    pub(crate) sasl: Option<SaslOptions>,
}

/// Splits `host:port,host:port/chroot` into hosts and an optional chroot.
///
/// A host without a port gets 2181; IPv6 addresses go in brackets (`[::1]:2181`).
pub(crate) fn parse_connect_string(s: &str) -> Result<(Vec<String>, Option<&str>), Error> {
    let (hosts, chroot) = match s.find('/') {
        Some(i) => (&s[..i], Some(&s[i..])),
        None => (s, None),
    };
    let mut out = Vec::new();
    for host in hosts.split(',').map(str::trim).filter(|h| !h.is_empty()) {
        let has_port = match host.rfind(']') {
            Some(close) => host[close..].contains(':'),
            None => host.contains(':'),
        };
        out.push(if has_port {
            host.to_owned()
        } else {
            format!("{host}:2181")
        });
    }
    if out.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "connect string {s:?} names no host"
        )));
    }
    Ok((out, chroot))
}

/// Builds a [`crate::Client`] with options beyond the connect string.
///
/// ```no_run
/// # async fn demo() -> Result<(), shepherd_client::Error> {
/// use std::time::Duration;
/// let client = shepherd_client::Client::builder()
///     .session_timeout(Duration::from_secs(10))
///     .digest("alice:secret")
///     .connect("127.0.0.1:2181,127.0.0.1:2182/app")
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    session_timeout: Duration,
    connect_timeout: Duration,
    auths: Vec<(String, Vec<u8>)>,
    chroot: Option<String>,
    read_only: bool,
    session: Option<(i64, Vec<u8>)>,
    max_frame: usize,
    tls: Option<TlsOptions>,
    sasl: Option<SaslOptions>,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            session_timeout: DEFAULT_SESSION_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            auths: Vec::new(),
            chroot: None,
            read_only: false,
            session: None,
            // Replies may exceed jute.maxbuffer by their headers (docs/protocol.md §1.3); leave room.
            max_frame: DEFAULT_MAX_BUFFER + 4096,
            tls: None,
            sasl: None,
        }
    }
}

impl ClientBuilder {
    /// The session timeout to request; the server clamps it (by default to 2 to 20 ticks).
    pub fn session_timeout(mut self, timeout: Duration) -> Self {
        self.session_timeout = timeout;
        self
    }

    /// The limit on one attempt to reach one host: TCP connect plus the handshake reply.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Adds a `digest` credential (`user:password`), sent after every handshake.
    pub fn digest(self, user_password: &str) -> Self {
        self.auth("digest", user_password.as_bytes())
    }

    /// Adds a credential of any scheme, sent after every handshake. A scheme the server does
    /// not know makes the session [`crate::SessionState::AuthFailed`].
    pub fn auth(mut self, scheme: &str, auth: &[u8]) -> Self {
        self.auths.push((scheme.to_owned(), auth.to_vec()));
        self
    }

    /// A chroot (`/app`). A connect string may carry one too; if both do, they must agree.
    pub fn chroot(mut self, chroot: &str) -> Self {
        self.chroot = Some(chroot.to_owned());
        self
    }

    /// Whether a read-only server may be used (the `readOnly` handshake flag). Read-only mode
    /// is otherwise unsupported: no probing for a read-write server follows.
    pub fn read_only(mut self, allowed: bool) -> Self {
        self.read_only = allowed;
        self
    }

    /// Resumes an existing session instead of creating one.
    pub fn session(mut self, session_id: i64, password: &[u8]) -> Self {
        self.session = Some((session_id, password.to_vec()));
        self
    }

    /// The largest reply payload accepted, in bytes (default: `jute.maxbuffer` plus 4 KiB).
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.max_frame = bytes;
        self
    }

    /// Turns TLS on and trusts the CA certificate(s) in `pem` (one or more `CERTIFICATE`
    /// blocks; may be called again to add more). Every connection of the session, to every host
    /// of the connect string and on every reconnect, is then TLS (a `secureClientPort`), and the
    /// server's certificate must chain to one of these roots and name the host
    /// ([`ClientBuilder::tls_server_name`] to verify another name). An IP address in the connect
    /// string is verified against the certificate's IP address entries.
    ///
    /// The PEM is parsed by `connect`: a bad one is [`Error::InvalidArgument`] there.
    pub fn tls_ca_pem(mut self, pem: impl AsRef<[u8]>) -> Self {
        self.tls
            .get_or_insert_with(TlsOptions::default)
            .ca_pem
            .push(pem.as_ref().to_vec());
        self
    }

    /// Turns TLS on and presents this certificate chain and private key (PEM: `CERTIFICATE`
    /// blocks, leaf first; one PKCS#8, PKCS#1 or SEC1 key) to servers that ask for one
    /// (`ssl.clientAuth=need` or `want`). Parsed by `connect`, as [`ClientBuilder::tls_ca_pem`].
    pub fn tls_identity_pem(
        mut self,
        chain_pem: impl AsRef<[u8]>,
        key_pem: impl AsRef<[u8]>,
    ) -> Self {
        self.tls.get_or_insert_with(TlsOptions::default).identity = Some(Identity::Pem(
            chain_pem.as_ref().to_vec(),
            key_pem.as_ref().to_vec(),
        ));
        self
    }

    /// As [`ClientBuilder::tls_ca_pem`], for certificates already decoded (DER), as a PKCS#12
    /// or JKS trust store holds them.
    pub fn tls_ca_der(mut self, certs: impl IntoIterator<Item = CertificateDer<'static>>) -> Self {
        self.tls
            .get_or_insert_with(TlsOptions::default)
            .ca_der
            .extend(certs);
        self
    }

    /// As [`ClientBuilder::tls_identity_pem`], for a chain and key already decoded (DER), as a
    /// PKCS#12 or JKS key store holds them.
    pub fn tls_identity_der(
        mut self,
        chain: Vec<CertificateDer<'static>>,
        key: &PrivateKeyDer<'_>,
    ) -> Self {
        self.tls.get_or_insert_with(TlsOptions::default).identity =
            Some(Identity::Der(chain, key.secret_der().to_vec()));
        self
    }

    /// Turns TLS on and verifies the server's certificate against `name` (a DNS name or an IP
    /// address) instead of each host of the connect string.
    pub fn tls_server_name(mut self, name: &str) -> Self {
        self.tls.get_or_insert_with(TlsOptions::default).server_name = Some(name.to_owned());
        self
    }

    /// Turns TLS on with a ready rustls client config, which then replaces
    /// [`ClientBuilder::tls_ca_pem`] and [`ClientBuilder::tls_identity_pem`] (for custom
    /// verifiers, key logs, or protocol limits); [`ClientBuilder::tls_server_name`] still
    /// applies.
    pub fn tls_config(
        mut self,
        config: std::sync::Arc<tokio_rustls::rustls::ClientConfig>,
    ) -> Self {
        self.tls.get_or_insert_with(TlsOptions::default).config = Some(config);
        self
    }

    /// Authenticates with SASL DIGEST-MD5 as `username` (a user of the server's JAAS `Server`
    /// section) after every handshake, before any other request of the connection is sent,
    /// as ZooKeeper's Java client does. A refused password makes the session
    /// [`crate::SessionState::AuthFailed`] (terminal): every waiting call fails with
    /// [`Error::AuthFailed`] and watchers see `KeeperState::AuthFailed`.
    pub fn sasl_digest_md5(mut self, username: &str, password: &str) -> Self {
        self.sasl = Some(SaslOptions::digest_md5(username, password));
        self
    }

    /// The configuration of a session to `connect_string` with these options, and its TLS
    /// setup if any ([`ClientBuilder::connect`] starts it).
    pub(crate) fn into_config(
        self,
        connect_string: &str,
    ) -> Result<(Config, Option<TlsSetup>), Error> {
        let (mut hosts, chroot) = parse_connect_string(connect_string)?;
        let chroot = match (chroot, self.chroot.as_deref()) {
            (Some(a), Some(b)) if Chroot::new(Some(a))? != Chroot::new(Some(b))? => {
                return Err(Error::InvalidArgument(format!(
                    "chroot {a:?} in the connect string differs from {b:?}"
                )));
            }
            (a, b) => Chroot::new(a.or(b))?,
        };
        if self.session_timeout.is_zero() || self.connect_timeout.is_zero() {
            return Err(Error::InvalidArgument("zero timeout".into()));
        }
        let tls = self.tls.map(TlsOptions::build).transpose()?;
        hosts.shuffle(&mut rand::rng());
        let config = Config {
            hosts,
            chroot,
            session_timeout: self.session_timeout,
            connect_timeout: self.connect_timeout,
            read_only: self.read_only,
            auths: self.auths,
            session: self.session,
            max_frame: self.max_frame,
            sasl: self.sasl,
        };
        Ok((config, tls))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_strings() {
        let (hosts, chroot) = parse_connect_string("a:1,b,[::1]:3,[::2]/app/x").unwrap();
        assert_eq!(hosts, ["a:1", "b:2181", "[::1]:3", "[::2]:2181"]);
        assert_eq!(chroot, Some("/app/x"));
        assert!(parse_connect_string("/app").is_err());
        let (_, none) = parse_connect_string("h:1").unwrap();
        assert_eq!(none, None);
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut v: Vec<u32> = (0..50).collect();
        v.shuffle(&mut rand::rng());
        let mut sorted = v.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn chroot_conflicts_are_rejected() {
        let b = ClientBuilder::default().chroot("/a");
        assert!(b.clone().into_config("h:1/b").is_err());
        let (c, _) = b.into_config("h:1/a").unwrap();
        assert_eq!(c.chroot.as_str(), Some("/a"));
    }
}
