//! The TLS side of accepting a connection, run inside the connection's own task: on a TLS
//! port, the first byte must open a TLS record (a plaintext client is closed, as ZooKeeper's
//! Netty pipeline closes it), then the handshake; on a unified port (`client.portUnification`)
//! the first byte decides between TLS and plain, as ZooKeeper 3.8's `DualModeSslHandler` does
//! with Netty's `SslHandler.isEncrypted` (a TLS record starts 0x16, a handshake; a ZooKeeper
//! frame starts with its length's high byte, 0 for any frame `jute.maxbuffer` allows, and a
//! four-letter word with a letter).
//!
//! All of it is bounded by `HANDSHAKE_IDLE`, so a client that never finishes costs one task,
//! and ends early when the connection is killed (the caller selects on its kill token). The
//! handshakes in progress are capped for the whole server
//! (`netty.server.outstandingHandshake.limit`, [`TlsSettings::handshake_limit`]): a connection
//! over the cap is closed at once, before any byte is read, as ZooKeeper's Netty factory closes
//! it. Refusals are logged through the listener's [`RefusalLog`]: at most one line per address
//! per interval, counting the ones left out.
//!
//! [`TlsSettings::handshake_limit`]: crate::config::TlsSettings::handshake_limit
//! A verified client certificate gives the identities ZooKeeper's `X509AuthenticationProvider`
//! gives: `super:<subject>` for `x509.superUser`, then `x509:<subject>`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;
use rustls::ServerConfig;
use shepherd_protocol::Id;
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tokio_util::either::Either;

use crate::shell::net::limits::HANDSHAKE_IDLE;
use crate::shell::net::refusals::RefusalLog;
use crate::shell::net::tls::identity::subject_rfc2253;

/// The first byte of a TLS handshake record.
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// A stream after acceptance: plain (unified port) or TLS.
pub(crate) type Accepted = Either<TcpStream, TlsStream<TcpStream>>;

/// The server's TLS: the acceptor, the x509 super user, the handshake cap and the rate limit
/// of its log lines.
pub(crate) struct Secure {
    acceptor: TlsAcceptor,
    super_user: Option<String>,
    /// The most handshakes in progress at once; `None`: no cap.
    handshake_limit: Option<usize>,
    /// Handshakes in progress (and unified-port connections whose first byte is awaited).
    handshakes: AtomicUsize,
    refusals: Mutex<RefusalLog>,
}

/// One handshake's place under the cap, given back when the handshake ends however it ends
/// (done, failed, timed out, or its task dropped).
struct HandshakeSlot<'a>(&'a AtomicUsize);

impl Drop for HandshakeSlot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl std::fmt::Debug for Secure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secure").finish_non_exhaustive()
    }
}

impl Secure {
    /// `handshake_limit`: the most handshakes in progress at once (`None`: no cap).
    pub(crate) fn new(
        config: Arc<ServerConfig>,
        super_user: Option<String>,
        handshake_limit: Option<usize>,
    ) -> Secure {
        Secure {
            acceptor: TlsAcceptor::from(config),
            super_user,
            handshake_limit,
            handshakes: AtomicUsize::new(0),
            refusals: Mutex::new(RefusalLog::default()),
        }
    }

    /// Logs a refused connection through the shared rate limit: at most one line per address
    /// per interval, with the count of its refusals left out since.
    fn refused(&self, peer: SocketAddr, what: &str) {
        let logged = self.refusals.lock().refused(peer.ip(), Instant::now());
        if let Some(suppressed) = logged {
            tracing::warn!(%peer, suppressed, "{what}; closing (suppressed: refusals from this \
                address not logged since its last line)");
        }
    }

    /// A place under the handshake cap, or `None` when the cap is reached.
    fn handshake_slot(&self) -> Option<HandshakeSlot<'_>> {
        let before = self.handshakes.fetch_add(1, Ordering::AcqRel);
        let slot = HandshakeSlot(&self.handshakes);
        match self.handshake_limit {
            Some(limit) if before >= limit => None, // `slot` dropped: the count goes back
            _ => Some(slot),
        }
    }

    /// Accepts `tcp`: TLS only, or (`unified`) TLS or plain by its first byte. `None` when the
    /// connection is to be closed: too many handshakes in progress, not TLS on a TLS port, a
    /// failed handshake, a client certificate required and not given, or `HANDSHAKE_IDLE`
    /// passed. Cancellation safe in the sense that dropping it drops the connection and its
    /// place under the handshake cap, and nothing else.
    pub(crate) async fn accept(
        self: Arc<Self>,
        tcp: TcpStream,
        peer: SocketAddr,
        unified: bool,
    ) -> Option<(Accepted, Vec<Id>)> {
        // Counted before the first byte, unified ports included, as ZooKeeper's factory counts
        // (cheaper than telling TLS from plain first).
        let Some(_slot) = self.handshake_slot() else {
            self.refused(peer, "too many TLS handshakes in progress");
            return None;
        };
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
