//! The SASL DIGEST-MD5 exchange on a fresh connection: `sasl` requests (op 102) carrying the
//! tokens of `shepherd_protocol::sasl::DigestMd5Client`, between the handshake and anything
//! else the connection sends.
//!
//! Order, as ZooKeeper 3.8's Java client keeps it (`ClientCnxn`, `ZooKeeperSaslClient`,
//! `ClientCnxnSocket.findSendablePacket`): once the ConnectResponse is in, the client sends an
//! empty token, answers the server's challenge, and checks its `rspauth`; queued requests,
//! `addAuth` credentials and `setWatches` wait until that is done. The exchange runs on every
//! connection of the session, since the server keeps the SASL identity per connection.
//!
//! Invariants: at most [`MAX_STEPS`] tokens are sent, each with its own xid reserved by the
//! caller; the server answers each before the next is sent, so exactly one reply is awaited at
//! a time and must carry the xid just sent. The whole exchange is bounded by one timeout.
//! A refusal (a non-zero code on a `sasl` reply, as the server's `AuthFailed` or
//! `SessionClosedRequireSaslAuth`, or a server proof that does not check) is
//! [`Error::AuthFailed`]; anything else that goes wrong is a lost connection.

use std::io;
use std::time::Duration;

use rand::TryRngCore;
use shepherd_protocol::sasl::{ClientStep, DigestMd5Client, DigestParams, SaslError};
use shepherd_protocol::{ErrorCode, OpCode, Reply, Request, Response, SaslToken, decode_reply};
use tokio::io::{AsyncRead, AsyncWrite};
use tracing::{debug, warn};

use super::link::{Link, next_payload};
use crate::error::Error;
use crate::sasl::SaslOptions;

/// Most tokens one exchange sends: DIGEST-MD5 needs two (empty, then the digest response).
pub(crate) const MAX_STEPS: usize = 4;

/// Authenticates `link` with `options`, sending each token with the next of `xids`, all within
/// `timeout`.
///
/// # Errors
/// [`Error::AuthFailed`] when the server refused the credentials or its proof failed;
/// [`Error::Io`] (timed out, closed) or [`Error::Protocol`] when the connection broke first.
///
/// # Cancellation
/// Dropping the future leaves the link half-authenticated: the caller drops the link with it.
pub(crate) async fn authenticate<S>(
    link: &mut Link<S>,
    options: &SaslOptions,
    xids: [i32; MAX_STEPS],
    timeout: Duration,
) -> Result<(), Error>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let cnonce = fresh_cnonce()?;
    let mut mechanism = DigestMd5Client::new(
        DigestParams::zookeeper(),
        options.username.clone(),
        options.password.clone(),
        cnonce,
    );
    let exchange = async {
        let mut token = mechanism.initial_token();
        for xid in xids {
            let request = Request::Sasl(SaslToken { token: Some(token) });
            link.send(xid, &request);
            link.out.flush().await?;
            let answer = read_answer(link, xid).await?;
            match mechanism.step(&answer) {
                Ok(ClientStep::Respond(next)) => token = next,
                Ok(ClientStep::Complete) => return Ok(()),
                Err(e) => return Err(refused(&link.host, &e)),
            }
        }
        Err(Error::Protocol(format!(
            "SASL exchange not over after {MAX_STEPS} tokens"
        )))
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "SASL exchange timed out"))?
}

/// Reads the reply to the `sasl` request sent with `xid`: the server's token (empty for none).
async fn read_answer<S>(link: &mut Link<S>, xid: i32) -> Result<Vec<u8>, Error>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let payload = next_payload(&mut link.reader, "the SASL exchange").await?;
    let reply = decode_reply(&payload, |x| (x == xid).then_some(OpCode::Sasl))?;
    match reply {
        Reply::Ok(header, Response::Sasl(SaslToken { token })) if header.xid == xid => {
            Ok(token.unwrap_or_default())
        }
        Reply::Err(header) if header.xid == xid => {
            let code = ErrorCode::try_from(header.err)
                .map_or_else(|_| format!("code {}", header.err), |c| c.name().to_owned());
            warn!(host = %link.host, %code, "server refused SASL authentication");
            Err(Error::AuthFailed)
        }
        other => Err(Error::Protocol(format!(
            "expected the reply to sasl xid {xid}, got {other:?}"
        ))),
    }
}

fn refused(host: &str, e: &SaslError) -> Error {
    warn!(%host, error = %e, "SASL authentication failed");
    Error::AuthFailed
}

/// A client nonce: 128 random bits as hex (RFC 2831 §2.1.2 wants it unpredictable and fresh).
/// Drawn straight from the OS random source, as the server draws its secrets: the nonce is
/// what keeps a captured response from being replayed, so it must not come from a user-space
/// generator whose state could be shared or predicted.
///
/// # Errors
/// [`Error::Io`] when the OS random source fails.
fn fresh_cnonce() -> Result<String, Error> {
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng
        .try_fill_bytes(&mut bytes)
        .map_err(|e| io::Error::other(format!("OS random source: {e}")))?;
    let nonce: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    debug!("SASL DIGEST-MD5 exchange starting");
    Ok(nonce)
}
