//! TLS key material handed to an embedded server by its builder ([`crate::ServerBuilder::tls`]),
//! which wins over zoo.cfg's key and trust stores. Only configuration: `shell/net/tls` reads it
//! when it builds the rustls configuration at start.

use std::path::Path;

use crate::config::ClientAuth;

/// TLS for an embedded server ([`crate::ServerBuilder::tls`]): the server's certificate chain
/// and key, optionally the CAs that vouch for client certificates, and where to serve it.
#[derive(Clone)]
pub struct ServerTls {
    pub(crate) cert_chain_pem: Vec<u8>,
    pub(crate) key_pem: Vec<u8>,
    pub(crate) client_ca_pem: Option<Vec<u8>>,
    pub(crate) client_auth: Option<ClientAuth>,
    pub(crate) port: u16,
    pub(crate) secure_only: bool,
    pub(crate) port_unification: bool,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls")
            .field("client_auth", &self.client_auth)
            .field("port", &self.port)
            .field("secure_only", &self.secure_only)
            .field("port_unification", &self.port_unification)
            .finish_non_exhaustive()
    }
}

impl ServerTls {
    /// The server's certificate chain (leaf first) and its private key (PKCS#8, RSA or EC),
    /// as PEM. By default: served on a free secure port beside the plain one, asking for no
    /// client certificate.
    pub fn from_pem(cert_chain_pem: impl Into<Vec<u8>>, key_pem: impl Into<Vec<u8>>) -> Self {
        ServerTls {
            cert_chain_pem: cert_chain_pem.into(),
            key_pem: key_pem.into(),
            client_ca_pem: None,
            client_auth: None,
            port: 0,
            secure_only: false,
            port_unification: false,
        }
    }

    /// [`from_pem`](Self::from_pem), read from files.
    ///
    /// # Errors
    /// The read error of either file.
    pub fn from_pem_files(cert_chain: &Path, key: &Path) -> std::io::Result<Self> {
        Ok(ServerTls::from_pem(
            std::fs::read(cert_chain)?,
            std::fs::read(key)?,
        ))
    }

    /// The CAs (PEM) that vouch for client certificates; client auth becomes `need` unless
    /// [`client_auth`](Self::client_auth) says otherwise.
    pub fn client_ca_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.client_ca_pem = Some(pem.into());
        self
    }

    /// Whether a client certificate is asked for (`ssl.clientAuth`).
    pub fn client_auth(mut self, mode: ClientAuth) -> Self {
        self.client_auth = Some(mode);
        self
    }

    /// The secure port (0, the default, picks a free one).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Serve TLS only: the builder's port is the secure one, and no plain port is opened.
    pub fn secure_only(mut self) -> Self {
        self.secure_only = true;
        self
    }

    /// The plain port accepts TLS too (`client.portUnification`).
    pub fn port_unification(mut self, on: bool) -> Self {
        self.port_unification = on;
        self
    }
}
