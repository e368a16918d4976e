//! The counter: `add d` (d ≥ 0, an increment by multi creates) and `read`.
//!
//! A read must lie between the sum of the acknowledged increments that returned before it was
//! invoked and the sum of every increment attempted (acknowledged or indeterminate) invoked
//! before it returned. Invariant: failed increments count in neither bound; negative increments
//! are outside the model and make the verdict `Unknown`.

use super::ops::ops;
use crate::proof::{F, History, Type, Value, Verdict};

/// Checks a counter workload's history.
pub fn check_counter(history: &History) -> Verdict {
    let ops = ops(history);
    let adds: Vec<_> = ops
        .iter()
        .filter(|o| o.f == F::Add && o.kind != Type::Fail)
        .collect();
    for a in &adds {
        match a.input {
            Value::Int(d) if d >= 0 => {}
            _ => {
                return Verdict::Unknown(format!(
                    "increment invoked at {} is {:?}",
                    a.call, a.input
                ));
            }
        }
    }
    let delta = |o: &&&super::ops::Op| if let Value::Int(d) = o.input { d } else { 0 };
    let mut bad = Vec::new();
    for r in ops.iter().filter(|o| o.f == F::Read && o.kind == Type::Ok) {
        let Value::Int(v) = r.output else {
            bad.push(format!("read returned at {:?} with {:?}", r.ret, r.output));
            continue;
        };
        let ret = r.ret.unwrap_or(usize::MAX);
        let lower: i64 = adds
            .iter()
            .filter(|a| a.kind == Type::Ok && a.ret.is_some_and(|t| t < r.call))
            .map(|a| delta(&a))
            .sum();
        let upper: i64 = adds
            .iter()
            .filter(|a| a.call < ret)
            .map(|a| delta(&a))
            .sum();
        if v < lower || v > upper {
            bad.push(format!(
                "read invoked at {} returned at {ret} saw {v}, outside [{lower}, {upper}]",
                r.call
            ));
        }
    }
    if bad.is_empty() {
        Verdict::Valid
    } else {
        Verdict::Invalid(bad.join("; "))
    }
}
