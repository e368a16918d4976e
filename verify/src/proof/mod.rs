//! Recorded histories and their checkers: what clients did against a server, written down in
//! Jepsen's vocabulary, pure functions that judge whether it is what a coordination service
//! guarantees, and the proof runs that produce them (docs/proof.md): workloads, nemeses that
//! break the server meanwhile, and the verdict on each history.
//!
//! * [`history`]: the events, the [`Recorder`] that client tasks share, and [`Pending`], which
//!   records an indeterminate completion if it is dropped; [`history_file`]: a history written
//!   to a file;
//! * [`check`]: one checker per workload (register, set, unique ids, counter, total queue,
//!   mutex), each answering a [`Verdict`];
//! * [`format`](mod@format): a history written out as Jepsen's EDN or Porcupine's JSON;
//! * [`workload`]: the workloads;
//! * [`nemesis`]: the faults, per server;
//! * [`run`]: one workload on one server with its nemesis, bounded, with its verdict;
//! * [`chaos`]: the lock chaos run: every lock recipe under the per-session nemesis, judged by
//!   the lock checker and by the mutex checks on its history; [`count`]: its counters;
//! * [`judge`]: which check judges which workload; [`interim_check`]: the run's own checks.
//!
//! Invariant: the history and the checks do no I/O except writing a history out; a checker
//! never answers "valid" when it could not finish.

pub mod chaos;
pub mod check;
pub mod count;
pub mod format;
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
