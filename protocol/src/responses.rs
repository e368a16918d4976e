//! The response records of the client protocol (reference docs/protocol.md §5): the body of a successful reply,
//! one per operation that has one, with the aliases that name a shared shape after each
//! operation.
//!
//! Invariant: a body follows a reply header only when its `err` is 0 (docs/protocol.md §4.2); which record to
//! decode is decided by the opcode the caller remembered for that xid, never by the bytes.

use crate::acl::{Acl, ClientInfo};
use crate::record::record;
use crate::requests::{PathRequest, SaslToken};
use crate::stat::Stat;

record! {
    /// Reply to create (op 1).
    pub struct CreateResponse {
        /// The created path, sequence suffix included.
        pub path: String,
    }
}

record! {
    /// Reply to create2, createContainer and createTTL.
    pub struct Create2Response {
        /// The created path.
        pub path: String,
        /// The new node's stat.
        pub stat: Stat,
    }
}

/// Reply to sync: the path echoed.
pub type SyncResponse = PathRequest;

record! {
    /// Reply to exists, setData and setACL: a stat.
    pub struct StatResponse {
        /// The node's stat.
        pub stat: Stat,
    }
}

/// Reply to exists (op 3).
pub type ExistsResponse = StatResponse;
/// Reply to setData (op 5).
pub type SetDataResponse = StatResponse;
/// Reply to setACL (op 7).
pub type SetACLResponse = StatResponse;

record! {
    /// Reply to getData (op 4), and to reconfig.
    pub struct GetDataResponse {
        /// The data; null is kept.
        pub data: Option<Vec<u8>>,
        /// The node's stat.
        pub stat: Stat,
    }
}

record! {
    /// Reply to getACL (op 6).
    pub struct GetACLResponse {
        /// The ACL.
        pub acl: Vec<Acl>,
        /// The node's stat.
        pub stat: Stat,
    }
}

record! {
    /// Reply to getChildren (op 8).
    pub struct GetChildrenResponse {
        /// Bare child names.
        pub children: Vec<String>,
    }
}

record! {
    /// Reply to getChildren2 (op 12).
    pub struct GetChildren2Response {
        /// Bare child names.
        pub children: Vec<String>,
        /// The parent's stat.
        pub stat: Stat,
    }
}

record! {
    /// Reply to getAllChildrenNumber (op 104).
    pub struct GetAllChildrenNumberResponse {
        /// Number of descendants.
        pub total_number: i32,
    }
}

record! {
    /// The body of an addWatch reply, and of multi error results: a bare code.
    pub struct ErrorResponse {
        /// The code.
        pub err: i32,
    }
}

record! {
    /// Reply to getEphemerals (op 103).
    pub struct GetEphemeralsResponse {
        /// Absolute paths.
        pub ephemerals: Vec<String>,
    }
}

record! {
    /// Reply to whoAmI (op 107).
    pub struct WhoAmIResponse {
        /// The connection's identities.
        pub client_info: Vec<ClientInfo>,
    }
}

/// sasl (op 102) reply.
pub type SetSASLResponse = SaslToken;
