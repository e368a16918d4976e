//! [`Recipe`]: the lock recipes the herd benchmark compares, by their command-line and CSV
//! names.
//!
//! Acquiring is not the benchmark's business: each recipe maps onto a
//! [`shepherd_recipes::LockKind`], and every contender takes the
//! [`AnyLock`](shepherd_recipes::AnyLock) built from it. What
//! is the benchmark's own is kept here: the names, which contenders read and which write on
//! a shared lock, and the node with which the coordinator blocks a lock before the measured
//! phase.
//!
//! Invariants: [`Recipe::name`] is the name clap parses (a unit test checks it), so the CSV and
//! the command line agree; the coordinator's blocking node sits where [`LockKind::build`] lays
//! the lock out (`<dir>/lock` for the ephemeral lock, a sequential node in `<dir>` otherwise),
//! and sorts as a writer's, so that it blocks readers and writers alike.

use clap::ValueEnum;
use shepherd_client::CreateMode;
use shepherd_recipes::{LockKind, WaitStrategy};

/// A lock recipe, with its waiting strategy.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Recipe {
    /// `EphemeralLock`: one fixed ephemeral node, waiters watch it with exists.
    EphemeralExists,
    /// `SequentialLock` with `WaitStrategy::Herd`: waiters watch the folder's children.
    SequentialHerd,
    /// `SequentialLock` with `WaitStrategy::Predecessor`: waiters watch the next lower node.
    SequentialPredecessor,
    /// `SharedLock` (even contenders read, odd ones write) with `WaitStrategy::Herd`.
    SharedHerd,
    /// `SharedLock` (even contenders read, odd ones write) with `WaitStrategy::Predecessor`.
    SharedPredecessor,
    /// `Mutex`, Curator's `InterProcessMutex` (predecessor watches).
    CuratorMutex,
}

impl Recipe {
    /// Every recipe, in table order.
    pub const ALL: [Recipe; 6] = [
        Recipe::EphemeralExists,
        Recipe::SequentialHerd,
        Recipe::SequentialPredecessor,
        Recipe::SharedHerd,
        Recipe::SharedPredecessor,
        Recipe::CuratorMutex,
    ];

    /// The name used on the command line and in the CSV.
    pub fn name(self) -> &'static str {
        match self {
            Recipe::EphemeralExists => "ephemeral-exists",
            Recipe::SequentialHerd => "sequential-herd",
            Recipe::SequentialPredecessor => "sequential-predecessor",
            Recipe::SharedHerd => "shared-herd",
            Recipe::SharedPredecessor => "shared-predecessor",
            Recipe::CuratorMutex => "curator-mutex",
        }
    }

    /// The recipe called `name` (see [`Recipe::name`]).
    pub fn from_name(name: &str) -> Option<Recipe> {
        Recipe::ALL.into_iter().find(|r| r.name() == name)
    }

    /// The lock contender `index` takes: the shared recipes alternate readers (even) and
    /// writers (odd).
    pub fn kind(self, index: usize) -> LockKind {
        use WaitStrategy::{Herd, Predecessor};
        let shared = |s| {
            if index % 2 == 0 {
                LockKind::SharedRead(s)
            } else {
                LockKind::SharedWrite(s)
            }
        };
        match self {
            Recipe::EphemeralExists => LockKind::Ephemeral,
            Recipe::SequentialHerd => LockKind::Sequential(Herd),
            Recipe::SequentialPredecessor => LockKind::Sequential(Predecessor),
            Recipe::SharedHerd => shared(Herd),
            Recipe::SharedPredecessor => shared(Predecessor),
            Recipe::CuratorMutex => LockKind::Mutex,
        }
    }

    /// The node whose presence blocks every contender of this recipe on `dir`: the fixed
    /// node itself for `ephemeral-exists`, else a writer's node at the head of the queue
    /// (`bench-coordinator-lock-<seq>`, which every sequential recipe here reads as a
    /// writer's).
    pub fn blocker(self, dir: &str) -> Blocker {
        match self {
            Recipe::EphemeralExists => Blocker {
                path: format!("{dir}/lock"),
                data: b"bench-coordinator",
                mode: CreateMode::Ephemeral,
            },
            _ => Blocker {
                path: format!("{dir}/bench-coordinator-lock-"),
                data: b"",
                mode: CreateMode::EphemeralSequential,
            },
        }
    }
}

/// The coordinator's node that blocks a lock until the measured phase: what to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocker {
    /// Its path (the prefix, for a sequential node).
    pub path: String,
    /// Its data.
    pub data: &'static [u8],
    /// Ephemeral, so that it goes with the coordinator whatever happens.
    pub mode: CreateMode,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_command_line_names() {
        for recipe in Recipe::ALL {
            assert_eq!(
                Recipe::from_str(recipe.name(), false),
                Ok(recipe),
                "{recipe:?}"
            );
            assert_eq!(Recipe::from_name(recipe.name()), Some(recipe));
        }
        assert_eq!(Recipe::value_variants(), Recipe::ALL);
        assert_eq!(Recipe::from_name("mutex"), None);
    }
}
