//! Recorded histories and their checkers: what clients did against a server, written down in
//! Jepsen's vocabulary, and pure functions that judge whether it is what a coordination service
//! guarantees; and the proof runs that produce them (docs/proof.md): workloads, nemeses that
//! break the server meanwhile, and the verdict on each history.
//!
//! * [`history`]: the events, the [`Recorder`] that client tasks share, and [`Pending`], which
//!   records an indeterminate completion if it is dropped; [`history_file`]: a history written
//!   as EDN or JSON;
//! * [`workload`]: the workloads;
//! * [`nemesis`]: the faults, per server;
//! * [`run`]: one workload on one server with its nemesis, bounded, with its verdict;
//! * [`Verdict`]: a check's answer; [`judge`]: which check judges which workload;
//!   [`interim_check`]: the checks until the checkers are merged.
//!
//! Invariant: the history and the checks do no I/O except writing a history out; a checker
//! never answers "valid" when it could not finish.

pub mod history;
pub mod history_file;
pub mod interim_check;
pub mod judge;
pub mod nemesis;
pub mod run;
mod verdict;
pub mod workload;

pub use history::{Event, F, History, Pending, Recorder, Type, Value};
pub use verdict::Verdict;
