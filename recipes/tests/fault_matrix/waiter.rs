//! The acquire steps (create, list, watch, wake) and the inner mutex's delete: A holds the
//! rival kind, B (of the row's kind) queues behind it and one of B's requests is faulted.
//!
//! Invariant: B ends with the lock (or, after an expiry, with the end of its session, or a
//! guard that reports it), and A and B leave nothing behind; see the checks.

use std::sync::Arc;

use shepherd_recipes::{Error as RecipeError, Guard, LostReason};
use shepherd_server::Server;

use crate::checks::{Holders, all_clear, fired, fired_once};
use crate::contenders::{connect, contender, expire_now, in_time, release, take};
use crate::hits::{step_rule, waiting};
use crate::table::{FaultKind, LockRow, Step};

/// Acquire steps: A holds the rival kind; B, of this row's kind, is faulted while it queues.
pub async fn waiter_case(
    server: &Server,
    row: &LockRow,
    step: Step,
    fault: FaultKind,
) -> Result<(), String> {
    let holders = Arc::new(Holders::default());
    let a = connect(server).await?;
    let b = connect(server).await?;
    let (a_sid, b_sid) = (a.session_id(), b.session_id());
    let a_held = in_time(
        "A to take the free lock",
        take(row.kind.exclusive(), a.clone()),
    )
    .await?
    .map_err(|e| format!("A's acquire failed: {e}"))?;
    holders.enter("A");
    let blocker = a_held.paths()[0].to_owned();
    let rule = step_rule(row.shape, step, fault.server_fault(), &blocker).session(b_sid);
    let what = format!("B's {} request", step.slug());

    let mut a_held = Some(a_held);
    // The re-check looks like the first look, and the inner mutex's delete comes only once A
    // has released: arm these rules once B is waiting, then release A.
    let late = step == Step::Wake || (row.inner && step == Step::Delete);
    let (mut b_task, fault_id) = if late {
        let b_task = contender(row.kind, b.clone(), holders.clone(), "B");
        in_time(
            "B to wait behind A (its watch registered)",
            server.wait_for(|core| waiting(core, b_sid, row.waits_on, &blocker)),
        )
        .await?;
        let id = server.controls().add_fault(rule);
        release(&holders, a_held.take().expect("held"), "A").await?;
        (b_task, id)
    } else {
        let id = server.controls().add_fault(rule);
        (contender(row.kind, b.clone(), holders.clone(), "B"), id)
    };
    fired(server, fault_id, &what).await?;
    if fault == FaultKind::Expiry {
        expire_now(server, b_sid);
    }

    let outcome = if let Some(a_held) = a_held.take() {
        if fault == FaultKind::Expiry {
            let outcome = in_time("B's acquire to fail after its expiry", b_task.join()).await??;
            release(&holders, a_held, "A").await?;
            outcome
        } else {
            in_time(
                "B to wait behind A again after the fault",
                server.wait_for(|core| waiting(core, b_sid, row.waits_on, &blocker)),
            )
            .await?;
            if b_task.is_finished() {
                return Err("B's acquire ended while A still held the lock".into());
            }
            release(&holders, a_held, "A").await?;
            in_time("B to take the lock A released", b_task.join()).await??
        }
    } else {
        in_time("B's acquire to end", b_task.join()).await??
    };
    match (fault, outcome) {
        (FaultKind::Expiry, Err(RecipeError::Client(e))) if e.is_session_ended() => {}
        (FaultKind::Expiry, Err(e)) => {
            return Err(format!(
                "B's acquire failed with {e:?}, not with the end of its session"
            ));
        }
        // Acquired just before the expiry (the inner mutex's delete comes after the lease is
        // granted): then the guard must report the loss.
        (FaultKind::Expiry, Ok(held)) => {
            let reason = in_time("B's lost() after its expiry", held.lost()).await?;
            if reason != LostReason::SessionExpired {
                return Err(format!("B's lost() said {reason:?} after its expiry"));
            }
            holders.leave();
            in_time("B's release of a lost lock", held.release())
                .await?
                .map_err(|e| format!("B's release of a lost lock failed: {e}"))?;
        }
        (_, Ok(held)) => release(&holders, held, "B").await?,
        (_, Err(e)) => return Err(format!("B's acquire failed: {e}")),
    }
    fired_once(server, fault_id, &what)?;
    all_clear(server, row, &holders, &[a_sid, b_sid], [a, b]).await
}
