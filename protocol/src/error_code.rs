//! Result codes (`KeeperException.Code`): the `err` of a reply header and of each multi result.
//!
//! ZooKeeper outcomes are values carried in replies, never Rust errors. Invariant: the member
//! names and numbers are Java's, including the client-side codes no server sends, so that a
//! code from any peer has a name.

use crate::wire_enum::wire_enum;

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
