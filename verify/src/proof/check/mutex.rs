//! The mutex with fencing tokens: `acquire` (acknowledged with `Token(t)`), guarded work, and
//! `release`, per lock key.
//!
//! Two holders must never overlap: a process surely held the lock from its acquire's
//! acknowledgement to its release's invocation, when that release was acknowledged too, and two
//! such intervals on one key may not intersect. Tokens must rise strictly: an acquire
//! acknowledged before another acquire was invoked must carry the smaller token. Invariant: only
//! what surely happened is judged; a holding whose release never returned may have lost the lock
//! to its session's expiry, which fencing, not mutual exclusion, guards.

use super::ops::{Op, by_key, ops};
use crate::proof::{F, History, Type, Value, Verdict};

/// Checks a mutex workload's history.
pub fn check_mutex(history: &History) -> Verdict {
    let mut problems = Vec::new();
    for (key, group) in by_key(ops(history)) {
        let acquires: Vec<&Op> = group
            .iter()
            .filter(|o| o.f == F::Acquire && o.kind == Type::Ok)
            .collect();
        // Held intervals: (from, to) in history indices, with the holding process.
        let mut held: Vec<(usize, usize, u64)> = Vec::new();
        for a in &acquires {
            let from = a.ret.unwrap_or(a.call);
            let release = group
                .iter()
                .filter(|r| r.process == a.process && r.f == F::Release && r.call > from)
                .min_by_key(|r| r.call);
            if let Some(r) = release.filter(|r| r.kind == Type::Ok) {
                held.push((from, r.call, a.process));
            }
        }
        held.sort();
        for (i, x) in held.iter().enumerate() {
            for y in &held[i + 1..] {
                if y.0 < x.1 {
                    problems.push(format!(
                        "lock {key:?}: process {} held it from {} to {} while process {} held it \
                         from {} to {}",
                        x.2, x.0, x.1, y.2, y.0, y.1
                    ));
                }
            }
        }
        for a in &acquires {
            for b in &acquires {
                let (Value::Token(ta), Value::Token(tb)) = (&a.output, &b.output) else {
                    continue;
                };
                if a.ret.is_some_and(|r| r < b.call) && ta >= tb {
                    problems.push(format!(
                        "lock {key:?}: fencing token went backwards: process {} acquired {ta} at \
                         {:?} before process {} invoked at {} and acquired {tb}",
                        a.process, a.ret, b.process, b.call
                    ));
                }
            }
        }
    }
    if problems.is_empty() {
        Verdict::Valid
    } else {
        Verdict::Invalid(problems.join("; "))
    }
}
