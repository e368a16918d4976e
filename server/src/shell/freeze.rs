//! Frozen sessions: the set of sessions whose connections neither read nor write, as behind a
//! network partition, until thawed.
//!
//! The connection tasks do the holding; this owns only the set and a generation counter that
//! moves on every freeze and thaw, so that a held task wakes and looks again. Off the hot path
//! when unused: with nothing frozen a connection checks one atomic per frame.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use parking_lot::Mutex;
use tokio::sync::watch;

use crate::core::SessionId;

/// The frozen sessions of one server.
pub(crate) struct FrozenSessions {
    frozen: Mutex<HashSet<SessionId>>,
    /// Whether `frozen` is non-empty, readable without the lock.
    frozen_present: AtomicBool,
    /// Bumped on every freeze and thaw; connection tasks re-check when it moves.
    generation: watch::Sender<u64>,
}

impl FrozenSessions {
    pub(crate) fn new() -> FrozenSessions {
        FrozenSessions {
            frozen: Mutex::new(HashSet::new()),
            frozen_present: AtomicBool::new(false),
            generation: watch::Sender::new(0),
        }
    }

    pub(crate) fn freeze(&self, session: SessionId) {
        let mut frozen = self.frozen.lock();
        frozen.insert(session);
        self.frozen_present.store(true, Relaxed);
        self.generation.send_modify(|g| *g += 1);
    }

    /// False if the session was not frozen.
    pub(crate) fn thaw(&self, session: SessionId) -> bool {
        let mut frozen = self.frozen.lock();
        let was = frozen.remove(&session);
        self.frozen_present.store(!frozen.is_empty(), Relaxed);
        self.generation.send_modify(|g| *g += 1);
        was
    }

    /// Cheap: false whenever no session is frozen.
    pub(crate) fn any(&self) -> bool {
        self.frozen_present.load(Relaxed)
    }

    pub(crate) fn contains(&self, session: SessionId) -> bool {
        self.any() && self.frozen.lock().contains(&session)
    }

    /// Changes on every freeze and thaw.
    pub(crate) fn watch(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }
}
