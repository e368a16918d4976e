//! The accept loop: one task that takes TCP connections off the listener and spawns a task
//! for each, until shutdown.
//!
//! TCP is where the connection limits apply: per client address (`maxClientCnxns`), for the
//! whole server (`maxCnxns`), and the descriptors kept for the server's own files
//! (`descriptors.rs`). A connection over any is closed at once, before anything is read. Past
//! registration, a TCP connection is served as any other stream is (`conn/`). Accept errors are
//! transient (EMFILE and the like) and never end the loop.
//!
//! A refused connection is logged through a [`RefusalLog`]: at most one line per address per
//! interval.

use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::shell::net::refusals::RefusalLog;
use crate::shell::net::tls::accept::Secure;
use crate::shell::net::{conn, descriptors};
use crate::shell::state::shared::Shared;

/// Accepts connections for ensemble member `member` (1 for a single server) until `shutdown`
/// (the member's token) is cancelled. With TLS on, member 1's port serves TLS only on a
/// secure-only server, and TLS beside plain under `client.portUnification` (`net/tls`).
pub(crate) async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    (shutdown, member): (CancellationToken, u64),
    tracker: TaskTracker,
) {
    let tls = &shared.config.tls;
    let secure = match shared.secure.clone().filter(|_| member == 1) {
        Some(secure) if !tls.serves_plain() => Some((secure, false)),
        Some(secure) if tls.unified() => Some((secure, true)),
        _ => None,
    };
    serve(listener, shared, (shutdown, member), tracker, secure, false).await;
}

/// Accepts TLS connections on the secure port (`secureClientPort`) for member 1; with
/// `client.portUnification` plain ones too. The loop lives until `shutdown`, across restarts;
/// each connection belongs to the generation current when it was accepted, so that a restart
/// drops TLS connections as it drops plain ones (`handle/restart.rs`).
pub(crate) async fn secure_accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
    tracker: TaskTracker,
    secure: Arc<Secure>,
) {
    let unified = shared.config.tls.unified();
    serve(
        listener,
        shared,
        (shutdown, 1),
        tracker,
        Some((secure, unified)),
        true,
    )
    .await;
}

async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    (shutdown, member): (CancellationToken, u64),
    tracker: TaskTracker,
    secure: Option<(Arc<Secure>, bool)>,
    follow_generation: bool,
) {
    let mut refusals = RefusalLog::default();
    loop {
        let accepted = tokio::select! {
            _ = shutdown.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((socket, peer)) => {
                let _ = socket.set_nodelay(true);
                let limit = shared.config.max_client_cnxns;
                let generation;
                let parent = if follow_generation {
                    generation = shared.generation.lock().clone();
                    &generation
                } else {
                    &shutdown
                };
                // Past the descriptors' reserve, refused before anything is registered.
                let spawned = descriptors::leaves_reserve(socket.as_raw_fd())
                    && match &secure {
                        None => {
                            conn::spawn(&shared, &tracker, parent, socket, (peer, member), limit)
                        }
                        Some((secure, unified)) => conn::spawn_upgraded(
                            &shared,
                            &tracker,
                            parent,
                            secure.clone().accept(socket, peer, *unified),
                            (peer, member),
                            limit,
                        ),
                    };
                if !spawned && let Some(suppressed) = refusals.refused(peer.ip(), Instant::now()) {
                    tracing::warn!(
                        %peer,
                        per_address_limit = limit,
                        suppressed,
                        "too many connections (from this address, or to the server: maxCnxns or \
                         the open-file limit); closing (suppressed: refusals from it not logged \
                         since its last line)"
                    );
                }
            }
            Err(error) => {
                // Accept errors (EMFILE and the like) are transient; back off briefly instead
                // of spinning.
                tracing::warn!(%error, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}
