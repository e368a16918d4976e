//! Unique ids (from sequential nodes): no id is acknowledged twice.
//!
//! Invariant: only acknowledged `generate` results count; an indeterminate one returned nothing.

use std::collections::HashMap;

use super::ops::ops;
use crate::proof::{F, History, Type, Value, Verdict};

/// Checks a unique-ids workload's history.
pub fn check_unique_ids(history: &History) -> Verdict {
    let mut first: HashMap<i64, usize> = HashMap::new();
    let mut dups = Vec::new();
    for o in ops(history) {
        if o.f != F::Generate || o.kind != Type::Ok {
            continue;
        }
        let (Value::Int(id) | Value::Token(id)) = o.output else {
            return Verdict::Invalid(format!(
                "generate returned at {:?} with {:?}",
                o.ret, o.output
            ));
        };
        let at = o.ret.unwrap_or(o.call);
        if let Some(prev) = first.insert(id, at) {
            dups.push(format!("id {id} acknowledged at {prev} and at {at}"));
            first.insert(id, prev);
        }
    }
    if dups.is_empty() {
        Verdict::Valid
    } else {
        Verdict::Invalid(dups.join("; "))
    }
}
