//! Bounded waits: the one bound ([`WAIT`]) on anything a test waits for, and the ways to apply
//! it.
//!
//! Invariant: a test never sleeps to let something happen; it awaits the event that says it
//! happened (a reply, a status change, a watch, a server predicate), and that await is bounded
//! so that a lost event fails the test with a message naming it instead of hanging it. The bound
//! is generous because it only matters when something is already wrong, and the tests share a
//! small, busy machine.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use shepherd_client::{SessionState, SessionStatus};
use tokio::sync::watch;

/// The bound on any single wait for something that must happen.
pub const WAIT: Duration = Duration::from_secs(30);

/// A bounded wait ran out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hang {
    /// What was awaited.
    pub what: String,
    /// How long it was awaited.
    pub after: Duration,
}

impl fmt::Display for Hang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "HANG: nothing after {:?} waiting for {}",
            self.after, self.what
        )
    }
}

impl std::error::Error for Hang {}

/// Awaits `fut` for at most `limit`; a [`Hang`] naming `what` otherwise. For callers that
/// report failures as values (a matrix of cases, each with its own verdict).
pub async fn bounded<F: Future>(limit: Duration, what: &str, fut: F) -> Result<F::Output, Hang> {
    tokio::time::timeout(limit, fut).await.map_err(|_| Hang {
        what: what.to_owned(),
        after: limit,
    })
}

/// [`bounded`] by [`WAIT`].
pub async fn try_within<F: Future>(what: &str, fut: F) -> Result<F::Output, Hang> {
    bounded(WAIT, what, fut).await
}

/// Awaits `fut`, failing the test after [`WAIT`] with a message naming `what`.
pub async fn within<F: Future>(what: &str, fut: F) -> F::Output {
    try_within(what, fut)
        .await
        .unwrap_or_else(|hang| panic!("{hang}"))
}

/// Waits until the session reaches `state` (the current status counts) and returns that status.
pub async fn wait_state(
    rx: &mut watch::Receiver<SessionStatus>,
    state: SessionState,
) -> SessionStatus {
    within(
        &format!("session state {state:?}"),
        rx.wait_for(|s| s.state == state),
    )
    .await
    .expect("the status channel closed")
    .clone()
}
