//! Recorded histories and their checkers: what clients did against a server, written down in
//! Jepsen's vocabulary, and pure functions that judge whether it is what a coordination service
//! guarantees.
//!
//! * [`history`]: the events, the [`Recorder`] that client tasks share, and [`Pending`], which
//!   records an indeterminate completion if it is dropped.
//!
//! Invariant: nothing here does I/O except writing a history out; a checker never answers
//! "valid" when it could not finish.

pub mod history;

pub use history::{Event, F, History, Pending, Recorder, Type, Value};
