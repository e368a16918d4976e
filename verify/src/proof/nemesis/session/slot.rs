//! What the session nemesis knows of one worker: its session now, whether it holds a lock,
//! and whether it is one whose sessions are spared.
//!
//! Invariant: the worker writes its slot, the nemesis reads it and only ever sets `pause`;
//! nothing here is waited on.

use std::sync::atomic::{AtomicBool, AtomicI64};
use std::sync::{Mutex, PoisonError};

/// One worker, as the nemesis sees it.
#[derive(Debug, Default)]
pub struct Slot {
    /// Its current session (0 while it has none).
    pub session: AtomicI64,
    /// Whether it is inside a lock now.
    pub holding: AtomicBool,
    /// Set by the nemesis: pause past the session timeout while holding, then write.
    pub pause: AtomicBool,
    /// Whether the nemesis spares its sessions the faults that may end one
    /// ([`FaultKind::may_end_session`](super::FaultKind::may_end_session)): a worker whose
    /// holds go into the proof's history, which judges mutual exclusion, and a session's end
    /// ends a lock without the holder knowing (fencing, not exclusion, guards that).
    pub spared: bool,
    /// What it is doing, for a hang's message.
    step: Mutex<&'static str>,
}

impl Slot {
    /// A slot, spared or not.
    pub fn new(spared: bool) -> Slot {
        Slot {
            spared,
            ..Slot::default()
        }
    }

    /// Records what the worker is doing.
    pub fn step(&self, step: &'static str) {
        *self.step.lock().unwrap_or_else(PoisonError::into_inner) = step;
    }

    /// What the worker was doing.
    pub fn current_step(&self) -> &'static str {
        *self.step.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
