//! Recorded histories and their checkers: what clients did against a server, written down in
//! Jepsen's vocabulary, and pure functions that judge whether it is what a coordination service
//! guarantees.
//!
//! * [`history`]: the events, the [`Recorder`] that client tasks share, and [`Pending`], which
//!   records an indeterminate completion if it is dropped.
//! * [`check`]: one checker per workload (register, set, unique ids, counter, total queue,
//!   mutex), each answering a [`Verdict`].
//! * [`format`](mod@format): a history written out as Jepsen's EDN or Porcupine's JSON.
//!
//! Invariant: nothing here does I/O except writing a history out; a checker never answers
//! "valid" when it could not finish.

pub mod check;
pub mod format;
pub mod history;
mod verdict;

pub use history::{Event, F, History, Pending, Recorder, Type, Value};
pub use verdict::Verdict;
