//! [`Stat`], a node's metadata as every stat-bearing reply carries it.
//!
//! Invariant: the 68-byte layout is fixed; fields are in wire order, so `Stat::default()` is the
//! all-zero stat of a node that does not exist.

use crate::record::record;

record! {
    /// A node's metadata, 68 bytes (reference docs/protocol.md §7).
    pub struct Stat {
        /// zxid of the create.
        pub czxid: i64,
        /// zxid of the last setData.
        pub mzxid: i64,
        /// Creation time, ms since the epoch.
        pub ctime: i64,
        /// Last setData time, ms since the epoch.
        pub mtime: i64,
        /// Number of setData calls.
        pub version: i32,
        /// Child creates plus child deletes.
        pub cversion: i32,
        /// Number of setACL calls.
        pub aversion: i32,
        /// The owning session for ephemerals, else 0.
        pub ephemeral_owner: i64,
        /// Length of the data (0 for null).
        pub data_length: i32,
        /// Number of children.
        pub num_children: i32,
        /// zxid of the last child create or delete.
        pub pzxid: i64,
    }
}
