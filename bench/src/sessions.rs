//! The sessions a benchmark opens: [`connect_one`] as each is opened, [`connect_many`] for N of
//! them, each on its own connection as N processes would have, a few at a time.
//!
//! Invariant: every session goes into the caller's vector as soon as it is open, in the order
//! asked for, so that a failure, or a deadline around the call, leaves the caller holding
//! exactly the sessions it has to close.

use std::time::Duration;

use futures_util::{StreamExt, stream};
use shepherd_client::Client;

use crate::error::{Error, Result};

/// Sessions connecting at once.
const CONNECT_PARALLELISM: usize = 64;

/// One session to `connect`, with a 30 s session timeout and a 10 s connect timeout.
///
/// # Errors
/// The client's, unchanged.
pub async fn connect_one(connect: &str) -> Result<Client, shepherd_client::Error> {
    Client::builder()
        .session_timeout(Duration::from_secs(30))
        .connect_timeout(Duration::from_secs(10))
        .connect(connect)
        .await
}

/// Opens `n` sessions to `connect` as [`connect_one`] does into `clients`,
/// [`CONNECT_PARALLELISM`] at a time.
///
/// # Errors
/// [`Error::Session`] for the first session that cannot be opened; those opened before it stay
/// in `clients`.
pub async fn connect_many(connect: &str, n: usize, clients: &mut Vec<Client>) -> Result<()> {
    let mut opening = stream::iter(0..n)
        .map(|index| async move { (index, connect_one(connect).await) })
        .buffered(CONNECT_PARALLELISM);
    clients.reserve(n);
    while let Some((index, opened)) = opening.next().await {
        match opened {
            Ok(client) => clients.push(client),
            Err(source) => {
                return Err(Error::Session {
                    number: index + 1,
                    of: n,
                    open: clients.len(),
                    source,
                });
            }
        }
    }
    Ok(())
}
