//! Who owns a znode: the Java `ephemeralOwner` field, decoded as ZooKeeper 3.8's
//! `EphemeralType` does, and encoded back for the transaction log and snapshots.
//!
//! Invariants: `Owner::from_raw(o.raw(), true)` gives `o` back for every owner the core makes
//! (an ephemeral's session id is never 0, `i64::MIN` or in the `0xFF…` extended range: ids
//! have top byte 0x01, docs/protocol.md §2.5). Decoding follows `EphemeralType.get` exactly,
//! including its dependence on `zookeeper.extendedTypesEnabled`: with extended types off, an
//! owner in the extended range is an ordinary session id.

use super::SessionId;

/// Who owns a node (the Java `ephemeralOwner` field, decoded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// A plain persistent node.
    Persistent,
    /// A real ephemeral owned by this session.
    Ephemeral(SessionId),
    /// A container (internal owner `Long.MIN_VALUE`).
    Container,
    /// A TTL node with this TTL in ms (internal owner `0xFF << 56 | ttl`).
    Ttl(i64),
}

/// `EphemeralType.EXTENDED_MASK`: the top byte that marks an extended owner.
const EXTENDED_MASK: i64 = 0xff00_0000_0000_0000_u64 as i64;
/// `EphemeralType.RESERVED_BITS_MASK`: the extended feature bits; 0 is TTL, the only one.
const RESERVED_BITS_MASK: i64 = 0x00ff_ff00_0000_0000;
/// The largest TTL (`EphemeralType.TTL.maxValue()`): the 40 bits below the reserved ones.
pub(crate) const MAX_TTL: i64 = 0xFF_FFFF_FFFF;

/// Why a raw owner cannot be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BadOwner(pub i64);

impl Owner {
    /// The stored `ephemeralOwner` (`EphemeralType.toEphemeralOwner` for a TTL).
    pub fn raw(self) -> i64 {
        match self {
            Owner::Persistent => 0,
            Owner::Ephemeral(session) => session,
            Owner::Container => i64::MIN,
            Owner::Ttl(ttl) => EXTENDED_MASK | (ttl & MAX_TTL),
        }
    }

    /// Decodes a stored `ephemeralOwner` as ZooKeeper 3.8's `EphemeralType.get` does: the
    /// extended range only when extended types are enabled (an unknown feature there is an
    /// error, as Java throws), then the container marker, 0, and any other value a session.
    pub fn from_raw(raw: i64, extended_types: bool) -> Result<Owner, BadOwner> {
        if extended_types && raw & EXTENDED_MASK == EXTENDED_MASK {
            return if raw & RESERVED_BITS_MASK == 0 {
                Ok(Owner::Ttl(raw & MAX_TTL))
            } else {
                Err(BadOwner(raw))
            };
        }
        Ok(match raw {
            i64::MIN => Owner::Container,
            0 => Owner::Persistent,
            session => Owner::Ephemeral(session),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_round_trip_as_ephemeral_type_reads_them() {
        for owner in [
            Owner::Persistent,
            Owner::Ephemeral(0x0100_0006_153f_0000),
            Owner::Container,
            Owner::Ttl(1),
            Owner::Ttl(MAX_TTL),
        ] {
            assert_eq!(Owner::from_raw(owner.raw(), true), Ok(owner));
        }
        assert_eq!(Owner::Ttl(500).raw(), 0xff00_0000_0000_01f4_u64 as i64);
        // Extended types off: the TTL marker is just a session id (EphemeralType.get).
        let ttl = Owner::Ttl(500).raw();
        assert_eq!(Owner::from_raw(ttl, false), Ok(Owner::Ephemeral(ttl)));
        // A reserved feature bit is an error, as Java's IllegalArgumentException.
        let bad = EXTENDED_MASK | (1 << 40);
        assert_eq!(Owner::from_raw(bad, true), Err(BadOwner(bad)));
    }
}
