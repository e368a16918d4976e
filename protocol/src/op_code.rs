//! Operation codes (`ZooDefs.OpCode`): the number in every request header that says which
//! operation the body is.
//!
//! Invariant: the member names and numbers are Java's, so that logs and the reference read the
//! same; whether an operation is a write (takes a zxid) is decided here, once.

use crate::wire_enum::wire_enum;

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
    /// succeeds or fails (docs/protocol.md §3.3).
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
