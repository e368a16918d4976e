//! Waiting for the user: [`stop_signal`], the Ctrl-C or SIGTERM that ends `watch` and
//! `create --hold`, and [`hold`], which keeps a session open until then.

use shepherd_client::Client;

use super::error::{AtPath, CliError};

/// Installs the SIGINT and SIGTERM handlers at once, so that a signal sent as soon as a
/// command announces it is waiting (`watching …`, `holding …`) stops it cleanly rather than
/// killing it; the future resolves on the first of them.
///
/// # Errors
/// [`CliError::Output`] if a handler cannot be installed.
pub(super) fn stop_signal() -> Result<impl Future<Output = ()>, CliError> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt()).map_err(CliError::Output)?;
        let mut terminate = signal(SignalKind::terminate()).map_err(CliError::Output)?;
        Ok(async move {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}

/// Keeps the session open until `stop` (`Ok`) or the session's end (`SessionExpired`…).
pub(super) async fn hold(client: &Client, stop: impl Future<Output = ()>) -> Result<(), CliError> {
    let mut status = client.status_watch();
    let ended = status.wait_for(|s| s.state.is_terminal());
    tokio::select! {
        () = stop => Ok(()),
        _ = ended => Err(client.exists("/").await.err().unwrap_or(shepherd_client::Error::Closed)).at(""),
    }
}
