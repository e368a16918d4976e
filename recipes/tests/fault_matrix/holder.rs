//! The hold and release steps: A holds the row's kind and is faulted, B (the rival kind)
//! waits behind it.
//!
//! Invariant: after a mere reconnect (connection loss, a lost reply) A keeps the lock, its
//! `lost()` silent and B still waiting; after an expiry or a deleted node `lost()` fires with
//! that reason; either way B gets the lock in the end and nothing is left behind.

use std::sync::Arc;

use shepherd_client::Client;
use shepherd_recipes::{AnyGuard, Guard, LostReason};
use shepherd_server::core::Core;
use shepherd_server::{Fault, Server};

use crate::checks::{Holders, all_clear, fired, fired_once, not_lost};
use crate::contenders::{Task, connect, contender, expire_now, in_time, release, take};
use crate::hits::{step_rule, waiting};
use crate::table::{BASE, FaultKind, LockRow, Shape, Step};

pub async fn holder_case(
    server: &Server,
    row: &LockRow,
    step: Step,
    fault: FaultKind,
) -> Result<(), String> {
    let holders = Arc::new(Holders::default());
    let admin = connect(server).await?;
    let a = connect(server).await?;
    let b = connect(server).await?;
    let (a_sid, b_sid) = (a.session_id(), b.session_id());
    let first_conn = server.controls().session(a_sid).and_then(|s| s.conn);
    // The guard monitor's exists watch is sent as the lock is granted: arm before acquiring.
    let monitor_rule = (step == Step::Hold && fault == FaultKind::LostReply).then(|| {
        server
            .controls()
            .add_fault(step_rule(row.shape, Step::Hold, Fault::ApplyThenDrop, "").session(a_sid))
    });
    let a_held = in_time("A to take the free lock", take(row.kind, a.clone()))
        .await?
        .map_err(|e| format!("A's acquire failed: {e}"))?;
    holders.enter("A");
    let a_node = a_held.paths()[0].to_owned();
    let mut b_task = contender(row.kind.exclusive(), b.clone(), holders.clone(), "B");
    in_time(
        "B to wait behind A (its watch registered)",
        server.wait_for(|core| waiting(core, b_sid, row.waits_on, &a_node)),
    )
    .await?;

    // After a mere reconnect: the monitor's watch is back, A keeps the lock, B keeps waiting.
    let quiet = |a_held: &AnyGuard, b_task: &Task<_>| {
        if b_task.is_finished() {
            return Err("TWO HOLDERS: B's acquire ended while A still held the lock".to_string());
        }
        not_lost(a_held, "A (after a mere reconnect)")
    };
    let monitor_back = |core: &Core| {
        core.session_connection(a_sid)
            .is_some_and(|c| Some(c) != first_conn)
            && waiting(core, a_sid, Shape::Predecessor { dir: BASE }, &a_node)
    };
    match (step, fault) {
        (Step::Hold, FaultKind::ConnLoss | FaultKind::LostReply) => {
            // The monitor rule is armed for a lost reply alone, whose dropped reply closes the
            // connection; a connection loss is a plain close.
            match monitor_rule {
                Some(id) => fired(server, id, "A's guard monitor exists").await?,
                None => server
                    .controls()
                    .close_connection(a_sid)
                    .map_err(|e| format!("close_connection: {e}"))?,
            }
            in_time(
                "A to reconnect and its guard monitor to watch its node again",
                server.wait_for(monitor_back),
            )
            .await?;
            settled(server, &a, &b, row, &a_node).await?;
            quiet(&a_held, &b_task)?;
            if let Some(id) = monitor_rule {
                fired_once(server, id, "A's guard monitor exists")?;
            }
            release(&holders, a_held, "A").await?;
        }
        (Step::Hold, FaultKind::Expiry | FaultKind::NodeDeleted) => {
            // A's hold ends here by fiat: B may take the lock from now on.
            holders.leave();
            let expected = if fault == FaultKind::Expiry {
                expire_now(server, a_sid);
                LostReason::SessionExpired
            } else {
                in_time(
                    "the admin's delete of A's node",
                    admin.delete(&a_node, None),
                )
                .await?
                .map_err(|e| format!("admin delete: {e}"))?;
                LostReason::NodeDeleted
            };
            let reason = in_time("A's lost() to fire", a_held.lost()).await?;
            if reason != expected {
                return Err(format!("A's lost() said {reason:?}, not {expected:?}"));
            }
            in_time("A's release of a lost lock", a_held.release())
                .await?
                .map_err(|e| format!("A's release of a lost lock failed: {e}"))?;
        }
        (Step::Delete, _) => {
            let rule = step_rule(row.shape, Step::Delete, fault.server_fault(), "").session(a_sid);
            let id = server.controls().add_fault(rule);
            not_lost(&a_held, "A")?;
            holders.leave();
            let mut releasing = Task(tokio::spawn(a_held.release()));
            fired(server, id, "A's delete").await?;
            if fault == FaultKind::Expiry {
                expire_now(server, a_sid);
            }
            in_time("A's release", releasing.join())
                .await??
                .map_err(|e| format!("A's release failed: {e}"))?;
            fired_once(server, id, "A's delete")?;
        }
        _ => unreachable!("not a holder step"),
    }
    let b_held = in_time("B to take the lock after A", b_task.join())
        .await??
        .map_err(|e| format!("B's acquire failed: {e}"))?;
    release(&holders, b_held, "B").await?;
    all_clear(server, row, &holders, &[a_sid, b_sid], [admin, a, b]).await
}

/// Whatever the reconnect set off has reached both clients, shown by events rather than by a
/// wait: a `sync` round trip on each session returns only after every notification sent to it
/// before, and B's watch still registered on A's node shows that B was not woken (a watch fires
/// once, and is gone from the server when it does).
async fn settled(
    server: &Server,
    a: &Client,
    b: &Client,
    row: &LockRow,
    a_node: &str,
) -> Result<(), String> {
    for (who, client) in [("A", a), ("B", b)] {
        in_time(
            &format!("a round trip on {who}'s session"),
            client.sync("/"),
        )
        .await?
        .map_err(|e| format!("{who}'s sync: {e}"))?;
    }
    let b_sid = b.session_id();
    if server.inspect(|core| waiting(core, b_sid, row.waits_on, a_node)) {
        Ok(())
    } else {
        Err("B's watch on A's node fired: B was woken while A held the lock".to_string())
    }
}
