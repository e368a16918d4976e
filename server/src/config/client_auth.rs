//! `ssl.clientAuth`: which client certificates a TLS server asks for. Read from zoo.cfg
//! (`tls.rs`) and given by the embedded builder (`server_tls.rs`) alike.

/// Which client certificates the server asks for (`ssl.clientAuth`; ZooKeeper's default is
/// `need`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientAuth {
    /// No certificate is asked for.
    None,
    /// A certificate is asked for; a client without one is still served.
    Want,
    /// A client without a certificate the trust store vouches for is refused.
    #[default]
    Need,
}
