//! The total queue: `enqueue x`, `dequeue` (the smallest, returning it or `Nil` when empty), and
//! a final `drain` returning the rest.
//!
//! Every acknowledged enqueue is dequeued or drained exactly once; nothing comes out that was
//! never attempted; nothing comes out more often than it went in. Invariant: an element missing
//! from the output is excused only while there are indeterminate dequeues that may have taken
//! it (a dequeue that removed a node and then lost its connection); each excuses one.

use std::collections::BTreeMap;

use super::ops::ops;
use crate::proof::{F, History, Type, Value, Verdict};

/// Checks a total-queue workload's history.
pub fn check_queue(history: &History) -> Verdict {
    let ops = ops(history);
    let mut acked: BTreeMap<i64, usize> = BTreeMap::new();
    let mut attempted: BTreeMap<i64, usize> = BTreeMap::new();
    let mut out: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    let mut uncertain = 0usize;
    for o in &ops {
        match (o.f, o.kind) {
            (F::Enqueue, Type::Ok | Type::Info) => {
                let Value::Int(x) = o.input else { continue };
                *attempted.entry(x).or_default() += 1;
                if o.kind == Type::Ok {
                    *acked.entry(x).or_default() += 1;
                }
            }
            (F::Dequeue, Type::Ok) => {
                if let Value::Int(x) = o.output {
                    out.entry(x).or_default().push(o.ret.unwrap_or(o.call));
                }
            }
            (F::Dequeue | F::Drain, Type::Info) => uncertain += 1,
            (F::Drain, Type::Ok) => {
                if let Value::Ints(xs) = &o.output {
                    for &x in xs {
                        out.entry(x).or_default().push(o.ret.unwrap_or(o.call));
                    }
                }
            }
            _ => {}
        }
    }
    let mut problems = Vec::new();
    let mut lost = Vec::new();
    for (&x, &n) in &acked {
        let got = out.get(&x).map_or(0, Vec::len);
        if got < n {
            lost.push(x);
        }
    }
    for (&x, at) in &out {
        let tried = attempted.get(&x).copied().unwrap_or(0);
        if tried == 0 {
            problems.push(format!("{x} dequeued (at {at:?}) but never enqueued"));
        } else if at.len() > tried {
            problems.push(format!(
                "{x} dequeued {} times (at {at:?}), enqueued {tried}",
                at.len()
            ));
        }
    }
    if lost.len() > uncertain {
        problems.push(format!(
            "acknowledged enqueues lost: {lost:?} ({} indeterminate dequeues could explain at most {uncertain})",
            lost.len()
        ));
    }
    if problems.is_empty() {
        Verdict::Valid
    } else {
        Verdict::Invalid(problems.join("; "))
    }
}
