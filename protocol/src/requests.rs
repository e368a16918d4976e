//! The request records of the client protocol (reference docs/protocol.md §5), one per request body, with the
//! aliases that name a shared shape after each operation that uses it.
//!
//! Fields that the server must judge rather than the decoder (create flags, watch modes and
//! watcher types) stay raw `i32`s with typed accessors, so that an out-of-range value becomes the
//! ZooKeeper reply it deserves (`BadArguments`, `MarshallingError`) instead of a dropped frame.
//! Names follow `zookeeper.jute`.

use crate::acl::Acl;
use crate::codec::DecodeError;
use crate::create_mode::CreateMode;
use crate::record::record;
use crate::watch_modes::{AddWatchMode, WatcherType};

record! {
    /// create, create2 and createContainer (ops 1, 15, 19).
    pub struct CreateRequest {
        /// Where to create.
        pub path: String,
        /// Initial data; null is kept.
        pub data: Option<Vec<u8>>,
        /// The new node's ACL.
        pub acl: Vec<Acl>,
        /// A [`CreateMode`], raw: bad flags are `BadArguments`, judged by the server.
        pub flags: i32,
    }
}

impl CreateRequest {
    /// The create mode.
    ///
    /// # Errors
    /// [`DecodeError::UnknownValue`] for flags outside 0..=6.
    pub fn mode(&self) -> Result<CreateMode, DecodeError> {
        CreateMode::try_from(self.flags)
    }
}

record! {
    /// createTTL (op 21).
    pub struct CreateTTLRequest {
        /// Where to create.
        pub path: String,
        /// Initial data.
        pub data: Option<Vec<u8>>,
        /// The new node's ACL.
        pub acl: Vec<Acl>,
        /// A [`CreateMode`], raw.
        pub flags: i32,
        /// Time to live in ms.
        pub ttl: i64,
    }
}

record! {
    /// delete (op 2).
    pub struct DeleteRequest {
        /// What to delete.
        pub path: String,
        /// Expected version, or -1 for any.
        pub version: i32,
    }
}

record! {
    /// exists, getData, getChildren and getChildren2 (ops 3, 4, 8, 12): a path and a watch flag.
    pub struct PathWatchRequest {
        /// The node.
        pub path: String,
        /// Leave a one-shot watch.
        pub watch: bool,
    }
}

/// exists (op 3).
pub type ExistsRequest = PathWatchRequest;
/// getData (op 4).
pub type GetDataRequest = PathWatchRequest;
/// getChildren (op 8).
pub type GetChildrenRequest = PathWatchRequest;
/// getChildren2 (op 12).
pub type GetChildren2Request = PathWatchRequest;

record! {
    /// getACL, sync, getAllChildrenNumber and getEphemerals (ops 6, 9, 104, 103): just a path.
    pub struct PathRequest {
        /// The node (for getEphemerals, a prefix).
        pub path: String,
    }
}

/// getACL (op 6).
pub type GetACLRequest = PathRequest;
/// sync (op 9).
pub type SyncRequest = PathRequest;
/// getAllChildrenNumber (op 104).
pub type GetAllChildrenNumberRequest = PathRequest;
/// getEphemerals (op 103).
pub type GetEphemeralsRequest = PathRequest;

record! {
    /// setData (op 5).
    pub struct SetDataRequest {
        /// The node.
        pub path: String,
        /// New data; null is kept.
        pub data: Option<Vec<u8>>,
        /// Expected version, or -1.
        pub version: i32,
    }
}

record! {
    /// setACL (op 7).
    pub struct SetACLRequest {
        /// The node.
        pub path: String,
        /// The new ACL.
        pub acl: Vec<Acl>,
        /// Expected aversion, or -1.
        pub version: i32,
    }
}

record! {
    /// check (op 13, inside multi).
    pub struct CheckVersionRequest {
        /// The node.
        pub path: String,
        /// Expected version, or -1.
        pub version: i32,
    }
}

record! {
    /// auth (op 100).
    pub struct AuthPacket {
        /// Clients send 0; ignored.
        pub auth_type: i32,
        /// `digest`, `ip`, ….
        pub scheme: String,
        /// The credential, e.g. `user:password`.
        pub auth: Option<Vec<u8>>,
    }
}

record! {
    /// setWatches (op 101).
    pub struct SetWatches {
        /// The client's last seen zxid.
        pub relative_zxid: i64,
        /// Paths with data watches.
        pub data_watches: Vec<String>,
        /// Paths with exist watches.
        pub exist_watches: Vec<String>,
        /// Paths with child watches.
        pub child_watches: Vec<String>,
    }
}

record! {
    /// setWatches2 (op 105).
    pub struct SetWatches2 {
        /// The client's last seen zxid.
        pub relative_zxid: i64,
        /// Paths with data watches.
        pub data_watches: Vec<String>,
        /// Paths with exist watches.
        pub exist_watches: Vec<String>,
        /// Paths with child watches.
        pub child_watches: Vec<String>,
        /// Paths with persistent watches.
        pub persistent_watches: Vec<String>,
        /// Paths with persistent recursive watches.
        pub persistent_recursive_watches: Vec<String>,
    }
}

record! {
    /// addWatch (op 106).
    pub struct AddWatchRequest {
        /// The watched path; it need not exist.
        pub path: String,
        /// An [`AddWatchMode`], raw: a bad mode is `MarshallingError`, judged by the server.
        pub mode: i32,
    }
}

impl AddWatchRequest {
    /// The watch mode.
    ///
    /// # Errors
    /// [`DecodeError::UnknownValue`] for a mode other than 0 or 1.
    pub fn mode(&self) -> Result<AddWatchMode, DecodeError> {
        AddWatchMode::try_from(self.mode)
    }
}

record! {
    /// checkWatches and removeWatches (ops 17, 18).
    pub struct RemoveWatchesRequest {
        /// The watched path.
        pub path: String,
        /// A [`WatcherType`], raw.
        pub watcher_type: i32,
    }
}

/// checkWatches (op 17).
pub type CheckWatchesRequest = RemoveWatchesRequest;

impl RemoveWatchesRequest {
    /// The watcher type.
    ///
    /// # Errors
    /// [`DecodeError::UnknownValue`] for a type outside 1..=5.
    pub fn watcher_type(&self) -> Result<WatcherType, DecodeError> {
        WatcherType::try_from(self.watcher_type)
    }
}

record! {
    /// reconfig (op 16).
    pub struct ReconfigRequest {
        /// Servers to add (incremental mode).
        pub joining_servers: Option<String>,
        /// Servers to remove (incremental mode).
        pub leaving_servers: Option<String>,
        /// The new membership (bulk mode).
        pub new_members: Option<String>,
        /// Expected current config version, or -1.
        pub cur_config_id: i64,
    }
}

record! {
    /// A SASL token, in either direction (ops 102).
    pub struct SaslToken {
        /// The token; the server answers null when SASL is not configured.
        pub token: Option<Vec<u8>>,
    }
}

/// sasl (op 102) request.
pub type GetSASLRequest = SaslToken;
