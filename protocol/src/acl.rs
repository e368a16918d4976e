//! Identities and access control: [`Id`], [`Acl`] with its permission bits ([`perms`]), and
//! the [`ClientInfo`] identities whoAmI reports.
//!
//! Invariant: a null scheme or id decodes as empty, since ZooKeeper judges a null id exactly as
//! an empty one and kazoo writes empty Python strings as null; everything else about an ACL
//! (which schemes exist, whether the bits make sense) is the server's to judge.

use crate::codec::{Codec, DecodeError};
use crate::record::record;

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
