//! What every case checks, besides its own steps: (a) no orphan left in the server's tree,
//! (b) never two holders (a shared count of holders), the unfaulted holder's `lost()` never
//! fired, each fault rule fired exactly once, and (c) nothing wedged (a fresh contender takes
//! the lock afterwards).
//!
//! Invariant: a check reports a broken rule as the case's failure, a message that starts with
//! what broke (`ORPHAN`, `TWO HOLDERS`, `SPURIOUS lost()`, `HANG`); none of them panics.

use std::sync::Mutex as StdMutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use shepherd_client::Client;
use shepherd_recipes::{AnyGuard, Guard};
use shepherd_server::core::NodeInfo;
use shepherd_server::{FaultId, Server};
use shepherd_testkit::bounded;

use crate::WAIT;
use crate::contenders::{connect, in_time, release, take};
use crate::table::{BASE, LockRow};

/// The shared holder count: (b) never two holders.
#[derive(Default)]
pub struct Holders {
    count: AtomicUsize,
    violations: StdMutex<Vec<String>>,
}

impl Holders {
    /// `who`'s acquire returned: counts it in, noting a violation if someone else holds.
    pub fn enter(&self, who: &str) {
        let before = self.count.fetch_add(1, Ordering::SeqCst);
        if before != 0 {
            self.violations.lock().unwrap().push(format!(
                "TWO HOLDERS: {who} acquired while {before} other holder(s) held the lock"
            ));
        }
    }

    /// The holder is about to release (or its loss was forced on it).
    pub fn leave(&self) {
        self.count.fetch_sub(1, Ordering::SeqCst);
    }

    /// Every violation so far, as the case's failure.
    pub fn check(&self) -> Result<(), String> {
        let v = self.violations.lock().unwrap();
        if v.is_empty() {
            Ok(())
        } else {
            Err(v.join("; "))
        }
    }
}

/// Waits until the rule `id` has fired on `what`.
pub async fn fired(server: &Server, id: FaultId, what: &str) -> Result<(), String> {
    if in_time(
        &format!("the fault on {what} to fire"),
        server.controls().fault_fired(id),
    )
    .await?
    {
        Ok(())
    } else {
        Err(format!("the fault rule on {what} vanished before firing"))
    }
}

/// The rule `id` fired exactly once: the step's request was hit, and nothing else was.
pub fn fired_once(server: &Server, id: FaultId, what: &str) -> Result<(), String> {
    match server.controls().fault_fire_count(id) {
        Some(1) => Ok(()),
        n => Err(format!("the fault on {what} fired {n:?} times, not once")),
    }
}

/// The nodes under [`BASE`] owned by one of `sessions`, described.
fn nodes_of(tree: Vec<NodeInfo>, sessions: &[i64]) -> Vec<String> {
    let prefix = format!("{BASE}/");
    tree.into_iter()
        .filter(|n| n.path.starts_with(&prefix) && sessions.contains(&n.stat.ephemeral_owner))
        .map(|n| format!("{} (session 0x{:x})", n.path, n.stat.ephemeral_owner))
        .collect()
}

/// (a): waits until no lock node of these sessions is left; names the orphans otherwise.
pub async fn no_nodes_of(server: &Server, sessions: &[i64]) -> Result<(), String> {
    let gone = server.wait_for(|core| nodes_of(core.dump_tree(), sessions).is_empty());
    match bounded(WAIT, "no orphan", gone).await {
        Ok(()) => Ok(()),
        Err(_) => Err(format!(
            "ORPHAN: {:?} still there after {WAIT:?}",
            nodes_of(server.controls().dump_tree(), sessions)
        )),
    }
}

/// The holder's guard must not have reported the lock lost.
pub fn not_lost(held: &AnyGuard, who: &str) -> Result<(), String> {
    match held.lost_reason() {
        None => Ok(()),
        Some(r) => Err(format!("SPURIOUS lost(): {who}'s guard reports {r:?}")),
    }
}

/// (c): a fresh contender takes the lock, so nothing was left wedged; then nothing of it is
/// left either.
pub async fn not_wedged(server: &Server, row: &LockRow, holders: &Holders) -> Result<(), String> {
    let c = connect(server).await?;
    let held = in_time(
        "a fresh contender C to take the lock afterwards",
        take(row.kind, c.clone()),
    )
    .await?
    .map_err(|e| format!("C's acquire failed: {e}"))?;
    holders.enter("C");
    release(holders, held, "C").await?;
    no_nodes_of(server, &[c.session_id()]).await?;
    let _ = bounded(WAIT, "a client to close", c.close()).await;
    Ok(())
}

/// How every case ends once its contenders are done: no node of `sessions` left (a), never two
/// holders (b), nothing wedged (c), and still never two holders once C came and went; then the
/// case's `clients` are closed, best effort.
pub async fn all_clear(
    server: &Server,
    row: &LockRow,
    holders: &Holders,
    sessions: &[i64],
    clients: impl IntoIterator<Item = Client>,
) -> Result<(), String> {
    no_nodes_of(server, sessions).await?;
    holders.check()?;
    not_wedged(server, row, holders).await?;
    holders.check()?;
    for c in clients {
        let _ = bounded(WAIT, "a client to close", c.close()).await;
    }
    Ok(())
}
