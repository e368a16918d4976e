//! The folder a benchmark works in: made with its missing ancestors, kept if it exists, so that
//! a run against a server that already has it (a second run, real ZooKeeper) starts the same.

use shepherd_client::{Client, CreateOptions};

use crate::error::{Error, Result};

/// Creates `dir` and each missing ancestor, persistent and empty, unless it exists.
///
/// # Errors
/// [`Error::Client`] naming `dir`, with the client's error.
pub async fn ensure(client: &Client, dir: &str) -> Result<()> {
    client
        .create_all(dir, b"", &CreateOptions::persistent())
        .await
        .map_err(|source| Error::Client {
            what: format!("cannot create {dir}"),
            source,
        })?;
    Ok(())
}
