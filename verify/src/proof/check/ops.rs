//! Pairs a history's invocations with their completions: the operations every checker reads.
//!
//! Invariant: an invocation without a completion is an indeterminate operation (`Type::Info`)
//! that never returns; events are ordered by index, which the recorder keeps in real-time order.

use std::collections::HashMap;

use crate::proof::{F, History, Type, Value};

/// One operation: an invocation and how it ended.
#[derive(Clone, Debug)]
pub struct Op {
    /// The process that ran it.
    pub process: u64,
    /// The operation.
    pub f: F,
    /// The independent key, if any.
    pub key: Option<String>,
    /// How it ended: `Ok`, `Fail` or `Info` (never `Invoke`).
    pub kind: Type,
    /// What the invocation carried.
    pub input: Value,
    /// What the completion returned (`Nil` when there was none).
    pub output: Value,
    /// The invocation's index in the history.
    pub call: usize,
    /// The completion's index, or `None` if it never returned for certain (`Info`).
    pub ret: Option<usize>,
}

/// The history's operations, in invocation order.
pub fn ops(history: &History) -> Vec<Op> {
    let mut out: Vec<Op> = Vec::new();
    let mut open: HashMap<u64, usize> = HashMap::new();
    for e in &history.events {
        if e.kind == Type::Invoke {
            // A process invoking again without completing: the earlier one is indeterminate.
            open.insert(e.process, out.len());
            out.push(Op {
                process: e.process,
                f: e.f,
                key: e.key.clone(),
                kind: Type::Info,
                input: e.value.clone(),
                output: Value::Nil,
                call: e.index,
                ret: None,
            });
        } else if let Some(i) = open.remove(&e.process) {
            let op = &mut out[i];
            op.kind = e.kind;
            op.output = e.value.clone();
            op.ret = if e.kind == Type::Info {
                None
            } else {
                Some(e.index)
            };
        }
    }
    out
}

/// Groups operations by key, in first-seen order of the keys.
pub fn by_key(ops: Vec<Op>) -> Vec<(Option<String>, Vec<Op>)> {
    let mut groups: Vec<(Option<String>, Vec<Op>)> = Vec::new();
    for op in ops {
        match groups.iter_mut().find(|(k, _)| *k == op.key) {
            Some((_, g)) => g.push(op),
            None => groups.push((op.key.clone(), vec![op])),
        }
    }
    groups
}

/// How an operation is named in a verdict.
pub fn describe(op: &Op) -> String {
    let end = op
        .ret
        .map_or("never returned".to_owned(), |r| format!("returned at {r}"));
    format!(
        "process {} {} {:?} -> {:?} ({}, invoked at {}, {end})",
        op.process,
        op.f.name(),
        op.input,
        op.output,
        op.kind.name(),
        op.call
    )
}
