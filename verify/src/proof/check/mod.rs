//! The checkers: one pure function per workload, each judging a [`History`](crate::proof::History)
//! into a [`Verdict`](crate::proof::Verdict); and [`locks`], the chaos run's checker of lock
//! safety from the tree and the holders' own records.
//!
//! Invariant: a checker answers `Valid` only when the history is consistent with its model and
//! `Invalid` only with the events that show it is not; anything undecided is `Unknown`.

mod counter;
pub mod locks;
mod mutex;
pub mod ops;
mod queue;
mod register;
mod set;
mod unique_ids;

pub use counter::check_counter;
pub use mutex::check_mutex;
pub use queue::check_queue;
pub use register::{DEFAULT_BUDGET, check_register, check_register_with_budget};
pub use set::check_set;
pub use unique_ids::check_unique_ids;
