//! The checkers judged on hand-written histories whose verdicts are known: for each checker a
//! valid history and the invalid ones it exists to catch, and indeterminate operations that must
//! be allowed to take effect late or never.

use std::time::Duration;

use shepherd_verify::proof::check::{
    check_counter, check_mutex, check_queue, check_register, check_register_with_budget, check_set,
    check_unique_ids,
};
use shepherd_verify::proof::format::{to_edn, to_porcupine_json};
use shepherd_verify::proof::{Event, F, History, Recorder, Type, Value, Verdict};

use F::*;
use Type::{Fail as No, Info as Maybe, Invoke as Call, Ok as Done};
use Value::{Cas as C, Int as I, Ints, Nil, Token as T};

/// A history from `(process, type, f, value)` lines, on one unnamed key.
fn h(lines: &[(u64, Type, F, Value)]) -> History {
    keyed(
        &lines
            .iter()
            .map(|(p, t, f, v)| (*p, *t, *f, None, v.clone()))
            .collect::<Vec<_>>(),
    )
}

fn keyed(lines: &[(u64, Type, F, Option<&str>, Value)]) -> History {
    let events = lines
        .iter()
        .enumerate()
        .map(|(index, (process, kind, f, key, value))| Event {
            index,
            process: *process,
            kind: *kind,
            f: *f,
            key: key.map(str::to_owned),
            value: value.clone(),
            time: Duration::from_nanos(index as u64 * 10),
        })
        .collect();
    History { events }
}

fn invalid(v: Verdict) -> String {
    assert!(v.is_invalid(), "expected invalid, got {v}");
    v.to_string()
}

#[test]
fn register_sequential_history_is_valid() {
    let hist = h(&[
        (0, Call, Read, Nil),
        (0, Done, Read, Nil),
        (0, Call, Write, I(1)),
        (0, Done, Write, Nil),
        (1, Call, Cas, C(1, 2)),
        (1, Done, Cas, Nil),
        (1, Call, Read, Nil),
        (1, Done, Read, I(2)),
    ]);
    assert_eq!(check_register(&hist), Verdict::Valid);
}

#[test]
fn register_stale_read_is_invalid() {
    let hist = h(&[
        (0, Call, Write, I(1)),
        (0, Done, Write, Nil),
        (0, Call, Write, I(2)),
        (0, Done, Write, Nil),
        (1, Call, Read, Nil),
        (1, Done, Read, I(1)),
    ]);
    let why = invalid(check_register(&hist));
    assert!(why.contains("read"), "{why}");
}

#[test]
fn register_lost_write_is_invalid() {
    // The write of 3 was acknowledged before the read began, yet the read sees the older value.
    let hist = h(&[
        (0, Call, Write, I(1)),
        (0, Done, Write, Nil),
        (1, Call, Write, I(3)),
        (1, Done, Write, Nil),
        (2, Call, Read, Nil),
        (2, Done, Read, I(1)),
    ]);
    invalid(check_register(&hist));
}

#[test]
fn register_cas_that_linearises_nowhere_is_invalid() {
    let hist = h(&[
        (0, Call, Write, I(1)),
        (0, Done, Write, Nil),
        (1, Call, Cas, C(5, 6)),
        (1, Done, Cas, Nil),
    ]);
    invalid(check_register(&hist));
}

#[test]
fn register_failed_cas_did_not_happen() {
    let hist = h(&[
        (0, Call, Write, I(1)),
        (0, Done, Write, Nil),
        (1, Call, Cas, C(5, 6)),
        (1, No, Cas, Nil),
        (1, Call, Read, Nil),
        (1, Done, Read, I(1)),
    ]);
    assert_eq!(check_register(&hist), Verdict::Valid);
}

#[test]
fn register_concurrent_overlapping_ops_may_order_either_way() {
    // The read overlaps both writes and sees the first; the later read sees the second.
    let hist = h(&[
        (0, Call, Write, I(1)),
        (1, Call, Write, I(2)),
        (2, Call, Read, Nil),
        (0, Done, Write, Nil),
        (1, Done, Write, Nil),
        (2, Done, Read, I(1)),
        (2, Call, Read, Nil),
        (2, Done, Read, I(1)),
    ]);
    assert_eq!(check_register(&hist), Verdict::Valid);
}

#[test]
fn register_info_write_may_take_effect_late() {
    // The write timed out, then took effect long after: reads see Nil, then 7.
    let hist = h(&[
        (0, Call, Write, I(7)),
        (0, Maybe, Write, Nil),
        (1, Call, Read, Nil),
        (1, Done, Read, Nil),
        (1, Call, Read, Nil),
        (1, Done, Read, I(7)),
    ]);
    assert_eq!(check_register(&hist), Verdict::Valid);
}

#[test]
fn register_info_write_may_never_take_effect() {
    let hist = h(&[
        (0, Call, Write, I(7)),
        (0, Maybe, Write, Nil),
        (1, Call, Read, Nil),
        (1, Done, Read, Nil),
    ]);
    assert_eq!(check_register(&hist), Verdict::Valid);
}

#[test]
fn register_info_write_cannot_take_effect_before_its_invocation() {
    let hist = h(&[
        (1, Call, Read, Nil),
        (1, Done, Read, I(7)),
        (0, Call, Write, I(7)),
        (0, Maybe, Write, Nil),
    ]);
    invalid(check_register(&hist));
}

#[test]
fn register_keys_are_independent() {
    let hist = keyed(&[
        (0, Call, Write, Some("a"), I(1)),
        (0, Done, Write, Some("a"), Nil),
        (1, Call, Read, Some("b"), Nil),
        (1, Done, Read, Some("b"), Nil),
        (1, Call, Read, Some("a"), Nil),
        (1, Done, Read, Some("a"), I(1)),
    ]);
    assert_eq!(check_register(&hist), Verdict::Valid);
    let bad = keyed(&[
        (0, Call, Write, Some("a"), I(1)),
        (0, Done, Write, Some("a"), Nil),
        (1, Call, Read, Some("b"), Nil),
        (1, Done, Read, Some("b"), I(1)),
    ]);
    assert!(invalid(check_register(&bad)).contains("\"b\""));
}

#[test]
fn register_out_of_budget_is_unknown_never_valid() {
    let mut lines = Vec::new();
    for p in 0..12 {
        lines.push((p, Call, Write, I(p as i64)));
    }
    for p in 0..12 {
        lines.push((p, Done, Write, Nil));
    }
    let hist = h(&lines);
    assert!(matches!(
        check_register_with_budget(&hist, 3),
        Verdict::Unknown(_)
    ));
    assert_eq!(check_register(&hist), Verdict::Valid);
}

#[test]
fn set_checker() {
    let ok = h(&[
        (0, Call, Add, I(1)),
        (0, Done, Add, Nil),
        (1, Call, Add, I(2)),
        (1, Maybe, Add, Nil),
        (2, Call, Add, I(3)),
        (2, Maybe, Add, Nil),
        (0, Call, Read, Nil),
        (0, Done, Read, Ints(vec![1, 3])),
    ]);
    assert_eq!(check_set(&ok), Verdict::Valid);
    let lost = h(&[
        (0, Call, Add, I(1)),
        (0, Done, Add, Nil),
        (0, Call, Read, Nil),
        (0, Done, Read, Ints(vec![])),
    ]);
    assert!(invalid(check_set(&lost)).contains("lost acknowledged adds [1]"));
    let unexpected = h(&[
        (0, Call, Add, I(1)),
        (0, No, Add, Nil),
        (0, Call, Read, Nil),
        (0, Done, Read, Ints(vec![1])),
    ]);
    assert!(invalid(check_set(&unexpected)).contains("never attempted [1]"));
    let no_read = h(&[(0, Call, Add, I(1)), (0, Done, Add, Nil)]);
    assert!(matches!(check_set(&no_read), Verdict::Unknown(_)));
}

#[test]
fn unique_ids_checker() {
    let ok = h(&[
        (0, Call, Generate, Nil),
        (0, Done, Generate, I(1)),
        (1, Call, Generate, Nil),
        (1, Done, Generate, I(2)),
    ]);
    assert_eq!(check_unique_ids(&ok), Verdict::Valid);
    let dup = h(&[
        (0, Call, Generate, Nil),
        (1, Call, Generate, Nil),
        (0, Done, Generate, I(4)),
        (1, Done, Generate, I(4)),
    ]);
    assert!(invalid(check_unique_ids(&dup)).contains("id 4 acknowledged at 2 and at 3"));
}

#[test]
fn counter_checker() {
    let ok = h(&[
        (0, Call, Add, I(2)),
        (0, Done, Add, Nil),
        (1, Call, Add, I(3)),
        (2, Call, Read, Nil),
        (2, Done, Read, I(5)),
        (1, Maybe, Add, Nil),
        (2, Call, Read, Nil),
        (2, Done, Read, I(2)),
    ]);
    // Each read lies within its own bounds ([0, 5], then [2, 5]). That the second went below
    // the first is outside this checker's model, which bounds each read on its own (as Jepsen's).
    assert_eq!(check_counter(&ok), Verdict::Valid);
    let too_low = h(&[
        (0, Call, Add, I(2)),
        (0, Done, Add, Nil),
        (1, Call, Read, Nil),
        (1, Done, Read, I(1)),
    ]);
    assert!(invalid(check_counter(&too_low)).contains("outside [2, 2]"));
    let too_high = h(&[
        (0, Call, Add, I(2)),
        (0, No, Add, Nil),
        (1, Call, Read, Nil),
        (1, Done, Read, I(2)),
    ]);
    assert!(invalid(check_counter(&too_high)).contains("outside [0, 0]"));
}

#[test]
fn queue_checker() {
    let ok = h(&[
        (0, Call, Enqueue, I(1)),
        (0, Done, Enqueue, Nil),
        (0, Call, Enqueue, I(2)),
        (0, Done, Enqueue, Nil),
        (1, Call, Enqueue, I(3)),
        (1, Maybe, Enqueue, Nil),
        (2, Call, Dequeue, Nil),
        (2, Done, Dequeue, I(1)),
        (2, Call, Drain, Nil),
        (2, Done, Drain, Ints(vec![2])),
    ]);
    assert_eq!(check_queue(&ok), Verdict::Valid);
    let double = h(&[
        (0, Call, Enqueue, I(1)),
        (0, Done, Enqueue, Nil),
        (1, Call, Dequeue, Nil),
        (1, Done, Dequeue, I(1)),
        (2, Call, Dequeue, Nil),
        (2, Done, Dequeue, I(1)),
    ]);
    assert!(invalid(check_queue(&double)).contains("1 dequeued 2 times"));
    let lost = h(&[
        (0, Call, Enqueue, I(1)),
        (0, Done, Enqueue, Nil),
        (2, Call, Drain, Nil),
        (2, Done, Drain, Ints(vec![])),
    ]);
    assert!(invalid(check_queue(&lost)).contains("lost: [1]"));
    let phantom = h(&[(2, Call, Dequeue, Nil), (2, Done, Dequeue, I(9))]);
    assert!(invalid(check_queue(&phantom)).contains("9 dequeued"));
    let taken_by_info = h(&[
        (0, Call, Enqueue, I(1)),
        (0, Done, Enqueue, Nil),
        (1, Call, Dequeue, Nil),
        (1, Maybe, Dequeue, Nil),
        (2, Call, Drain, Nil),
        (2, Done, Drain, Ints(vec![])),
    ]);
    assert_eq!(check_queue(&taken_by_info), Verdict::Valid);
}

#[test]
fn mutex_checker() {
    let ok = h(&[
        (0, Call, Acquire, Nil),
        (0, Done, Acquire, T(1)),
        (1, Call, Acquire, Nil),
        (0, Call, Release, Nil),
        (0, Done, Release, Nil),
        (1, Done, Acquire, T(2)),
        (1, Call, Release, Nil),
        (1, Done, Release, Nil),
    ]);
    assert_eq!(check_mutex(&ok), Verdict::Valid);
    let overlap = h(&[
        (0, Call, Acquire, Nil),
        (0, Done, Acquire, T(1)),
        (1, Call, Acquire, Nil),
        (1, Done, Acquire, T(2)),
        (0, Call, Release, Nil),
        (0, Done, Release, Nil),
        (1, Call, Release, Nil),
        (1, Done, Release, Nil),
    ]);
    assert!(invalid(check_mutex(&overlap)).contains("while process 1 held it"));
    let backwards = h(&[
        (0, Call, Acquire, Nil),
        (0, Done, Acquire, T(5)),
        (0, Call, Release, Nil),
        (0, Done, Release, Nil),
        (1, Call, Acquire, Nil),
        (1, Done, Acquire, T(3)),
    ]);
    assert!(invalid(check_mutex(&backwards)).contains("fencing token went backwards"));
}

#[test]
fn recorder_records_dropped_pending_as_info() {
    let rec = Recorder::new();
    rec.invoke(0, Write, Some("k"), I(1)).ok(Nil);
    drop(rec.invoke(1, Cas, Some("k"), C(1, 2)));
    let hist = rec.history();
    let kinds: Vec<Type> = hist.events.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, vec![Call, Done, Call, Maybe]);
    assert!(hist.events.windows(2).all(|w| w[0].time <= w[1].time));
}

#[test]
fn edn_and_porcupine_shapes() {
    let hist = keyed(&[
        (0, Call, Write, Some("k"), I(1)),
        (0, Done, Write, Some("k"), I(1)),
        (1, Call, Read, Some("k"), Nil),
        (1, Done, Read, Some("k"), I(1)),
        (2, Call, Cas, Some("k"), C(1, 2)),
        (2, No, Cas, Some("k"), Nil),
        (3, Call, Write, Some("k"), I(3)),
    ]);
    let edn = to_edn(&hist);
    assert_eq!(
        edn.lines().next().unwrap(),
        "{:type :invoke, :f :write, :value [\"k\" 1], :process 0, :time 0, :index 0}"
    );
    assert!(
        edn.contains(":type :fail, :f :cas, :value [\"k\" nil]"),
        "{edn}"
    );
    let json: serde_json::Value = serde_json::from_str(&to_porcupine_json(&hist)).unwrap();
    let ops = json.as_array().unwrap();
    assert_eq!(ops.len(), 3, "the failed cas is left out: {json}");
    assert_eq!(ops[1]["input"]["op"], 0);
    assert_eq!(ops[1]["output"]["value"], "1");
    assert_eq!(ops[2]["output"]["value"], serde_json::Value::Null);
    assert_eq!(ops[2]["return"], 61);
}
