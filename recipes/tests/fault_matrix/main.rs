//! The fault matrix: every lock recipe × every step of acquiring, holding and releasing × every
//! fault, each case against its own fresh embedded server, the cases run in parallel.
//!
//! The matrix is data: [`rows`] (one [`LockRow`] per lock type, strategy and half), [`STEPS`]
//! and [`FAULTS`]; [`not_applicable`] says which cells do not exist and why. Adding a lock adds
//! a row. The test prints the table at the end; with `SHEPHERD_WRITE_FAULT_MATRIX=1` it also
//! writes it to `docs/fault-matrix.md`. `SHEPHERD_FAULT_CASE=<substring>` runs only the cases
//! whose id (`<lock>/<step>/<fault>`) contains it.
//!
//! The binary's modules: [`table`] holds the rows, steps and faults and why a cell does not
//! apply; [`hits`] where each step's fault hits on the server; [`waiter`] and [`holder`] run
//! the acquire steps and the hold/release steps of one case; [`contenders`] and [`checks`] are
//! what they are made of; [`report`] writes the table. Servers, connections, bounded waits and
//! panic messages come from `shepherd-testkit`.
//!
//! Each case checks:
//! * (a) no orphan: once every contender has released (or its session is gone), the lock
//!   folders hold no node of any contender's session (read from the server's tree);
//! * (b) never two holders: every contender counts itself into a shared counter when its
//!   acquire returns and out just before it releases (or when its loss is forced on it); the
//!   counter must never exceed one, and a waiter must still be waiting while the holder holds;
//! * (c) no hang: every await is bounded ([`WAIT`]) and a timed-out wait fails the case with a
//!   message naming lock × step × fault and what was awaited; a fresh contender must then take
//!   the lock (not wedged);
//! * (d) `lost()`: fires (with the right reason) on expiry or deletion of the node while
//!   holding, and does not fire after a mere reconnect (connection cut, or a lost reply, while
//!   holding: checked after the monitor's watch is back and a sync round trip on each session), nor for the
//!   unfaulted holder.
//!
//! Faults: connection loss is `Fault::DropBeforeApply` on the step's request (while holding:
//! `close_connection`); lost reply is `Fault::ApplyThenDrop` (while holding: the guard monitor's
//! exists-with-watch); expiry is `Fault::Delay` on the step's request (applied, reply held) then
//! `close_connection` + `expire_session` as soon as the rule fires, so the session ends right
//! after that request was applied and before the client hears of it (while holding:
//! `expire_session`); node deleted (holding only) is a delete by an admin client.

mod checks;
mod contenders;
mod hits;
mod holder;
mod report;
mod table;
mod waiter;

use std::sync::Arc;
use std::time::{Duration, Instant};

use shepherd_testkit::{bounded, embedded, panic_message};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::holder::holder_case;
use crate::report::{Cell, markdown};
use crate::table::{
    FAULTS, FaultKind, LockRow, STEPS, Step, case_id, known_bug, not_applicable, rows,
};
use crate::waiter::waiter_case;

/// The bound on every single wait for something that must happen.
const WAIT: Duration = Duration::from_secs(10);
/// The bound on a whole case (a backstop: every wait inside is bounded by [`WAIT`]).
const CASE_LIMIT: Duration = Duration::from_secs(40);
/// How long the reply of a request hit by an "expiry" fault is held (the session is expired and
/// the connection closed long before).
const HELD_REPLY: Duration = Duration::from_secs(120);
/// Cases in flight at once (each has its own server and three or four clients).
const PARALLEL: usize = 24;

/// One case, against a fresh embedded server of its own.
async fn run_case(row: LockRow, step: Step, fault: FaultKind) -> Result<(), String> {
    let test_server = embedded().await;
    let server = test_server.embedded().expect("an embedded server");
    let result = match step {
        Step::Hold | Step::Delete if !row.inner => holder_case(server, &row, step, fault).await,
        _ => waiter_case(server, &row, step, fault).await,
    };
    let _ = bounded(WAIT, "the server's shutdown", server.shutdown()).await;
    result
}

/// Runs every case that applies (or those `SHEPHERD_FAULT_CASE` selects), prints the table,
/// writes it with `SHEPHERD_WRITE_FAULT_MATRIX=1`, and fails if any case failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_matrix() {
    let started = Instant::now();
    let rows = rows();
    let filter = std::env::var("SHEPHERD_FAULT_CASE")
        .ok()
        .filter(|f| !f.is_empty());
    let permits = Arc::new(Semaphore::new(PARALLEL));
    let mut cells = vec![vec![Cell::Skipped; STEPS.len() * FAULTS.len()]; rows.len()];
    let mut cases = JoinSet::new();
    for (r, row) in rows.iter().enumerate() {
        for (s, step) in STEPS.into_iter().enumerate() {
            for (f, fault) in FAULTS.into_iter().enumerate() {
                let at = s * FAULTS.len() + f;
                if let Some(why) = not_applicable(row, step, fault) {
                    cells[r][at] = Cell::NotApplicable(why);
                    continue;
                }
                let id = case_id(row, step, fault);
                if filter.as_ref().is_some_and(|f| !id.contains(f.as_str())) {
                    continue;
                }
                let (row, permits) = (*row, permits.clone());
                cases.spawn(async move {
                    let _permit = permits.acquire_owned().await.expect("semaphore");
                    let t = Instant::now();
                    let result =
                        match bounded(CASE_LIMIT, "the whole case", run_case(row, step, fault))
                            .await
                        {
                            Ok(Ok(())) => Ok(()),
                            Ok(Err(e)) => Err(e),
                            Err(_) => Err(format!("HANG: the whole case took over {CASE_LIMIT:?}")),
                        };
                    (r, at, id, result, t.elapsed())
                });
            }
        }
    }
    let mut slowest = Vec::new();
    while let Some(joined) = cases.join_next().await {
        let (r, at, id, result, took) = match joined {
            Ok(done) => done,
            Err(e) => panic!(
                "a case task failed outside its own checks: {}",
                panic_message(e)
            ),
        };
        slowest.push((took, id.clone()));
        let (step, fault) = (STEPS[at / FAULTS.len()], FAULTS[at % FAULTS.len()]);
        let known = known_bug(rows[r].slug, step, fault);
        cells[r][at] = match (result, known) {
            (Ok(()), None) => Cell::Pass,
            (Ok(()), Some(why)) => Cell::KnownPassed(why),
            (Err(e), None) => Cell::Fail(format!("{id}: {e}")),
            (Err(e), Some(why)) => Cell::KnownFail(why, format!("{id}: {e}")),
        };
    }
    let elapsed = started.elapsed();
    slowest.sort();
    slowest.reverse();

    let table = markdown(&rows, &cells, elapsed, filter.is_some());
    println!("{table}");
    println!("slowest cases: {:?}", &slowest[..slowest.len().min(5)]);
    if filter.is_none() && std::env::var_os("SHEPHERD_WRITE_FAULT_MATRIX").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/fault-matrix.md");
        std::fs::write(path, &table).expect("write docs/fault-matrix.md");
        println!("wrote {path}");
    }
    let failures: Vec<&String> = cells
        .iter()
        .flatten()
        .filter_map(|c| match c {
            Cell::Fail(e) => Some(e),
            _ => None,
        })
        .collect();
    for c in cells.iter().flatten() {
        match c {
            Cell::KnownFail(why, e) => println!("known bug ({why}): {e}"),
            Cell::KnownPassed(why) => {
                println!("warning: a cell listed in KNOWN_BUGS passed ({why}); remove it")
            }
            _ => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} fault-matrix case(s) failed:\n{}",
        failures.len(),
        failures
            .iter()
            .map(|e| e.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
