//! How a chaos client reaches the server: loopback TCP (the `proof` binary's `locks` run: the
//! whole stack, listener included), or an in-memory pipe served by [`Server::serve_io`] (the test:
//! under a paused tokio clock, a pipe never leaves the runtime, so virtual time cannot jump
//! ahead while bytes are in flight in the kernel).
//!
//! Either way every reconnect opens a fresh stream, so a cut, a freeze or an expiry is met by
//! the client's own reconnect logic.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use shepherd_client::{Client, Error};
use shepherd_server::Server;

/// Bytes buffered each way in an in-memory pipe: a frozen connection backs up into it.
const PIPE_BUFFER: usize = 64 * 1024;

/// The stream a chaos client talks over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `serve_io` over `tokio::io::duplex`.
    InMemory,
    /// TCP to the server's loopback listener.
    Tcp,
}

/// Opens a session with `session_timeout`.
///
/// # Errors
/// The client's, when the first connection fails.
///
/// # Cancellation
/// As [`shepherd_client::ClientBuilder::connect`]: dropping it abandons the attempt.
pub async fn connect(
    server: &Arc<Server>,
    transport: Transport,
    session_timeout: Duration,
) -> Result<Client, Error> {
    let builder = Client::builder()
        .session_timeout(session_timeout)
        .connect_timeout(session_timeout);
    let addr = server.connect_string();
    match transport {
        Transport::Tcp => builder.connect(&addr).await,
        Transport::InMemory => {
            let server = server.clone();
            let connector = move |_host: &str| {
                let (client_end, server_end) = tokio::io::duplex(PIPE_BUFFER);
                server.serve_io(server_end);
                async move { Ok::<_, io::Error>(client_end) }
            };
            builder.connect_with(&addr, connector).await
        }
    }
}
