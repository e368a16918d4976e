//! Which checks judge which workload's history, and the verdict as a run's line prints it.
//!
//! Each history is judged twice, by the workload's checker in [`check`] and by the run's own
//! check in [`interim_check`](super::interim_check), written apart; the verdict is the stricter of the two (invalid over unknown over valid), so that a
//! fault one of them misses is still reported.
//!
//! Invariant: this is the one place that pairs workloads with checks, so that switching a
//! workload to another checker changes nothing else.

use crate::proof::History;
use crate::proof::Verdict;
use crate::proof::check;
use crate::proof::interim_check::{UNDECIDED, check as interim};
use crate::proof::workload::Workload;

/// The verdict on `history` of `workload`'s checks: the stricter of the two.
pub fn judge(workload: Workload, history: &History) -> Verdict {
    let checker = match workload {
        Workload::Register => check::check_register(history),
        Workload::Set => check::check_set(history),
        Workload::UniqueIds => check::check_unique_ids(history),
        Workload::Counter => check::check_counter(history),
        Workload::Queue => check::check_queue(history),
        Workload::Mutex => check::check_mutex(history),
    };
    let own = match interim(workload, history) {
        Ok(()) => Verdict::Valid,
        Err(why) => match why.strip_prefix(UNDECIDED) {
            Some(why) => Verdict::Unknown(why.to_owned()),
            None => Verdict::Invalid(why),
        },
    };
    stricter(checker, own)
}

/// Invalid over unknown over valid; of two of a kind, both reasons.
fn stricter(a: Verdict, b: Verdict) -> Verdict {
    match (a, b) {
        (Verdict::Invalid(x), Verdict::Invalid(y)) => Verdict::Invalid(format!("{x}; {y}")),
        (Verdict::Invalid(x), _) | (_, Verdict::Invalid(x)) => Verdict::Invalid(x),
        (Verdict::Unknown(x), Verdict::Unknown(y)) => Verdict::Unknown(format!("{x}; {y}")),
        (Verdict::Unknown(x), _) | (_, Verdict::Unknown(x)) => Verdict::Unknown(x),
        (Verdict::Valid, Verdict::Valid) => Verdict::Valid,
    }
}

/// `VALID`, `INVALID (why)` or `UNKNOWN (why)`: the verdict in a run's line.
pub fn line(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Valid => "VALID".to_owned(),
        Verdict::Invalid(why) => format!("INVALID ({why})"),
        Verdict::Unknown(why) => format!("UNKNOWN ({why})"),
    }
}
