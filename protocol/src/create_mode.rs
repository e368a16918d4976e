//! Create modes (`CreateMode`): the `flags` of a create request, and what each one implies.
//!
//! Invariant: the properties of a mode (ephemeral, sequential, TTL) are answered here and
//! nowhere else, so the server's create path and the client's options cannot disagree.

use crate::wire_enum::wire_enum;

wire_enum! {
    /// The `flags` of a create request (`CreateMode`).
    pub enum CreateMode {
        /// Persistent.
        Persistent = 0,
        /// Deleted with its session.
        Ephemeral = 1,
        /// Persistent, with a sequence suffix.
        PersistentSequential = 2,
        /// Ephemeral, with a sequence suffix.
        EphemeralSequential = 3,
        /// Reaped once its last child is gone.
        Container = 4,
        /// Reaped when childless and unmodified for its TTL.
        PersistentWithTTL = 5,
        /// TTL, with a sequence suffix.
        PersistentSequentialWithTTL = 6,
    }
}

impl CreateMode {
    /// Owned by a session and deleted with it.
    pub const fn is_ephemeral(self) -> bool {
        matches!(
            self,
            CreateMode::Ephemeral | CreateMode::EphemeralSequential
        )
    }
    /// Gets a sequence suffix from the parent's counter.
    pub const fn is_sequential(self) -> bool {
        matches!(
            self,
            CreateMode::PersistentSequential
                | CreateMode::EphemeralSequential
                | CreateMode::PersistentSequentialWithTTL
        )
    }
    /// Needs a TTL (and `createTTL`).
    pub const fn is_ttl(self) -> bool {
        matches!(
            self,
            CreateMode::PersistentWithTTL | CreateMode::PersistentSequentialWithTTL
        )
    }
}
