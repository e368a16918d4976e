//! The modes of the watch-management requests: which watches `checkWatches` and
//! `removeWatches` address (`Watcher.WatcherType`), and the kind of watch `addWatch` leaves
//! (`AddWatchMode`).
//!
//! Requests carry both raw (see [`crate::RemoveWatchesRequest`], [`crate::AddWatchRequest`]):
//! an out-of-range value is judged by the server, not dropped by the decoder.

use crate::wire_enum::wire_enum;

wire_enum! {
    /// Which watches `checkWatches`/`removeWatches` address (`Watcher.WatcherType`). 3.8 accepts
    /// only 1 to 3; 4 and 5 are 3.9 additions.
    pub enum WatcherType {
        /// Standard child watches.
        Children = 1,
        /// Standard data and exist watches.
        Data = 2,
        /// Every mode in both tables.
        Any = 3,
        /// Persistent watches (3.9).
        Persistent = 4,
        /// Persistent recursive watches (3.9).
        PersistentRecursive = 5,
    }
}

wire_enum! {
    /// The mode of an `addWatch` request (`AddWatchMode`).
    pub enum AddWatchMode {
        /// Fires on every event at the path, and stays.
        Persistent = 0,
        /// Fires on create, delete and data change at the path and below, and stays.
        PersistentRecursive = 1,
    }
}
