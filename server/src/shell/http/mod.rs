//! The HTTP server of the operations endpoints: ZooKeeper's AdminServer (`/commands`,
//! `/commands/<name>`, [`commands`]), the Prometheus provider's `/metrics` ([`metrics`]), and the
//! token-guarded test controls ([`controls`], on a loopback listener of their own).
//!
//! Shape, as the rest of the shell: the listeners are bound before the server serves
//! ([`Listeners`]), and one task accepts ([`accept_loop`]) and spawns one task per HTTP connection,
//! all tracked and all stopped by the server's shutdown token. A listener serves the admin
//! commands, the metrics, or both (when the two are configured on the same address). Answers are
//! computed synchronously from the shared state: the core lock is taken and released inside a
//! query, never across an `.await`. With a data directory an answer is sent only once what it
//! shows is on disk (`Shared::durable_view`), and never once the log has failed (503).
//!
//! A slow or hostile peer cannot stall anything but its own task: request heads are bounded in size
//! ([`MAX_HEAD_BYTES`]) and in time ([`HEAD_TIMEOUT`]), request bodies are never read (the test
//! controls read theirs, bounded in size, after the token is checked), a connection lives at most
//! [`CONNECTION_LIFETIME`], and at most [`MAX_CONNECTIONS`] are served at once (more are closed on
//! accept).

mod commands;
pub(crate) mod controls;
mod listeners;
mod metrics;

pub(crate) use listeners::Listeners;

use std::convert::Infallible;
use std::future::Future;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{ALLOW, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::shell::net::descriptors;
use crate::shell::net::refusals::RefusalLog;
use crate::shell::state::shared::Shared;

/// How long a peer has to send a request head.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest request head read (hyper's minimum buffer).
pub const MAX_HEAD_BYTES: usize = 8 * 1024;
/// How long one HTTP connection may stay open, keep-alive included.
pub const CONNECTION_LIFETIME: Duration = Duration::from_secs(60);
/// HTTP connections served at once per listener.
pub const MAX_CONNECTIONS: usize = 64;
/// How long a connection gets to finish its answer once the server shuts down.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// What one listener serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Endpoints {
    /// `/commands` and `/commands/<name>`.
    pub admin: bool,
    /// `/metrics`.
    pub metrics: bool,
}

/// One answer, computed by a [`Handler`].
pub(crate) type Reply = Response<Full<Bytes>>;

/// What a listener does with each request: the AdminServer and `/metrics` answer at once, the
/// test controls read a body first. Shared by every connection of the listener.
pub(crate) type Handler =
    Arc<dyn Fn(Request<Incoming>) -> Pin<Box<dyn Future<Output = Reply> + Send>> + Send + Sync>;

/// Accepts HTTP connections for the AdminServer and `/metrics` until `shutdown` is cancelled.
pub(crate) async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    endpoints: Endpoints,
    shutdown: CancellationToken,
    tracker: TaskTracker,
) {
    let handler: Handler = Arc::new(move |request| {
        let shared = shared.clone();
        Box::pin(async move {
            let response = answer_off_workers(&shared, endpoints, request).await;
            // Shown only once what it shows is on disk; never if the log failed.
            shared.durable_view(response).await.unwrap_or_else(|| {
                plain(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the transaction log failed\n",
                )
            })
        })
    });
    serve(listener, handler, shutdown, tracker).await;
}

/// Accepts HTTP connections until `shutdown` is cancelled, each answered by `handler`.
pub(crate) async fn serve(
    listener: TcpListener,
    handler: Handler,
    shutdown: CancellationToken,
    tracker: TaskTracker,
) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    // A client retrying in a tight loop must not flood the log: one line per address per
    // interval, as the client port's refusals.
    let mut refusals = RefusalLog::default();
    loop {
        let accepted = tokio::select! {
            _ = shutdown.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let (socket, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Transient (EMFILE and the like): back off instead of spinning.
                tracing::warn!(%error, "HTTP accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // Past the descriptors' reserve (`net/descriptors.rs`) as past the limit: refused.
        let slot = if descriptors::leaves_reserve(socket.as_raw_fd()) {
            slots.clone().try_acquire_owned().ok()
        } else {
            None
        };
        let Some(slot) = slot else {
            if let Some(suppressed) = refusals.refused(peer.ip(), tokio::time::Instant::now()) {
                tracing::warn!(%peer, suppressed, "too many HTTP connections; closing");
            }
            continue;
        };
        let handler = handler.clone();
        let shutdown = shutdown.clone();
        tracker.spawn(async move {
            serve_connection(socket, handler, shutdown).await;
            drop(slot);
        });
    }
}

async fn serve_connection(
    socket: tokio::net::TcpStream,
    handler: Handler,
    shutdown: CancellationToken,
) {
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let response = handler(request);
        async move { Ok::<_, Infallible>(response.await) }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .max_buf_size(MAX_HEAD_BYTES)
        .serve_connection(TokioIo::new(socket), service);
    tokio::pin!(connection);
    let lifetime = tokio::time::sleep(CONNECTION_LIFETIME);
    tokio::pin!(lifetime);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(error) = result {
                tracing::debug!(%error, "HTTP connection ended");
            }
            return;
        }
        _ = shutdown.cancelled() => {}
        _ = &mut lifetime => {}
    }
    // Finish the answer in flight, if any, then close.
    connection.as_mut().graceful_shutdown();
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, connection).await;
}

/// [`answer`], with the AdminServer's commands that list state (`dump`, `watches`, …) on a
/// blocking thread, one at a time server-wide: seconds of CPU that must not stall the async
/// workers, nor be built once per connection of a flood (as the four-letter words,
/// `observe/admin.rs`). The permit travels with the blocking job, so a client that goes away
/// does not free it while the walk still runs; the other commands answer at once.
async fn answer_off_workers(
    shared: &Arc<Shared>,
    endpoints: Endpoints,
    request: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let (method, path) = (request.method().clone(), request.uri().path().to_owned());
    let walks = path
        .strip_prefix("/commands/")
        .is_some_and(commands::walks_state);
    if !walks {
        return answer(shared, endpoints, &method, &path);
    }
    let Ok(permit) = Arc::clone(&shared.walks).acquire_owned().await else {
        return plain(StatusCode::SERVICE_UNAVAILABLE, "shutting down\n");
    };
    let shared = Arc::clone(shared);
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        answer(&shared, endpoints, &method, &path)
    })
    .await
    .unwrap_or_else(|_| plain(StatusCode::INTERNAL_SERVER_ERROR, "the command failed\n"))
}

/// The response to one request.
fn answer(
    shared: &Shared,
    endpoints: Endpoints,
    method: &Method,
    path: &str,
) -> Response<Full<Bytes>> {
    if method != Method::GET && method != Method::HEAD {
        // A 405 must say which methods are allowed (RFC 9110 §15.5.6).
        let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    if endpoints.metrics && path == "/metrics" {
        return match metrics::scrape(shared) {
            Ok(text) => with_type(StatusCode::OK, metrics::CONTENT_TYPE, text),
            Err(error) => plain(StatusCode::INTERNAL_SERVER_ERROR, &format!("{error}\n")),
        };
    }
    if endpoints.admin {
        if path == "/commands" || path == "/commands/" {
            return with_type(StatusCode::OK, "text/html", commands::list());
        }
        if let Some(name) = path.strip_prefix("/commands/") {
            // ZooKeeper answers every name, unknown ones with its error JSON and 200 OK.
            let body = commands::run(shared, name);
            let text = serde_json::to_string_pretty(&body).unwrap_or_default();
            return with_type(StatusCode::OK, "application/json", text);
        }
    }
    plain(StatusCode::NOT_FOUND, "not found\n")
}

fn plain(status: StatusCode, text: &str) -> Reply {
    with_type(status, "text/plain; charset=utf-8", text.to_string())
}

fn with_type(
    status: StatusCode,
    content_type: &'static str,
    body: String,
) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}
