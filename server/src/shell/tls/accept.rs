//! The TLS side of accepting a connection, run inside the connection's own task: on a TLS
//! port, the first byte must open a TLS record (a plaintext client is closed, as ZooKeeper's
//! Netty pipeline closes it), then the handshake; on a unified port (`client.portUnification`)
//! the first byte decides between TLS and plain, as ZooKeeper 3.8's `DualModeSslHandler` does
//! with Netty's `SslHandler.isEncrypted` (a TLS record starts 0x16, a handshake; a ZooKeeper
//! frame starts with its length's high byte, 0 for any frame `jute.maxbuffer` allows, and a
//! four-letter word with a letter).
//!
//! All of it is bounded by `HANDSHAKE_IDLE`, so a client that never finishes costs one task,
//! and ends early when the connection is killed (the caller selects on its kill token).
//! A verified client certificate gives the identities ZooKeeper's `X509AuthenticationProvider`
//! gives: `super:<subject>` for `x509.superUser`, then `x509:<subject>`.

use std::net::SocketAddr;
use std::sync::Arc;

use parking_lot::Mutex;
use rustls::ServerConfig;
use shepherd_protocol::Id;
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tokio_util::either::Either;

use super::identity::subject_rfc2253;
use crate::shell::conn::HANDSHAKE_IDLE;
use crate::shell::listener::REFUSAL_LOG_INTERVAL;

/// The first byte of a TLS handshake record.
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// A stream after acceptance: plain (unified port) or TLS.
pub(crate) type Accepted = Either<TcpStream, TlsStream<TcpStream>>;

/// The server's TLS: the acceptor, the x509 super user, and the rate limit of its log lines.
pub(crate) struct Secure {
    acceptor: TlsAcceptor,
    super_user: Option<String>,
    /// When the last "not TLS" line was logged, and how many were left out since.
    refusals: Mutex<(Option<Instant>, u64)>,
}

impl std::fmt::Debug for Secure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secure").finish_non_exhaustive()
    }
}

impl Secure {
    pub(crate) fn new(config: Arc<ServerConfig>, super_user: Option<String>) -> Secure {
        Secure {
            acceptor: TlsAcceptor::from(config),
            super_user,
            refusals: Mutex::new((None, 0)),
        }
    }

    /// Logs a refused connection at most once per [`REFUSAL_LOG_INTERVAL`] for the whole
    /// server, with the count left out since the last line.
    fn refused(&self, peer: SocketAddr, what: &str) {
        let now = Instant::now();
        let mut state = self.refusals.lock();
        match state.0 {
            Some(last) if now.duration_since(last) < REFUSAL_LOG_INTERVAL => state.1 += 1,
            _ => {
                let suppressed = std::mem::take(&mut state.1);
                state.0 = Some(now);
                tracing::warn!(%peer, suppressed, "{what}; closing (suppressed: such lines \
                    not logged since the last)");
            }
        }
    }

    /// Accepts `tcp`: TLS only, or (`unified`) TLS or plain by its first byte. `None` when the
    /// connection is to be closed: not TLS on a TLS port, a failed handshake, a client
    /// certificate required and not given, or `HANDSHAKE_IDLE` passed. Cancellation safe in
    /// the sense that dropping it drops the connection and nothing else.
    pub(crate) async fn accept(
        self: Arc<Self>,
        tcp: TcpStream,
        peer: SocketAddr,
        unified: bool,
    ) -> Option<(Accepted, Vec<Id>)> {
        match tokio::time::timeout(HANDSHAKE_IDLE, self.accept_within(tcp, peer, unified)).await {
            Ok(accepted) => accepted,
            Err(_) => {
                tracing::debug!(%peer, "TLS handshake not finished in time; closing");
                None
            }
        }
    }

    async fn accept_within(
        &self,
        tcp: TcpStream,
        peer: SocketAddr,
        unified: bool,
    ) -> Option<(Accepted, Vec<Id>)> {
        let mut first = [0u8; 1];
        let n = tcp.peek(&mut first).await.ok()?;
        if n == 0 {
            return None;
        }
        if first[0] != TLS_HANDSHAKE_RECORD {
            if unified {
                return Some((Either::Left(tcp), Vec::new()));
            }
            self.refused(peer, "plaintext on the TLS port");
            return None;
        }
        let tls = match self.acceptor.accept(tcp).await {
            Ok(tls) => tls,
            Err(error) => {
                self.refused(peer, &format!("TLS handshake failed: {error}"));
                return None;
            }
        };
        let ids = self.identities(&tls);
        Some((Either::Right(tls), ids))
    }

    /// The identities a verified client certificate gives (none without one).
    fn identities(&self, tls: &TlsStream<TcpStream>) -> Vec<Id> {
        let (_, session) = tls.get_ref();
        let Some(leaf) = session.peer_certificates().and_then(|c| c.first()) else {
            return Vec::new();
        };
        let Some(subject) = subject_rfc2253(leaf) else {
            return Vec::new();
        };
        let mut ids = Vec::with_capacity(2);
        if self.super_user.as_deref() == Some(subject.as_str()) {
            tracing::info!(%subject, "authenticated as super user (x509)");
            ids.push(Id::new("super", subject.clone()));
        }
        ids.push(Id::new("x509", subject));
        ids
    }
}
