//! The total queue workload: enqueue creates a persistent sequential node holding a distinct
//! element; dequeue reads the head node's version, lists the items, reads the smallest, and in
//! one multi checks the head's version, bumps it and deletes that item. When the budget is
//! spent, one worker drains what is left the same way.
//!
//! Invariant: dequeues are totally ordered by the head node (each multi checks and bumps its
//! version), and the item taken was the smallest when the head was read (later enqueues number
//! higher), so a dequeue is ok only with the element it removed; an empty queue is a fail.

use shepherd_client::{Client, CreateMode, CreateOptions};

use crate::proof::history::{F, Recorder, Value};
use crate::proof::workload::op::{
    Outcome, add_or_look, attempt, ensure_node, parse_ints, reconnected, sequence_of,
};
use crate::proof::workload::plan::{Plan, Process};

/// Process ids from `workers * DRAIN_PROCESSES` on are the drain's, apart from the workers'.
const DRAIN_PROCESSES: u64 = 1_000_000;

/// How many dequeues the final drain may make beyond the enqueues attempted: bounds it.
const DRAIN_SLACK: u64 = 16;

/// Runs the workload (see the module doc).
pub async fn run(clients: &[Client], root: &str, plan: &Plan, recorder: &Recorder) {
    let (items, head) = (format!("{root}/items"), format!("{root}/head"));
    let Some(first) = clients.first() else {
        return;
    };
    ensure_node(first, &items, b"").await;
    ensure_node(first, &head, b"").await;
    let workers = clients.len();
    let adding = (items.clone(), recorder.clone());
    let taking = (items.clone(), head.clone(), recorder.clone());
    add_or_look(
        clients,
        plan,
        move |client, element, process| {
            let (items, recorder) = adding.clone();
            async move { enqueue(&client, &items, element, &recorder, process).await }
        },
        move |client, process| {
            let (items, head, recorder) = taking.clone();
            async move {
                dequeue(&client, &items, &head, &recorder, process).await != Taken::Unknown
            }
        },
    )
    .await;
    // The drain: processes of its own, after every worker; a new one after each unknown
    // outcome, as for the workers.
    let mut drainer = Process::new(0, 1);
    drainer.skip(workers as u64 * DRAIN_PROCESSES);
    for _ in 0..plan.ops_limit() + DRAIN_SLACK {
        match dequeue(first, &items, &head, recorder, drainer.id()).await {
            Taken::Empty => break,
            Taken::Unknown => {
                drainer.crashed();
                if !reconnected(first).await {
                    break;
                }
            }
            Taken::Item | Taken::Lost => {}
        }
    }
}

/// What a dequeue came to.
#[derive(Debug, PartialEq, Eq)]
enum Taken {
    /// An element, removed.
    Item,
    /// The queue was empty.
    Empty,
    /// Another dequeue came first (a definite fail).
    Lost,
    /// Unknown.
    Unknown,
}

/// Enqueues `element`; `false` when the outcome is unknown.
async fn enqueue(c: &Client, items: &str, element: i64, r: &Recorder, p: u64) -> bool {
    let op = r.invoke(p, F::Enqueue, None, Value::Int(element));
    let options = CreateOptions::new(CreateMode::PersistentSequential);
    let (prefix, data) = (format!("{items}/item-"), element.to_string());
    match attempt(c.create(&prefix, data.as_bytes(), &options)).await {
        Outcome::Ok(_) => op.ok(Value::Int(element)),
        Outcome::Fail(_) => op.fail(Value::Int(element)),
        Outcome::Info(_) => {
            op.info(Value::Int(element));
            return false;
        }
    }
    true
}

/// Dequeues the smallest item (see the module doc).
async fn dequeue(c: &Client, items: &str, head: &str, r: &Recorder, p: u64) -> Taken {
    let op = r.invoke(p, F::Dequeue, None, Value::Nil);
    // Reads only, until the multi: any failure among them is a definite fail.
    let version = match attempt(c.get_data(head)).await {
        Outcome::Ok((_, stat)) => stat.version,
        _ => {
            op.fail(Value::Nil);
            return Taken::Lost;
        }
    };
    let mut listed = match attempt(c.get_children(items)).await {
        Outcome::Ok(listed) => listed,
        _ => {
            op.fail(Value::Nil);
            return Taken::Lost;
        }
    };
    listed.sort_by_key(|name| sequence_of(name));
    let Some(smallest) = listed.first() else {
        op.fail(Value::Nil);
        return Taken::Empty;
    };
    let path = format!("{items}/{smallest}");
    let element = match attempt(c.get_data(&path)).await {
        Outcome::Ok((data, _)) => match parse_ints(&data).as_deref() {
            Some([v]) => *v,
            _ => {
                op.fail(Value::Nil);
                return Taken::Lost;
            }
        },
        _ => {
            op.fail(Value::Nil);
            return Taken::Lost;
        }
    };
    let multi = c
        .multi()
        .check(head, version)
        .set_data(head, b"", Some(version))
        .delete(&path, None);
    match attempt(multi.commit()).await {
        Outcome::Ok(_) => {
            op.ok(Value::Int(element));
            Taken::Item
        }
        Outcome::Fail(_) => {
            op.fail(Value::Nil);
            Taken::Lost
        }
        Outcome::Info(_) => {
            op.info(Value::Int(element));
            Taken::Unknown
        }
    }
}
