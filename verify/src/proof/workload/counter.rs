//! The counter workload: the counter is the number of children of one folder; an increment by
//! `n` is one multi of `n` sequential creates (all or none), a read lists the folder.
//!
//! Invariant: an increment is recorded ok only when its multi committed, fail only when
//! ZooKeeper rolled it back, so that every read must lie between the ok increments completed
//! before it and all increments (ok or unknown) invoked before it ended.

use rand::Rng;
use shepherd_client::{Client, CreateMode, CreateOptions};

use crate::proof::history::{F, Recorder, Value};
use crate::proof::workload::op::{Outcome, attempt, each_worker, ensure_node, reconnected, synced};
use crate::proof::workload::plan::{Plan, Process};

/// The largest increment.
const MAX_ADD: i64 = 3;

/// Runs the workload (see the module doc).
pub async fn run(clients: &[Client], root: &str, plan: &Plan, recorder: &Recorder) {
    let dir = format!("{root}/counter");
    if let Some(first) = clients.first() {
        ensure_node(first, &dir, b"").await;
    }
    let workers = clients.len();
    each_worker(clients, |worker, client| {
        let (dir, plan, recorder) = (dir.clone(), plan.clone(), recorder.clone());
        async move {
            let mut rng = plan.worker_rng(worker);
            let mut process = Process::new(worker, workers);
            let options = CreateOptions::new(CreateMode::PersistentSequential);
            let prefix = format!("{dir}/n-");
            while plan.next() {
                let known = if rng.random_bool(0.6) {
                    let n = rng.random_range(1..=MAX_ADD);
                    let op = recorder.invoke(process.id(), F::Add, None, Value::Int(n));
                    let multi =
                        (0..n).fold(client.multi(), |m, _| m.create(&prefix, b"", &options));
                    match attempt(multi.commit()).await {
                        Outcome::Ok(_) => {
                            op.ok(Value::Int(n));
                            true
                        }
                        Outcome::Fail(_) => {
                            op.fail(Value::Int(n));
                            true
                        }
                        Outcome::Info(_) => {
                            op.info(Value::Int(n));
                            false
                        }
                    }
                } else {
                    let op = recorder.invoke(process.id(), F::Read, None, Value::Nil);
                    match attempt(synced(&client, &dir, client.get_children(&dir))).await {
                        Outcome::Ok(children) => {
                            op.ok(Value::Int(children.len() as i64));
                            true
                        }
                        Outcome::Fail(_) => {
                            op.fail(Value::Nil);
                            true
                        }
                        Outcome::Info(_) => {
                            op.info(Value::Nil);
                            false
                        }
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
