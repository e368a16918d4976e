//! Proof runs (docs/proof.md): workloads whose clients record histories, nemeses that break
//! the server meanwhile, and the verdict on each history.
//!
//! * [`history`]: the events a run records; [`history_file`]: written as EDN or JSON;
//! * [`workload`]: the workloads;
//! * [`nemesis`]: the faults, per server;
//! * [`run`]: one workload on one server with its nemesis, bounded, with its verdict;
//! * [`verdict`]: which check judges which workload;
//! * [`interim_check`]: the checks until the checkers' branch is merged.

pub mod history;
pub mod history_file;
pub mod interim_check;
pub mod nemesis;
pub mod run;
pub mod verdict;
pub mod workload;
