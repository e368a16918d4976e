//! One attempt to open a connection of the session: the connector's stream, the handshake,
//! then (when configured) the SASL exchange, so that a link handed to the driver is ready for
//! credentials, watches and requests.
//!
//! Invariants: a handshake that ends the session (expired, or another session than the one
//! resumed) is returned as it is, without SASL, for the driver to judge; SASL runs only on a
//! live session. The handshake and the SASL exchange are each bounded by the connect timeout.

use std::future::Future;
use std::io;
use std::time::Duration;

use shepherd_protocol::{ConnectRequest, ConnectResponse};
use tokio::io::{AsyncRead, AsyncWrite};

use super::link::{Link, handshake};
use super::sasl::{MAX_STEPS, authenticate};
use crate::error::Error;
use crate::sasl::SaslOptions;

/// What one attempt needs besides the stream.
pub(crate) struct Attempt {
    pub(crate) host: String,
    pub(crate) request: ConnectRequest,
    /// The limit on the handshake, and again on the SASL exchange.
    pub(crate) timeout: Duration,
    pub(crate) max_frame: usize,
    /// SASL credentials and the xids reserved for their tokens.
    pub(crate) sasl: Option<(SaslOptions, [i32; MAX_STEPS])>,
}

/// Whether `response` ends a session that asked to resume `session_id` (0: a new session).
pub(crate) fn ends_session(response: &ConnectResponse, session_id: i64) -> bool {
    response.is_expired() || (session_id != 0 && response.session_id != session_id)
}

/// Runs one attempt on the stream `open` yields.
///
/// # Errors
/// As [`handshake`]; [`Error::AuthFailed`] when the server refused the SASL credentials (the
/// session is then over, on every server); the SASL exchange's I/O and protocol errors.
///
/// # Cancellation
/// Dropping the future drops the stream and any half-made link; nothing else is left.
pub(crate) async fn connect_once<S>(
    attempt: Attempt,
    open: impl Future<Output = io::Result<S>>,
) -> Result<(Link<S>, ConnectResponse), Error>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let session_id = attempt.request.session_id;
    let (mut link, response) = handshake(
        attempt.host,
        open,
        attempt.request,
        attempt.timeout,
        attempt.max_frame,
    )
    .await?;
    if ends_session(&response, session_id) {
        return Ok((link, response));
    }
    if let Some((options, xids)) = &attempt.sasl {
        authenticate(&mut link, options, *xids, attempt.timeout).await?;
    }
    Ok((link, response))
}
