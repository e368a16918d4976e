//! Every jute record of the client protocol (reference §5), with fields in wire order.
//!
//! A record is its fields back to back, nothing between them. Names follow `zookeeper.jute`.
//! Fields that the server must judge rather than the decoder (create flags, watch modes and
//! watcher types) stay raw `i32`s with typed accessors, so that an out-of-range value becomes the
//! ZooKeeper reply it deserves (`BadArguments`, `MarshallingError`) instead of a dropped frame.

use crate::codec::{Codec, DecodeError};
use crate::enums::{AddWatchMode, CreateMode, EventType, KeeperState, WatcherType};

/// Defines a record: the struct, its [`Codec`] (fields in order), and a proptest strategy.
macro_rules! record {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Default)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty ),+
        }

        impl Codec for $name {
            const MIN_SIZE: usize = 0 $(+ <$ty as Codec>::MIN_SIZE)+;
            fn decode(buf: &mut &[u8]) -> Result<Self, DecodeError> {
                Ok($name { $( $field: <$ty as Codec>::decode(buf)? ),+ })
            }
            fn encode(&self, buf: &mut Vec<u8>) {
                $( self.$field.encode(buf); )+
            }
        }

        #[cfg(any(test, feature = "arbitrary"))]
        impl proptest::arbitrary::Arbitrary for $name {
            type Parameters = ();
            type Strategy = proptest::strategy::BoxedStrategy<$name>;
            fn arbitrary_with(_: ()) -> Self::Strategy {
                use proptest::prelude::*;
                ( $( any::<$ty>(), )+ )
                    .prop_map(|( $($field,)+ )| $name { $($field),+ })
                    .boxed()
            }
        }
    };
}

/// An identity: a scheme and an id within it (`world:anyone`, `digest:user:hash`, `ip:1.2.3.4`).
///
/// A null string decodes as empty: kazoo writes an empty Python string as null, and ZooKeeper
/// judges a null id exactly as an empty one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Id {
    /// `world`, `auth`, `digest`, `ip`, …
    pub scheme: String,
    /// The id within the scheme.
    pub id: String,
}

impl Id {
    /// An id from two string slices.
    pub fn new(scheme: impl Into<String>, id: impl Into<String>) -> Id {
        Id {
            scheme: scheme.into(),
            id: id.into(),
        }
    }
}

fn decode_lenient_string(buf: &mut &[u8]) -> Result<String, DecodeError> {
    Ok(Option::<String>::decode(buf)?.unwrap_or_default())
}

impl Codec for Id {
    const MIN_SIZE: usize = 8;
    fn decode(buf: &mut &[u8]) -> Result<Self, DecodeError> {
        Ok(Id {
            scheme: decode_lenient_string(buf)?,
            id: decode_lenient_string(buf)?,
        })
    }
    fn encode(&self, buf: &mut Vec<u8>) {
        self.scheme.encode(buf);
        self.id.encode(buf);
    }
}

/// One authenticated identity, as whoAmI reports it.
///
/// Null strings decode as empty, as for [`Id`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ClientInfo {
    /// The auth scheme (`ip`, `digest`, `super`).
    pub auth_scheme: String,
    /// The user within the scheme.
    pub user: String,
}

impl Codec for ClientInfo {
    const MIN_SIZE: usize = 8;
    fn decode(buf: &mut &[u8]) -> Result<Self, DecodeError> {
        Ok(ClientInfo {
            auth_scheme: decode_lenient_string(buf)?,
            user: decode_lenient_string(buf)?,
        })
    }
    fn encode(&self, buf: &mut Vec<u8>) {
        self.auth_scheme.encode(buf);
        self.user.encode(buf);
    }
}

#[cfg(any(test, feature = "arbitrary"))]
mod arbitrary_ids {
    use super::{ClientInfo, Id};
    use proptest::prelude::*;

    impl Arbitrary for Id {
        type Parameters = ();
        type Strategy = BoxedStrategy<Id>;
        fn arbitrary_with(_: ()) -> Self::Strategy {
            (any::<String>(), any::<String>())
                .prop_map(|(scheme, id)| Id { scheme, id })
                .boxed()
        }
    }

    impl Arbitrary for ClientInfo {
        type Parameters = ();
        type Strategy = BoxedStrategy<ClientInfo>;
        fn arbitrary_with(_: ()) -> Self::Strategy {
            (any::<String>(), any::<String>())
                .prop_map(|(auth_scheme, user)| ClientInfo { auth_scheme, user })
                .boxed()
        }
    }
}

record! {
    /// One ACL entry: permission bits (see [`crate::perms`]) for an identity.
    pub struct Acl {
        /// Permission bits.
        pub perms: i32,
        /// Who they are granted to.
        pub id: Id,
    }
}

impl Acl {
    /// `world:anyone` with every permission (`OPEN_ACL_UNSAFE`).
    pub fn open_unsafe() -> Vec<Acl> {
        vec![Acl {
            perms: crate::perms::ALL,
            id: Id::new("world", "anyone"),
        }]
    }
    /// `world:anyone` with READ only (`READ_ACL_UNSAFE`).
    pub fn read_unsafe() -> Vec<Acl> {
        vec![Acl {
            perms: crate::perms::READ,
            id: Id::new("world", "anyone"),
        }]
    }
    /// Every permission for the caller's authenticated identities (`CREATOR_ALL_ACL`).
    pub fn creator_all() -> Vec<Acl> {
        vec![Acl {
            perms: crate::perms::ALL,
            id: Id::new("auth", ""),
        }]
    }
}

record! {
    /// A node's metadata, 68 bytes (reference §7).
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

record! {
    /// Header of every request after the handshake.
    pub struct RequestHeader {
        /// Echoed in the reply.
        pub xid: i32,
        /// The opcode, raw: an unknown one must still be answered (`Unimplemented`).
        pub op_type: i32,
    }
}

record! {
    /// Header of every reply and notification.
    pub struct ReplyHeader {
        /// The request's xid, or a reserved one (see [`crate::xid`]).
        pub xid: i32,
        /// The last zxid at reply time (§3.3).
        pub zxid: i64,
        /// A [`crate::ErrorCode`], raw: a body follows only when it is 0.
        pub err: i32,
    }
}

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
/// Reply to sync: the path echoed.
pub type SyncResponse = PathRequest;
/// getAllChildrenNumber (op 104).
pub type GetAllChildrenNumberRequest = PathRequest;
/// getEphemerals (op 103).
pub type GetEphemeralsRequest = PathRequest;

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
    /// Reply to getACL (op 6).
    pub struct GetACLResponse {
        /// The ACL.
        pub acl: Vec<Acl>,
        /// The node's stat.
        pub stat: Stat,
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
    /// check (op 13, inside multi).
    pub struct CheckVersionRequest {
        /// The node.
        pub path: String,
        /// Expected version, or -1.
        pub version: i32,
    }
}

record! {
    /// Precedes each op and each result in a multi (§10).
    pub struct MultiHeader {
        /// The op type, or -1 for the terminator and for error results.
        pub op_type: i32,
        /// True on the terminator only.
        pub done: bool,
        /// -1 in requests; the result code in responses.
        pub err: i32,
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
    /// A watch notification (sent with xid -1).
    pub struct WatcherEvent {
        /// What happened.
        pub event_type: EventType,
        /// Always `SyncConnected` from a server.
        pub state: KeeperState,
        /// The full server path.
        pub path: String,
    }
}

// The wire enums come from a macro that derives a fixed set of traits, so the default is
// spelled out here, where records need it.
#[allow(clippy::derivable_impls)]
impl Default for EventType {
    fn default() -> Self {
        EventType::None
    }
}

#[allow(clippy::derivable_impls)]
impl Default for KeeperState {
    fn default() -> Self {
        KeeperState::SyncConnected
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
/// sasl (op 102) reply.
pub type SetSASLResponse = SaslToken;
