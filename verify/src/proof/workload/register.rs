//! The compare-and-set register workload: one node per key under the run's folder, each
//! worker reading (getData), writing (setData at any version) and compare-and-setting (getData,
//! then setData at the version read when the value is the expected one) random small values on
//! random keys.
//!
//! Invariant: a CAS is recorded ok only when its setData carried the version of the read that
//! saw the expected value, so that it took effect exactly where the register held that value;
//! a CAS that saw another value, or lost the race (BadVersion), is a definite fail. Keys start
//! as empty nodes, which reads report as nil: the register's initial value.

use rand::Rng;
use shepherd_client::Client;

use crate::proof::history::{F, Recorder, Value};
use crate::proof::workload::op::{
    Outcome, attempt, each_worker, ensure_node, parse_ints, reconnected, synced,
};
use crate::proof::workload::plan::{Plan, Process};

/// How many keys the register spreads over (each checked on its own).
pub const KEYS: usize = 3;

/// Values are drawn from `0..VALUES`, few enough that CAS often expects the current one.
const VALUES: i64 = 5;

/// Runs the workload (see the module doc).
pub async fn run(clients: &[Client], root: &str, plan: &Plan, recorder: &Recorder) {
    if let Some(first) = clients.first() {
        for key in 0..KEYS {
            ensure_node(first, &key_path(root, key), b"").await;
        }
    }
    let workers = clients.len();
    each_worker(clients, |worker, client| {
        let (root, plan, recorder) = (root.to_owned(), plan.clone(), recorder.clone());
        async move {
            let mut rng = plan.worker_rng(worker);
            let mut process = Process::new(worker, workers);
            while plan.next() {
                let key = rng.random_range(0..KEYS);
                let path = key_path(&root, key);
                let name = format!("k{key}");
                let name = Some(name.as_str());
                let known = match rng.random_range(0..10) {
                    0..4 => read(&client, &path, &recorder, process.id(), name).await,
                    4..7 => {
                        let v = rng.random_range(0..VALUES);
                        write(&client, &path, v, &recorder, process.id(), name).await
                    }
                    _ => {
                        let (old, new) = (rng.random_range(0..VALUES), rng.random_range(0..VALUES));
                        cas(&client, &path, old, new, &recorder, process.id(), name).await
                    }
                };
                if !known {
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

fn key_path(root: &str, key: usize) -> String {
    format!("{root}/k{key}")
}

/// The register's value in a node's data: nil when empty (or not a number).
fn value_of(data: &[u8]) -> Value {
    match parse_ints(data).as_deref() {
        Some([v]) => Value::Int(*v),
        _ => Value::Nil,
    }
}

/// One read; `false` when its outcome is unknown.
async fn read(c: &Client, path: &str, r: &Recorder, p: u64, key: Option<&str>) -> bool {
    let op = r.invoke(p, F::Read, key, Value::Nil);
    match attempt(synced(c, path, c.get_data(path))).await {
        Outcome::Ok((data, _)) => op.ok(value_of(&data)),
        Outcome::Fail(_) => op.fail(Value::Nil),
        Outcome::Info(_) => {
            op.info(Value::Nil);
            return false;
        }
    }
    true
}

/// One blind write of `v`; `false` when its outcome is unknown.
async fn write(c: &Client, path: &str, v: i64, r: &Recorder, p: u64, key: Option<&str>) -> bool {
    let op = r.invoke(p, F::Write, key, Value::Int(v));
    match attempt(c.set_data(path, v.to_string().as_bytes(), None)).await {
        Outcome::Ok(_) => op.ok(Value::Int(v)),
        Outcome::Fail(_) => op.fail(Value::Int(v)),
        Outcome::Info(_) => {
            op.info(Value::Int(v));
            return false;
        }
    }
    true
}

/// One compare-and-set from `old` to `new`; `false` when its outcome is unknown.
async fn cas(
    c: &Client,
    path: &str,
    old: i64,
    new: i64,
    r: &Recorder,
    p: u64,
    key: Option<&str>,
) -> bool {
    let value = Value::Cas(old, new);
    let op = r.invoke(p, F::Cas, key, value.clone());
    let version = match attempt(c.get_data(path)).await {
        Outcome::Ok((data, stat)) if value_of(&data) == Value::Int(old) => stat.version,
        Outcome::Ok(_) | Outcome::Fail(_) => {
            op.fail(value);
            return true;
        }
        Outcome::Info(_) => {
            // Nothing was written yet: the read alone has no effect, a definite fail.
            op.fail(value);
            return true;
        }
    };
    match attempt(c.set_data(path, new.to_string().as_bytes(), Some(version))).await {
        Outcome::Ok(_) => op.ok(value),
        Outcome::Fail(_) => op.fail(value),
        Outcome::Info(_) => {
            op.info(value);
            return false;
        }
    }
    true
}
