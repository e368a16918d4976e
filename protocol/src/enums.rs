//! The numeric vocabularies of the wire: opcodes, error codes, create modes, event types, keeper
//! states and watch modes, named as in the Java server.
//!
//! Each is a `#[repr(i32)]` enum with `TryFrom<i32>`. An unknown number is a
//! [`DecodeError::UnknownValue`], never a panic and never a silent default: the server decides
//! what ZooKeeper answers for it (often `MarshallingError` or `BadArguments`).

use crate::codec::{Codec, DecodeError};

macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:expr ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(i32)]
        pub enum $name {
            $( $(#[$vmeta])* $variant = $value ),+
        }

        impl $name {
            /// Every member, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The name used by the Java server.
            pub const fn name(self) -> &'static str {
                match self { $($name::$variant => stringify!($variant)),+ }
            }
        }

        impl TryFrom<i32> for $name {
            type Error = DecodeError;
            fn try_from(value: i32) -> Result<Self, DecodeError> {
                match value {
                    $(v if v == $value => Ok($name::$variant),)+
                    _ => Err(DecodeError::UnknownValue { kind: stringify!($name), value: value.into() }),
                }
            }
        }

        impl From<$name> for i32 {
            fn from(value: $name) -> i32 {
                value as i32
            }
        }

        impl Codec for $name {
            const MIN_SIZE: usize = 4;
            fn decode(buf: &mut &[u8]) -> Result<Self, DecodeError> {
                $name::try_from(i32::decode(buf)?)
            }
            fn encode(&self, buf: &mut Vec<u8>) {
                (*self as i32).encode(buf);
            }
        }

        #[cfg(any(test, feature = "arbitrary"))]
        impl proptest::arbitrary::Arbitrary for $name {
            type Parameters = ();
            type Strategy = proptest::sample::Select<$name>;
            fn arbitrary_with(_: ()) -> Self::Strategy {
                proptest::sample::select($name::ALL)
            }
        }
    };
}

wire_enum! {
    /// Request types (`ZooDefs.OpCode`).
    pub enum OpCode {
        /// Never a request; the server treats it as invalid.
        Notification = 0,
        /// Create a node; the reply carries the path.
        Create = 1,
        /// Delete a node.
        Delete = 2,
        /// Stat a node, optionally leaving an exist or data watch.
        Exists = 3,
        /// Read a node's data and stat.
        GetData = 4,
        /// Replace a node's data.
        SetData = 5,
        /// Read a node's ACL.
        GetACL = 6,
        /// Replace a node's ACL.
        SetACL = 7,
        /// List a node's children.
        GetChildren = 8,
        /// Wait until earlier writes are applied.
        Sync = 9,
        /// Keep the session alive.
        Ping = 11,
        /// List children with the parent's stat.
        GetChildren2 = 12,
        /// Version check; valid only inside multi.
        Check = 13,
        /// Atomic transaction.
        Multi = 14,
        /// Create, replying with the path and the new node's stat.
        Create2 = 15,
        /// Dynamic reconfiguration (disabled standalone).
        Reconfig = 16,
        /// Ask whether a watch is registered.
        CheckWatches = 17,
        /// Remove registered watches.
        RemoveWatches = 18,
        /// Create a container node.
        CreateContainer = 19,
        /// Server-internal container reaping; clients never send it.
        DeleteContainer = 20,
        /// Create a node with a time to live.
        CreateTTL = 21,
        /// Several reads in one request.
        MultiRead = 22,
        /// Add an authentication identity to the connection.
        Auth = 100,
        /// Re-register watches after a reconnect.
        SetWatches = 101,
        /// A SASL token exchange.
        Sasl = 102,
        /// List the session's ephemeral nodes.
        GetEphemerals = 103,
        /// Count all descendants of a node.
        GetAllChildrenNumber = 104,
        /// Re-register watches, persistent ones included.
        SetWatches2 = 105,
        /// Add a persistent or persistent-recursive watch.
        AddWatch = 106,
        /// List the connection's auth identities.
        WhoAmI = 107,
        /// Server-internal session creation; clients never send it.
        CreateSession = -10,
        /// Close the session.
        CloseSession = -11,
        /// The type of an error result inside a multi response.
        Error = -1,
    }
}

impl OpCode {
    /// Whether ZooKeeper records this operation as a transaction that takes a zxid, whether it
    /// succeeds or fails (§3.3).
    pub const fn is_write(self) -> bool {
        matches!(
            self,
            OpCode::Create
                | OpCode::Create2
                | OpCode::CreateContainer
                | OpCode::CreateTTL
                | OpCode::Delete
                | OpCode::SetData
                | OpCode::SetACL
                | OpCode::Multi
                | OpCode::Reconfig
                | OpCode::CloseSession
                | OpCode::CreateSession
                | OpCode::DeleteContainer
        )
    }
}

wire_enum! {
    /// Result codes (`KeeperException.Code`). ZooKeeper outcomes are values in replies, not Rust
    /// errors: a reply header carries one of these.
    pub enum ErrorCode {
        /// Success.
        Ok = 0,
        /// Generic system error (base code, not sent).
        SystemError = -1,
        /// An op after the failing one in a multi.
        RuntimeInconsistency = -2,
        /// Not sent standalone.
        DataInconsistency = -3,
        /// Client-side: the connection dropped before the reply.
        ConnectionLoss = -4,
        /// The request could not be deserialized.
        MarshallingError = -5,
        /// Unknown opcode, or a feature that is not enabled.
        Unimplemented = -6,
        /// Client-side timeout.
        OperationTimeout = -7,
        /// Invalid path, flags or TTL.
        BadArguments = -8,
        /// Client-side (go-zookeeper).
        InvalidState = -9,
        /// Session check with no session.
        UnknownSession = -12,
        /// Reconfig without quorum.
        NewConfigNoQuorum = -13,
        /// Reconfig already running.
        ReconfigInProgress = -14,
        /// Generic API error (base code, not sent).
        APIError = -100,
        /// The node, or its parent, does not exist.
        NoNode = -101,
        /// Not authorized by the ACL.
        NoAuth = -102,
        /// Version mismatch.
        BadVersion = -103,
        /// Ephemeral nodes cannot have children.
        NoChildrenForEphemerals = -108,
        /// The node already exists.
        NodeExists = -110,
        /// The node has children.
        NotEmpty = -111,
        /// The session has expired.
        SessionExpired = -112,
        /// Client-side.
        InvalidCallback = -113,
        /// Invalid ACL list.
        InvalidACL = -114,
        /// Authentication failed.
        AuthFailed = -115,
        /// Client-side (go-zookeeper).
        Closing = -116,
        /// Client-side (go-zookeeper).
        Nothing = -117,
        /// Quorum only.
        SessionMoved = -118,
        /// A write reached a read-only server.
        NotReadOnly = -119,
        /// Ephemeral on a local session.
        EphemeralOnLocalSession = -120,
        /// No watch matched.
        NoWatcher = -121,
        /// Client-side request timeout.
        RequestTimeout = -122,
        /// Reconfig is disabled.
        ReconfigDisabled = -123,
        /// SASL authentication required.
        SessionClosedRequireSaslAuth = -124,
        /// Quota exceeded (enforced quotas only).
        QuotaExceeded = -125,
        /// Throttled by an overloaded server.
        ThrottledOp = -127,
    }
}

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

wire_enum! {
    /// The type of a watch notification (`Watcher.Event.EventType`).
    pub enum EventType {
        /// Session events, generated by clients only.
        None = -1,
        /// A watched node was created.
        NodeCreated = 1,
        /// A watched node was deleted.
        NodeDeleted = 2,
        /// A watched node's data changed.
        NodeDataChanged = 3,
        /// A watched node's children changed.
        NodeChildrenChanged = 4,
        /// Client-side, after removeWatches.
        DataWatchRemoved = 5,
        /// Client-side, after removeWatches.
        ChildWatchRemoved = 6,
        /// Client-side, after removeWatches.
        PersistentWatchRemoved = 7,
    }
}

wire_enum! {
    /// The connection state in a notification (`Watcher.Event.KeeperState`). The server only
    /// ever sends `SyncConnected`; the rest are client-local.
    pub enum KeeperState {
        /// Deprecated.
        Unknown = -1,
        /// Client-local.
        Disconnected = 0,
        /// Deprecated.
        NoSyncConnected = 1,
        /// Connected; the only state the server sends.
        SyncConnected = 3,
        /// Client-local.
        AuthFailed = 4,
        /// Client-local.
        ConnectedReadOnly = 5,
        /// Client-local.
        SaslAuthenticated = 6,
        /// Client-local.
        Expired = -112,
        /// Client-local.
        Closed = 7,
    }
}

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

/// ACL permission bits (`ZooDefs.Perms`).
pub mod perms {
    /// Read data and list children.
    pub const READ: i32 = 1;
    /// Set data.
    pub const WRITE: i32 = 1 << 1;
    /// Create children.
    pub const CREATE: i32 = 1 << 2;
    /// Delete children.
    pub const DELETE: i32 = 1 << 3;
    /// Set the ACL.
    pub const ADMIN: i32 = 1 << 4;
    /// Everything.
    pub const ALL: i32 = READ | WRITE | CREATE | DELETE | ADMIN;
}

/// Reserved xids (§3.2).
pub mod xid {
    /// A watch notification.
    pub const NOTIFICATION: i32 = -1;
    /// A ping; its reply always carries -2.
    pub const PING: i32 = -2;
    /// The auth packet, by client convention.
    pub const AUTH: i32 = -4;
    /// setWatches and setWatches2, by the convention of the Java, C and Rust clients.
    pub const SET_WATCHES: i32 = -8;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_values_are_errors() {
        assert!(OpCode::try_from(10).is_err());
        assert!(OpCode::try_from(55).is_err());
        assert_eq!(OpCode::try_from(106), Ok(OpCode::AddWatch));
        assert!(CreateMode::try_from(7).is_err());
        assert_eq!(ErrorCode::try_from(-101), Ok(ErrorCode::NoNode));
    }

    #[test]
    fn every_member_round_trips() {
        for &op in OpCode::ALL {
            assert_eq!(OpCode::try_from(i32::from(op)), Ok(op));
        }
        for &e in ErrorCode::ALL {
            assert_eq!(ErrorCode::try_from(i32::from(e)), Ok(e));
        }
    }
}
