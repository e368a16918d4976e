//! The contenders of a case and how they meet the server: taking the lock, a contender queued
//! in a task of its own, a connection, a release that counts the holder out, and a forced
//! expiry.
//!
//! Invariants: every await here is bounded by [`WAIT`] and a wait that runs out becomes the
//! case's failure (a `HANG` naming what was awaited), never a panic; a spawned contender dies
//! with its case ([`Task`] aborts on drop), so no case outlives its verdict.

use std::future::Future;
use std::sync::Arc;

use shepherd_client::Client;
use shepherd_recipes::{AnyGuard, Guard, Lock, LockKind};
use shepherd_server::Server;
use shepherd_testkit::{SESSION_TIMEOUT, bounded, try_connect_with};
use tokio::task::JoinHandle;

use crate::WAIT;
use crate::checks::{Holders, not_lost};
use crate::table::BASE;

/// Takes a lock of `kind` on [`BASE`] with a client, waiting as long as it takes.
pub async fn take(kind: LockKind, client: Client) -> shepherd_recipes::Result<AnyGuard> {
    kind.build(&client, BASE).acquire().await
}

/// Awaits `fut`, or fails the case with a "hang" naming `what`.
pub async fn in_time<T>(what: &str, fut: impl Future<Output = T>) -> Result<T, String> {
    bounded(WAIT, what, fut)
        .await
        .map_err(|hang| hang.to_string())
}

/// A client of the case's server, with the kit's session timeout (expiry is always forced).
pub async fn connect(server: &Server) -> Result<Client, String> {
    try_connect_with(&server.connect_string(), SESSION_TIMEOUT, WAIT)
        .await
        .map_err(|hang| hang.to_string())?
        .map_err(|e| format!("connect: {e}"))
}

/// A spawned task, aborted if the case ends before it.
pub struct Task<T>(pub JoinHandle<T>);

impl<T> Task<T> {
    /// The task's outcome, bounded by the caller; a panic in it is the case's failure.
    pub async fn join(&mut self) -> Result<T, String> {
        (&mut self.0).await.map_err(|e| format!("task failed: {e}"))
    }

    /// Whether the task has ended (a waiter that ended early took the lock or failed).
    pub fn is_finished(&self) -> bool {
        self.0.is_finished()
    }
}

impl<T> Drop for Task<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A contender taking the lock in the background, counting itself in as a holder.
pub fn contender(
    kind: LockKind,
    client: Client,
    holders: Arc<Holders>,
    who: &'static str,
) -> Task<shepherd_recipes::Result<AnyGuard>> {
    Task(tokio::spawn(async move {
        let taken = take(kind, client).await;
        if taken.is_ok() {
            holders.enter(who);
        }
        taken
    }))
}

/// Ends a session right now: its connection is cut (so that no held reply can still reach
/// it) and the session expired before the client can reconnect.
pub fn expire_now(server: &Server, session: i64) {
    let _ = server.controls().close_connection(session);
    server.controls().expire_session(session);
}

/// Releases a holder (counting it out first: its delete is what lets the next one in).
pub async fn release(holders: &Holders, held: AnyGuard, who: &str) -> Result<(), String> {
    not_lost(&held, who)?;
    holders.leave();
    in_time(&format!("{who}'s release"), held.release())
        .await?
        .map_err(|e| format!("{who}'s release failed: {e}"))
}
