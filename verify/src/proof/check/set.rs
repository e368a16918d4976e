//! The grow-only set: `add x`, then a final `read` of every element.
//!
//! Every acknowledged add must be in the final read (else it is lost); nothing may be in it
//! that was never attempted (a failed add did not take effect, so its element is unexpected
//! too); an indeterminate add may be either. Invariant: judged against the last acknowledged
//! read only; without one the verdict is `Unknown`.

use std::collections::BTreeSet;

use super::ops::ops;
use crate::proof::{F, History, Type, Value, Verdict};

/// Checks a set workload's history.
pub fn check_set(history: &History) -> Verdict {
    let ops = ops(history);
    let Some(last) = ops
        .iter()
        .filter(|o| o.f == F::Read && o.kind == Type::Ok)
        .max_by_key(|o| o.ret)
    else {
        return Verdict::Unknown("no acknowledged final read".into());
    };
    let Value::Ints(read) = &last.output else {
        return Verdict::Invalid(format!(
            "the final read at {:?} returned {:?}",
            last.ret, last.output
        ));
    };
    let read: BTreeSet<i64> = read.iter().copied().collect();
    let mut acked = BTreeSet::new();
    let mut attempted = BTreeSet::new();
    for o in ops.iter().filter(|o| o.f == F::Add) {
        let Value::Int(x) = o.input else { continue };
        match o.kind {
            Type::Ok => {
                acked.insert(x);
                attempted.insert(x);
            }
            Type::Info => {
                attempted.insert(x);
            }
            _ => {}
        }
    }
    let lost: Vec<i64> = acked.difference(&read).copied().collect();
    let unexpected: Vec<i64> = read.difference(&attempted).copied().collect();
    if lost.is_empty() && unexpected.is_empty() {
        return Verdict::Valid;
    }
    Verdict::Invalid(format!(
        "final read (returned at {:?}): lost acknowledged adds {lost:?}; unexpected elements never \
         attempted {unexpected:?}",
        last.ret
    ))
}
