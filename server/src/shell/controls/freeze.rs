//! Frozen sessions and partitioned members: the connections that neither read nor write, as
//! behind a network partition, until thawed or healed.
//!
//! Two sets decide it: frozen sessions (a connection whose session is in it is held) and
//! partitioned ensemble members (every connection of such a member is held, before its
//! handshake too, so that a new connection is never answered). A partition is only the freeze
//! applied by member instead of by session: the connection tasks hold the same way for both.
//!
//! The connection tasks do the holding; this owns only the sets and a generation counter that
//! moves on every freeze, thaw, partition and heal, so that a held task wakes and looks again.
//! Off the hot path when unused: with nothing held a connection checks one atomic per frame.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use parking_lot::Mutex;
use tokio::sync::watch;

use crate::core::SessionId;

/// What is held: both sets under one lock, so that no order between two locks can go wrong.
#[derive(Default)]
struct Held {
    sessions: HashSet<SessionId>,
    /// Partitioned members, by id (`handle/members.rs`).
    members: HashSet<u64>,
}

impl Held {
    fn is_empty(&self) -> bool {
        self.sessions.is_empty() && self.members.is_empty()
    }
}

/// The frozen sessions and partitioned members of one server.
pub(crate) struct FrozenSessions {
    held: Mutex<Held>,
    /// Whether anything is held, readable without the lock.
    frozen_present: AtomicBool,
    /// Bumped on every change; connection tasks re-check when it moves.
    generation: watch::Sender<u64>,
}

impl FrozenSessions {
    pub(crate) fn new() -> FrozenSessions {
        FrozenSessions {
            held: Mutex::new(Held::default()),
            frozen_present: AtomicBool::new(false),
            generation: watch::Sender::new(0),
        }
    }

    /// Applies `change` under the lock, then republishes the flag and wakes held tasks.
    fn change<T>(&self, change: impl FnOnce(&mut Held) -> T) -> T {
        let mut held = self.held.lock();
        let out = change(&mut held);
        self.frozen_present.store(!held.is_empty(), Relaxed);
        self.generation.send_modify(|g| *g += 1);
        out
    }

    pub(crate) fn freeze(&self, session: SessionId) {
        self.change(|held| held.sessions.insert(session));
    }

    /// False if the session was not frozen.
    pub(crate) fn thaw(&self, session: SessionId) -> bool {
        self.change(|held| held.sessions.remove(&session))
    }

    /// Holds every connection of `member`. False if it already was.
    pub(crate) fn partition(&self, member: u64) -> bool {
        self.change(|held| held.members.insert(member))
    }

    /// Ends a member's partition. False if it was not partitioned.
    pub(crate) fn heal(&self, member: u64) -> bool {
        self.change(|held| held.members.remove(&member))
    }

    /// Whether `member` is partitioned.
    pub(crate) fn is_partitioned(&self, member: u64) -> bool {
        self.any() && self.held.lock().members.contains(&member)
    }

    /// Whether `session` is frozen (the test controls list it).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn is_frozen(&self, session: SessionId) -> bool {
        self.any() && self.held.lock().sessions.contains(&session)
    }

    /// Cheap: false whenever nothing is held.
    pub(crate) fn any(&self) -> bool {
        self.frozen_present.load(Relaxed)
    }

    /// Whether a connection of `member` (of `session`, once its handshake is answered) is
    /// held: its member is partitioned or its session frozen. Cheap: false whenever nothing
    /// is held.
    pub(crate) fn holds(&self, member: u64, session: Option<SessionId>) -> bool {
        if !self.any() {
            return false;
        }
        let held = self.held.lock();
        held.members.contains(&member) || session.is_some_and(|s| held.sessions.contains(&s))
    }

    /// Changes on every freeze, thaw, partition and heal.
    pub(crate) fn watch(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }
}
