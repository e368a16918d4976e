//! A checker's answer: valid, invalid with the reason, or unknown.
//!
//! Invariant: `Unknown` is the only answer for a search that ran out of budget; no checker turns
//! it into `Valid`.

use std::fmt;

/// What a checker concluded about a history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The history is consistent with the model.
    Valid,
    /// It is not; the text names the offending events by index.
    Invalid(String),
    /// The checker could not decide (a search budget ran out, or the history lacks what the
    /// check needs, such as a final read); the text says why.
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
