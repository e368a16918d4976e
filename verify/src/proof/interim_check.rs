//! Interim checks of each workload's history, so that the workloads, nemeses and broken modes
//! can be judged before the checkers' branch (`i31check`, `proof/check/`) is merged; when it is,
//! [`judge`](crate::proof::judge) calls its checkers and this file goes.
//!
//! * register: linearizable per key (reads, writes, compare-and-set), found by a search over
//!   the orders the history allows, keeping each reachable (value, linearized calls) pair once;
//! * set: every acknowledged add is in every read begun after it; no read has an element never
//!   added;
//! * unique ids: no id acknowledged twice;
//! * counter: each read lies between the acknowledged increments completed before it began and
//!   every increment (acknowledged or unknown) begun before it ended;
//! * queue: no element dequeued that was never enqueued, none dequeued twice, every
//!   acknowledged enqueue dequeued by the end (the drain);
//! * mutex: no two processes hold a key's lock at once (acquire ok to release invoke), and
//!   tokens grow with each grant.
//!
//! Invariant: an unknown (info) operation may have taken effect or not, and every check allows
//! both; a failed one took no effect.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::proof::history::{Event, F, History, Type, Value};
use crate::proof::workload::Workload;

/// One operation: its invoke and its completion.
#[derive(Debug, Clone)]
struct Op {
    process: u64,
    f: F,
    key: Option<String>,
    /// The invoke's value.
    arg: Value,
    /// The completion's value.
    result: Value,
    kind: Type,
    invoked: usize,
    completed: usize,
}

/// Pairs every invoke with its process's next completion (still open at the end: info).
fn operations(history: &History) -> Vec<Op> {
    let mut open: HashMap<u64, usize> = HashMap::new();
    let mut ops: Vec<Op> = Vec::new();
    for (at, e) in history.events.iter().enumerate() {
        if e.kind == Type::Invoke {
            open.insert(e.process, ops.len());
            ops.push(op_of(e, at));
        } else if let Some(i) = open.remove(&e.process) {
            ops[i].kind = e.kind;
            ops[i].result = e.value.clone();
            ops[i].completed = at;
        }
    }
    ops
}

fn op_of(e: &Event, at: usize) -> Op {
    Op {
        process: e.process,
        f: e.f,
        key: e.key.clone(),
        arg: e.value.clone(),
        result: Value::Nil,
        kind: Type::Info,
        invoked: at,
        completed: usize::MAX,
    }
}

/// The prefix of an error that means "could not decide", not "broken".
pub const UNDECIDED: &str = "undecided: ";

/// `workload`'s interim check of `history`: `Err` with why when it fails, or with why it could
/// not decide (starting with [`UNDECIDED`]).
pub fn check(workload: Workload, history: &History) -> Result<(), String> {
    let ops = operations(history);
    match workload {
        Workload::Register => register(&ops),
        Workload::Set => set(&ops),
        Workload::UniqueIds => unique_ids(&ops),
        Workload::Counter => counter(&ops),
        Workload::Queue => queue(&ops),
        Workload::Mutex => mutex(&ops),
    }
}

/// The register's value (`None`: nil) after `op` from `state`, if `op` can take effect there.
fn step(state: Option<i64>, op: &Op) -> Option<Option<i64>> {
    match (op.f, &op.arg) {
        (F::Read, _) => (int(&op.result) == state).then_some(state),
        (F::Write, v) => Some(int(v)),
        (F::Cas, Value::Cas(old, new)) => (state == Some(*old)).then_some(Some(*new)),
        _ => None,
    }
}

fn register(ops: &[Op]) -> Result<(), String> {
    let mut keys: Vec<&str> = ops.iter().filter_map(|o| o.key.as_deref()).collect();
    keys.sort_unstable();
    keys.dedup();
    for key in keys {
        // Failed operations took no effect; unknown reads tell nothing.
        let mine: Vec<&Op> = ops
            .iter()
            .filter(|o| o.key.as_deref() == Some(key) && o.kind != Type::Fail)
            .filter(|o| !(o.kind == Type::Info && o.f == F::Read))
            .collect();
        linearizable(&mine).map_err(|why| match why.strip_prefix(UNDECIDED) {
            Some(why) => format!("{UNDECIDED}key {key}: {why}"),
            None => format!("key {key}: {why}"),
        })?;
    }
    Ok(())
}

/// The search: events in order; at each acknowledged completion, every configuration is
/// extended by linearizing pending calls in every legal order, and only those where the
/// completing call took effect survive.
fn linearizable(ops: &[&Op]) -> Result<(), String> {
    let mut events: Vec<(usize, bool, usize)> = Vec::new();
    for (i, o) in ops.iter().enumerate() {
        events.push((o.invoked, true, i));
        if o.kind == Type::Ok {
            events.push((o.completed, false, i));
        }
    }
    events.sort_unstable();
    let mut pending: BTreeSet<usize> = BTreeSet::new();
    let mut configs: HashSet<(Option<i64>, BTreeSet<usize>)> = HashSet::new();
    configs.insert((None, BTreeSet::new()));
    for (_, invoke, i) in events {
        if invoke {
            pending.insert(i);
            continue;
        }
        let mut seen = configs.clone();
        let mut frontier: Vec<_> = configs.into_iter().collect();
        while let Some((state, done)) = frontier.pop() {
            for &p in pending.iter().filter(|p| !done.contains(p)) {
                if let Some(next) = step(state, ops[p]) {
                    let mut done = done.clone();
                    done.insert(p);
                    if seen.insert((next, done.clone())) {
                        frontier.push((next, done));
                    }
                }
            }
            if seen.len() > 200_000 {
                return Err(format!(
                    "{UNDECIDED}the search grew past 200000 configurations"
                ));
            }
        }
        configs = seen
            .into_iter()
            .filter(|(_, done)| done.contains(&i))
            .map(|(state, mut done)| {
                done.remove(&i);
                (state, done)
            })
            .collect();
        pending.remove(&i);
        if configs.is_empty() {
            let o = ops[i];
            return Err(format!(
                "{:?} {:?} -> {:?} by process {} (event {}) fits no order",
                o.f, o.arg, o.result, o.process, o.completed
            ));
        }
    }
    Ok(())
}

fn ints(v: &Value) -> &[i64] {
    match v {
        Value::Ints(v) => v,
        _ => &[],
    }
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(n) | Value::Token(n) => Some(*n),
        _ => None,
    }
}

fn set(ops: &[Op]) -> Result<(), String> {
    let adds: Vec<&Op> = ops.iter().filter(|o| o.f == F::Add).collect();
    for read in ops.iter().filter(|o| o.f == F::Read && o.kind == Type::Ok) {
        let got: HashSet<i64> = ints(&read.result).iter().copied().collect();
        for add in &adds {
            let Some(x) = int(&add.arg) else { continue };
            if add.kind == Type::Ok && add.completed < read.invoked && !got.contains(&x) {
                return Err(format!("read at event {} lost {x}", read.completed));
            }
        }
        for x in &got {
            let added = adds.iter().any(|a| {
                int(&a.arg) == Some(*x) && a.kind != Type::Fail && a.invoked < read.completed
            });
            if !added {
                return Err(format!(
                    "read at event {} has {x}, never added",
                    read.completed
                ));
            }
        }
    }
    Ok(())
}

fn unique_ids(ops: &[Op]) -> Result<(), String> {
    let mut seen = HashSet::new();
    for o in ops
        .iter()
        .filter(|o| o.f == F::Generate && o.kind == Type::Ok)
    {
        if let Some(id) = int(&o.result) {
            if !seen.insert(id) {
                return Err(format!("id {id} given twice (event {})", o.completed));
            }
        }
    }
    Ok(())
}

fn counter(ops: &[Op]) -> Result<(), String> {
    let adds: Vec<&Op> = ops.iter().filter(|o| o.f == F::Add).collect();
    for read in ops.iter().filter(|o| o.f == F::Read && o.kind == Type::Ok) {
        let Some(n) = int(&read.result) else { continue };
        let low: i64 = adds
            .iter()
            .filter(|a| a.kind == Type::Ok && a.completed < read.invoked)
            .filter_map(|a| int(&a.arg))
            .sum();
        let high: i64 = adds
            .iter()
            .filter(|a| a.kind != Type::Fail && a.invoked < read.completed)
            .filter_map(|a| int(&a.arg))
            .sum();
        if n < low || n > high {
            return Err(format!(
                "read {n} at event {} outside {low}..={high}",
                read.completed
            ));
        }
    }
    Ok(())
}

fn queue(ops: &[Op]) -> Result<(), String> {
    let enqueued: HashMap<i64, &Op> = ops
        .iter()
        .filter(|o| o.f == F::Enqueue && o.kind != Type::Fail)
        .filter_map(|o| int(&o.arg).map(|x| (x, o)))
        .collect();
    let mut dequeued: HashSet<i64> = HashSet::new();
    for d in ops
        .iter()
        .filter(|o| o.f == F::Dequeue && o.kind == Type::Ok)
    {
        let Some(x) = int(&d.result) else { continue };
        match enqueued.get(&x) {
            Some(e) if e.invoked < d.completed => {}
            _ => {
                return Err(format!(
                    "{x} dequeued (event {}) but never enqueued",
                    d.completed
                ));
            }
        }
        if !dequeued.insert(x) {
            return Err(format!("{x} dequeued twice (event {})", d.completed));
        }
    }
    let maybe: HashSet<i64> = ops
        .iter()
        .filter(|o| o.f == F::Dequeue && o.kind == Type::Info)
        .filter_map(|o| int(&o.result))
        .collect();
    for (x, e) in &enqueued {
        if e.kind == Type::Ok && !dequeued.contains(x) && !maybe.contains(x) {
            return Err(format!(
                "{x} enqueued (event {}) and never dequeued",
                e.completed
            ));
        }
    }
    Ok(())
}

fn mutex(ops: &[Op]) -> Result<(), String> {
    let mut events: Vec<(usize, &Op, bool)> = Vec::new();
    for o in ops {
        if o.f == F::Acquire && o.kind == Type::Ok {
            events.push((o.completed, o, true));
        }
        if o.f == F::Release {
            events.push((o.invoked, o, false));
        }
    }
    events.sort_unstable_by_key(|(at, _, _)| *at);
    let mut holders: HashMap<&str, Option<u64>> = HashMap::new();
    let mut tokens: HashMap<&str, i64> = HashMap::new();
    for (at, o, acquire) in events {
        let key = o.key.as_deref().unwrap_or("");
        let holder = holders.entry(key).or_default();
        if acquire {
            if let Some(other) = holder {
                return Err(format!(
                    "{key}: process {} granted the lock (event {at}) while process {other} held it",
                    o.process
                ));
            }
            *holder = Some(o.process);
            let token = int(&o.result).unwrap_or(0);
            let last = tokens.entry(key).or_insert(i64::MIN);
            if token <= *last {
                return Err(format!("{key}: token {token} (event {at}) after {last}"));
            }
            *last = token;
        } else if *holder == Some(o.process) {
            *holder = None;
        }
    }
    Ok(())
}
