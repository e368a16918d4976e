//! Linearizability of a compare-and-set register, per key (P-compositionality: keys are checked
//! independently), by Wing and Gong's search with Lowe's memoisation.
//!
//! The register starts `Nil`. `read` returns the value (`Int`) or `Nil`; `write v` sets it;
//! `cas (a, b)` sets it to `b` if it holds `a`. Failed operations did not take effect and are
//! left out; indeterminate ones may take effect at any point after their invocation, or never.
//!
//! Invariant: the search answers `Valid` only when it found a linearisation of every
//! acknowledged operation, `Invalid` only when it explored every one, and `Unknown` when it ran
//! out of its step budget first.

use std::collections::HashSet;

use super::ops::{Op, by_key, describe, ops};
use crate::proof::{F, History, Type, Value, Verdict};

/// The search's default budget: states explored per key before answering `Unknown`.
pub const DEFAULT_BUDGET: u64 = 1_000_000;

/// Checks every key's register with [`DEFAULT_BUDGET`].
pub fn check_register(history: &History) -> Verdict {
    check_register_with_budget(history, DEFAULT_BUDGET)
}

/// Checks every key's register, exploring at most `budget` states per key.
pub fn check_register_with_budget(history: &History, budget: u64) -> Verdict {
    let mut unknown = None;
    for (key, group) in by_key(ops(history)) {
        let group: Vec<Op> = group
            .into_iter()
            .filter(|op| matches!(op.f, F::Read | F::Write | F::Cas))
            .filter(|op| op.kind != Type::Fail)
            // A read that never returned changes nothing and constrains nothing.
            .filter(|op| !(op.f == F::Read && op.kind != Type::Ok))
            .collect();
        match search(&group, budget) {
            Verdict::Valid => {}
            Verdict::Invalid(why) => return Verdict::Invalid(format!("key {key:?}: {why}")),
            Verdict::Unknown(why) => unknown = Some(format!("key {key:?}: {why}")),
        }
    }
    unknown.map_or(Verdict::Valid, Verdict::Unknown)
}

type State = Option<i64>;

/// The register's step: the state after `op`, or `None` if `op` cannot happen in `state`.
fn step(state: State, op: &Op) -> Option<State> {
    match (op.f, &op.input) {
        (F::Read, _) => match &op.output {
            Value::Nil => state.is_none().then_some(state),
            Value::Int(v) => (state == Some(*v)).then_some(state),
            _ => None,
        },
        (F::Write, Value::Int(v)) => Some(Some(*v)),
        (F::Cas, Value::Cas(a, b)) => (state == Some(*a)).then_some(Some(*b)),
        _ => None,
    }
}

fn search(ops: &[Op], budget: u64) -> Verdict {
    let n = ops.len();
    let must: usize = ops.iter().filter(|o| o.kind == Type::Ok).count();
    let words = n.div_ceil(64).max(1);
    let mut seen: HashSet<(Vec<u64>, State)> = HashSet::new();
    // Depth-first: each frame is a linearised set, the state after it, and how many of the
    // acknowledged operations it holds.
    let mut stack: Vec<(Vec<u64>, State, usize)> = vec![(vec![0; words], None, 0)];
    let mut steps = 0u64;
    let mut deepest: (usize, Vec<u64>, State) = (0, vec![0; words], None);
    while let Some((done, state, count)) = stack.pop() {
        if count == must {
            return Verdict::Valid;
        }
        steps += 1;
        if steps > budget {
            return Verdict::Unknown(format!(
                "step budget of {budget} explored states ran out over {n} operations"
            ));
        }
        if count > deepest.0 {
            deepest = (count, done.clone(), state);
        }
        let is_done = |i: usize| done[i / 64] >> (i % 64) & 1 == 1;
        // An operation may go next only if it was invoked before every pending acknowledged
        // operation returned: otherwise that one must come first.
        let horizon = (0..n)
            .filter(|&i| !is_done(i))
            .filter_map(|i| ops[i].ret)
            .min()
            .unwrap_or(usize::MAX);
        for i in 0..n {
            if is_done(i) || ops[i].call > horizon {
                continue;
            }
            let Some(next) = step(state, &ops[i]) else {
                continue;
            };
            let mut set = done.clone();
            set[i / 64] |= 1 << (i % 64);
            if seen.insert((set.clone(), next)) {
                let c = count + usize::from(ops[i].kind == Type::Ok);
                stack.push((set, next, c));
            }
        }
    }
    let (count, done, state) = deepest;
    let blocked: Vec<String> = (0..n)
        .filter(|&i| done[i / 64] >> (i % 64) & 1 == 0 && ops[i].kind == Type::Ok)
        .min_by_key(|&i| ops[i].ret)
        .map(|i| describe(&ops[i]))
        .into_iter()
        .collect();
    Verdict::Invalid(format!(
        "no linearisation: at best {count} of {must} acknowledged operations fit, leaving the \
         register at {state:?}, where {} cannot take effect",
        blocked.join("")
    ))
}
