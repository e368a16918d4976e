//! Which check judges which workload's history, and the verdict as a run's line prints it.
//!
//! Invariant: this is the one place that pairs workloads with checks, so that switching a
//! workload to another checker changes nothing else.

use crate::proof::History;
use crate::proof::Verdict;
use crate::proof::interim_check::{UNDECIDED, check as interim};
use crate::proof::workload::Workload;

/// The verdict of `workload`'s check on `history`.
pub fn judge(workload: Workload, history: &History) -> Verdict {
    match interim(workload, history) {
        Ok(()) => Verdict::Valid,
        Err(why) => match why.strip_prefix(UNDECIDED) {
            Some(why) => Verdict::Unknown(why.to_owned()),
            None => Verdict::Invalid(why),
        },
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
