//! The register checker against generated histories: a sequential model run, each operation
//! given a random concurrency window around its linearisation point, is always linearizable; the
//! same history with one read's value changed to one never written never is.

use std::time::Duration;

use proptest::prelude::*;
use shepherd_verify::proof::check::check_register;
use shepherd_verify::proof::{Event, F, History, Type, Value};

#[derive(Clone, Debug)]
enum Step {
    Read,
    Write(i64),
    Cas(i64, i64),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        Just(Step::Read),
        (0..4i64).prop_map(Step::Write),
        (0..4i64, 0..4i64).prop_map(|(a, b)| Step::Cas(a, b)),
    ]
}

/// Runs the steps on a register, operation `j` taking effect at time `10j + 5`, invoked up to
/// `before` steps earlier and completed up to `after` later (or never, if `lost`). Event times
/// are never a multiple of 10 plus 5, so the recorded order respects every linearisation point.
fn history(ops: &[(Step, u8, u8, u8, bool)]) -> History {
    let mut state: Option<i64> = None;
    let mut timed: Vec<(u64, u64, Type, F, Value)> = Vec::new();
    for (j, (s, before, after, jitter, lost)) in ops.iter().enumerate() {
        let at = 10 * j as u64 + 5 + 10 * 40;
        let call = at - (10 * u64::from(*before) + 1 + u64::from(jitter % 4));
        let ret = at + 10 * u64::from(*after) + 1 + u64::from(jitter / 4 % 4);
        let (f, input, kind, output) = match *s {
            Step::Read => (
                F::Read,
                Value::Nil,
                Type::Ok,
                state.map_or(Value::Nil, Value::Int),
            ),
            Step::Write(v) => {
                state = Some(v);
                (F::Write, Value::Int(v), Type::Ok, Value::Nil)
            }
            Step::Cas(a, b) if state == Some(a) => {
                state = Some(b);
                (F::Cas, Value::Cas(a, b), Type::Ok, Value::Nil)
            }
            Step::Cas(a, b) => (F::Cas, Value::Cas(a, b), Type::Fail, Value::Nil),
        };
        let p = j as u64;
        timed.push((call, p, Type::Invoke, f, input));
        // A lost write took effect but its client never heard: indeterminate.
        if *lost && f != F::Read {
            timed.push((ret, p, Type::Info, f, Value::Nil));
        } else {
            timed.push((ret, p, kind, f, output));
        }
    }
    timed.sort_by_key(|e| (e.0, e.2 != Type::Invoke));
    let events = timed
        .into_iter()
        .enumerate()
        .map(|(index, (t, process, kind, f, value))| Event {
            index,
            process,
            kind,
            f,
            key: Some("r".into()),
            value,
            time: Duration::from_nanos(t),
        })
        .collect();
    History { events }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn model_runs_are_linearizable_and_a_forged_read_is_not(
        ops in prop::collection::vec((step(), 0..3u8, 0..3u8, 0..16u8, prop::bool::weighted(0.1)), 1..14),
        pick in any::<prop::sample::Index>(),
    ) {
        let hist = history(&ops);
        let verdict = check_register(&hist);
        prop_assert!(verdict.is_valid(), "{verdict}\n{hist:#?}");

        let reads: Vec<usize> = hist
            .events
            .iter()
            .filter(|e| e.f == F::Read && e.kind == Type::Ok)
            .map(|e| e.index)
            .collect();
        prop_assume!(!reads.is_empty());
        let mut forged = hist.clone();
        forged.events[reads[pick.index(reads.len())]].value = Value::Int(99);
        let verdict = check_register(&forged);
        prop_assert!(verdict.is_invalid(), "{verdict}\n{forged:#?}");
    }
}
