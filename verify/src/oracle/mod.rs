//! A differential oracle: seeded random sequences of requests sent over the raw wire to two
//! servers (real ZooKeeper 3.8 and Shepherd), every reply and event compared, and a minimal
//! reproducer printed for the first difference of each sequence that has one. The `oracle`
//! binary of this crate drives it (`cargo run -p shepherd-verify --bin oracle -- --help`).
//!
//! * [`step`]: what a sequence is made of, and how a step prints;
//! * [`generate`]: the seeded generator;
//! * [`known`]: the differences `docs/compatibility.md` lists as deliberate, kept out;
//! * [`session`], [`run`]: one sequence on one server, as a transcript of normalised lines;
//! * [`normalise`]: the one place that says what is normalised and why;
//! * [`differential`], [`shrink`], [`report`]: comparing, shrinking and printing.

pub mod differential;
pub mod generate;
pub mod known;
pub mod normalise;
pub mod report;
pub mod run;
pub mod session;
pub mod shrink;
pub mod step;

#[cfg(test)]
mod tests;
