//! The mutex workload: every worker, over and over, acquires a lock, writes through the guard
//! (a multi that first checks the lock node exists) its fencing token to one shared node, and
//! releases; in turn for every exclusive lock kind of the recipes ([`LockKind::ALL`] less the
//! read halves, which share by design), each kind a key of its own.
//!
//! Invariants: an acquire is recorded ok with the guard's fencing token (the largest, for a
//! guard on several nodes) only once the recipe handed out a guard, and its release is invoked
//! only after the guarded write ended, so that an acquire-to-release interval covers all the
//! time the worker believed it held the lock. A recipe's error while acquiring or releasing is
//! recorded info: the recipes resolve connection loss themselves, so what remains is unknown.
//!
//! [`contender`] is this workload in the chaos run ([`chaos`](crate::proof::chaos)):
//! it contends for every lock kind, readers too, on the [`family`] lock its kind shares, under
//! the per-session nemesis, and records the holds of its spared writers into the same history
//! this workload's checkers judge.

pub mod contender;
pub mod family;

use shepherd_client::Client;
use shepherd_recipes::{Guard, Lock, LockKind};

use crate::proof::history::{F, Recorder, Value};
use crate::proof::workload::op::{
    OP_TIMEOUT, Outcome, attempt, each_worker, ensure_node, reconnected,
};
use crate::proof::workload::plan::{Plan, Process};

/// How many process ids each kind's run may use before the next kind's begin.
const KIND_PROCESSES: u64 = 1_000_000;

/// The kinds the workload walks: the exclusive ones.
pub fn exclusive_kinds() -> Vec<LockKind> {
    LockKind::ALL
        .into_iter()
        .filter(|k| k.exclusive() == *k)
        .collect()
}

/// Runs the workload over every exclusive kind, the plan's budget shared among them.
pub async fn run(clients: &[Client], root: &str, plan: &Plan, recorder: &Recorder) {
    run_kinds(&exclusive_kinds(), clients, root, plan, recorder).await;
}

/// Runs the workload over `kinds`, one after the other, each with an equal share of the plan.
pub async fn run_kinds(
    kinds: &[LockKind],
    clients: &[Client],
    root: &str,
    plan: &Plan,
    recorder: &Recorder,
) {
    let workers = clients.len();
    for (i, kind) in kinds.iter().copied().enumerate() {
        let share = plan.share(kinds.len() - i);
        let dir = format!("{root}/{}", kind.as_str());
        if let Some(first) = clients.first() {
            ensure_node(first, &dir, b"").await;
            ensure_node(first, &format!("{dir}-resource"), b"").await;
        }
        // Each kind's processes are numbered apart, so that no id spans two kinds.
        let base = KIND_PROCESSES * i as u64;
        each_worker(clients, |worker, client| {
            let (dir, plan, recorder) = (dir.clone(), share.clone(), recorder.clone());
            async move {
                let mut process = Process::new(worker, workers);
                process.skip(base);
                while plan.next() {
                    if !round(kind, &client, &dir, &recorder, process.id()).await {
                        process.crashed();
                        if !reconnected(&client).await {
                            break;
                        }
                    }
                }
            }
        })
        .await;
    }
}

/// One acquire, guarded write, release on `kind`'s lock in `dir`; `false` once an outcome is
/// unknown (the process ends there).
async fn round(kind: LockKind, client: &Client, dir: &str, r: &Recorder, p: u64) -> bool {
    let key = Some(kind.as_str());
    let lock = kind.build(client, dir);
    let acquire = r.invoke(p, F::Acquire, key, Value::Nil);
    let guard = match tokio::time::timeout(OP_TIMEOUT, lock.acquire_timeout(OP_TIMEOUT)).await {
        Ok(Ok(Some(guard))) => guard,
        Ok(Ok(None)) => {
            acquire.fail(Value::Nil);
            return true;
        }
        Ok(Err(_)) | Err(_) => {
            acquire.info(Value::Nil);
            return false;
        }
    };
    let token = guard.fencing_token().into_iter().max().unwrap_or(0);
    acquire.ok(Value::Token(token));

    let resource = format!("{dir}-resource");
    let write = r.invoke(p, F::Write, key, Value::Token(token));
    let data = token.to_string();
    let written = attempt(async {
        guard
            .write(|m| m.set_data(&resource, data.as_bytes(), None))
            .await
            .map_err(into_client_error)
    })
    .await;
    let mut known = true;
    match written {
        Outcome::Ok(_) => write.ok(Value::Token(token)),
        Outcome::Fail(_) => write.fail(Value::Token(token)),
        Outcome::Info(_) => {
            write.info(Value::Token(token));
            known = false;
        }
    }

    let release = r.invoke(p, F::Release, key, Value::Token(token));
    match tokio::time::timeout(OP_TIMEOUT, guard.release()).await {
        Ok(Ok(())) if known => release.ok(Value::Token(token)),
        _ => {
            release.info(Value::Token(token));
            known = false;
        }
    }
    known
}

/// A recipe error as the client's, so that [`attempt`] sorts it: the lock found lost is a
/// definite refusal (the guarded multi's check failed), anything else keeps its client error
/// or is unknown.
fn into_client_error(e: shepherd_recipes::Error) -> shepherd_client::Error {
    match e {
        shepherd_recipes::Error::Client(e) => e,
        shepherd_recipes::Error::LockLost(_) => {
            shepherd_client::Error::Keeper(shepherd_protocol::ErrorCode::NoNode)
        }
        other => shepherd_client::Error::Protocol(other.to_string()),
    }
}
