//! The unique-ids workload: each operation creates a persistent sequential node under the
//! run's folder and reports the sequence number the server gave it.
//!
//! Invariant: an id is recorded only from the path the server answered, so that two equal ids
//! in a history are two creates the server numbered alike.

use shepherd_client::{Client, CreateMode, CreateOptions};

use crate::proof::history::{F, Recorder, Value};
use crate::proof::workload::op::{
    Outcome, attempt, each_worker, ensure_node, reconnected, sequence_of,
};
use crate::proof::workload::plan::{Plan, Process};

/// Runs the workload (see the module doc).
pub async fn run(clients: &[Client], root: &str, plan: &Plan, recorder: &Recorder) {
    let dir = format!("{root}/ids");
    if let Some(first) = clients.first() {
        ensure_node(first, &dir, b"").await;
    }
    let workers = clients.len();
    let options = CreateOptions::new(CreateMode::PersistentSequential);
    each_worker(clients, |worker, client| {
        let (dir, plan, recorder, options) =
            (dir.clone(), plan.clone(), recorder.clone(), options.clone());
        async move {
            let mut process = Process::new(worker, workers);
            while plan.next() {
                let op = recorder.invoke(process.id(), F::Generate, None, Value::Nil);
                let prefix = format!("{dir}/id-");
                match attempt(client.create(&prefix, b"", &options)).await {
                    Outcome::Ok((path, _)) => match sequence_of(&path) {
                        Some(id) => op.ok(Value::Int(id)),
                        None => op.info(Value::Nil),
                    },
                    Outcome::Fail(_) => op.fail(Value::Nil),
                    Outcome::Info(_) => {
                        op.info(Value::Nil);
                        process.crashed();
                        if !reconnected(&client).await {
                            break;
                        }
                    }
                }
            }
        }
    })
    .await;
}
