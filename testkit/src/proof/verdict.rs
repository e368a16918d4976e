//! The verdict on a run's history, and which check gives it for each workload.
//!
//! Until the checkers' branch (`i31check`) is merged, the interim checks
//! ([`interim_check`](crate::proof::interim_check)) judge every workload.

use std::fmt;

use crate::proof::history::History;
use crate::proof::workload::Workload;

/// What the check said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The history has the property.
    Valid,
    /// It does not; why.
    Invalid(String),
    /// The check could not decide (or there is none); why.
    Unknown(String),
}

impl Verdict {
    /// Whether it is [`Verdict::Valid`].
    pub fn is_valid(&self) -> bool {
        matches!(self, Verdict::Valid)
    }

    /// Whether it is [`Verdict::Invalid`].
    pub fn is_invalid(&self) -> bool {
        matches!(self, Verdict::Invalid(_))
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Valid => f.write_str("VALID"),
            Verdict::Invalid(why) => write!(f, "INVALID ({why})"),
            Verdict::Unknown(why) => write!(f, "UNKNOWN ({why})"),
        }
    }
}

/// The verdict of `workload`'s check on `history`.
pub fn check(workload: Workload, history: &History) -> Verdict {
    use crate::proof::interim_check::{UNDECIDED, check as interim};
    match interim(workload, history) {
        Ok(()) => Verdict::Valid,
        Err(why) => match why.strip_prefix(UNDECIDED) {
            Some(why) => Verdict::Unknown(why.to_owned()),
            None => Verdict::Invalid(why),
        },
    }
}
