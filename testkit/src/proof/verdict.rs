//! A check's answer: valid, invalid with the reason, or unknown.
//!
//! Stand-in with the interface of the checkers' branch (`i31check`), which owns this file:
//! replaced by its version when that branch's checkers are merged.
//!
//! Invariant: `Unknown` is the only answer for a search that ran out of budget; no check turns
//! it into `Valid`.

use std::fmt;

/// What a check concluded about a history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The history is consistent with the model.
    Valid,
    /// It is not; why.
    Invalid(String),
    /// The check could not decide; why.
    Unknown(String),
}

impl Verdict {
    /// Whether the verdict is [`Verdict::Valid`].
    pub fn is_valid(&self) -> bool {
        matches!(self, Verdict::Valid)
    }

    /// Whether the verdict is [`Verdict::Invalid`].
    pub fn is_invalid(&self) -> bool {
        matches!(self, Verdict::Invalid(_))
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Valid => f.write_str("valid"),
            Verdict::Invalid(why) => write!(f, "invalid: {why}"),
            Verdict::Unknown(why) => write!(f, "unknown: {why}"),
        }
    }
}
