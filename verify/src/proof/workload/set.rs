//! The grow-only set workload: one node holds the set as comma-separated integers; workers add
//! distinct elements (getData, then setData at the version read, again on BadVersion) and read
//! the whole set.
//!
//! When the budget is spent, one more process reads the set: the final read that the set check
//! judges every acknowledged add against.
//!
//! Invariant: every element added is unique to its invocation (worker and count), so that the
//! checker can tell each add's element in every later read; an add retried after BadVersion is
//! still one operation, ok only when a setData at the version read took effect.

use shepherd_client::Client;

use crate::proof::history::{F, Recorder, Value};
use crate::proof::workload::op::{
    Outcome, add_or_look, attempt, ensure_node, parse_ints, reconnected, synced,
};
use crate::proof::workload::plan::{Plan, Process};

/// Process ids from `workers * FINAL_PROCESSES` on are the final read's.
const FINAL_PROCESSES: u64 = 1_000_000;

/// How many times the final read is tried before the run gives up on it.
const FINAL_TRIES: usize = 20;

/// How many times an add retries after losing a race (BadVersion) before it fails.
const ADD_TRIES: usize = 16;

/// Runs the workload (see the module doc).
pub async fn run(clients: &[Client], root: &str, plan: &Plan, recorder: &Recorder) {
    let path = format!("{root}/set");
    if let Some(first) = clients.first() {
        ensure_node(first, &path, b"").await;
    }
    let workers = clients.len();
    let adding = (path.clone(), recorder.clone());
    let reading = adding.clone();
    add_or_look(
        clients,
        plan,
        move |client, element, process| {
            let (path, recorder) = adding.clone();
            async move { add(&client, &path, element, &recorder, process).await }
        },
        move |client, process| {
            let (path, recorder) = reading.clone();
            async move { read(&client, &path, &recorder, process).await }
        },
    )
    .await;
    // The final read, after every add: what the set check judges against. A process of its
    // own, a new one after each unknown outcome, a bounded number of tries.
    if let Some(first) = clients.first() {
        let mut reader = Process::new(0, 1);
        reader.skip(workers as u64 * FINAL_PROCESSES);
        for _ in 0..FINAL_TRIES {
            if read(first, &path, recorder, reader.id()).await {
                break;
            }
            reader.crashed();
            if !reconnected(first).await {
                break;
            }
        }
    }
}

/// Adds `element`; `false` when the outcome is unknown.
async fn add(c: &Client, path: &str, element: i64, r: &Recorder, p: u64) -> bool {
    let op = r.invoke(p, F::Add, None, Value::Int(element));
    for _ in 0..ADD_TRIES {
        let (mut set, version) = match attempt(c.get_data(path)).await {
            Outcome::Ok((data, stat)) => (parse_ints(&data).unwrap_or_default(), stat.version),
            // Nothing written yet: a definite fail.
            Outcome::Fail(_) | Outcome::Info(_) => break,
        };
        set.push(element);
        let data: Vec<String> = set.iter().map(i64::to_string).collect();
        match attempt(c.set_data(path, data.join(",").as_bytes(), Some(version))).await {
            Outcome::Ok(_) => {
                op.ok(Value::Int(element));
                return true;
            }
            Outcome::Fail(e) if e.is_bad_version() => continue,
            Outcome::Fail(_) => break,
            Outcome::Info(_) => {
                op.info(Value::Int(element));
                return false;
            }
        }
    }
    op.fail(Value::Int(element));
    true
}

/// Reads the whole set; `false` when the outcome is unknown.
async fn read(c: &Client, path: &str, r: &Recorder, p: u64) -> bool {
    let op = r.invoke(p, F::Read, None, Value::Nil);
    match attempt(synced(c, path, c.get_data(path))).await {
        Outcome::Ok((data, _)) => {
            let mut set = parse_ints(&data).unwrap_or_default();
            set.sort_unstable();
            op.ok(Value::Ints(set));
        }
        Outcome::Fail(_) => op.fail(Value::Nil),
        Outcome::Info(_) => {
            op.info(Value::Nil);
            return false;
        }
    }
    true
}
