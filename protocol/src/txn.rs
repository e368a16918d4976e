//! The records of ZooKeeper's transaction log and snapshots (the jute modules
//! `org.apache.zookeeper.txn` and `org.apache.zookeeper.server.persistence` of ZooKeeper 3.8,
//! `zookeeper-jute/src/main/resources/zookeeper.jute`), and [`TxnBody`], the body of one logged
//! transaction selected by its header's type.
//!
//! These are the on-disk form of every write; the server's storage writes and reads them
//! byte for byte as ZooKeeper does, so a data directory moves between the two servers. Which
//! record follows a header is fixed by the header's `type` (docs/storage.md): the decoder
//! needs the type, and a type with no body here is a decode error, never a guess.

use crate::acl::Acl;
use crate::codec::{Codec, DecodeError};
use crate::op_code::OpCode;
use crate::record::record;

record! {
    /// The first record of a log (`ZKLG`) or snapshot (`ZKSN`) file.
    pub struct FileHeader {
        /// `ZKLG` or `ZKSN` as a big-endian int.
        pub magic: i32,
        /// Always 2.
        pub version: i32,
        /// The database id; ZooKeeper writes 0 in logs and -1 in snapshots.
        pub dbid: i64,
    }
}

record! {
    /// Precedes every logged transaction.
    pub struct TxnHeader {
        /// The session the write ran for (0 for the server's own writes).
        pub client_id: i64,
        /// The request's xid (`cxid`).
        pub cxid: i32,
        /// The zxid the write took.
        pub zxid: i64,
        /// Wall-clock ms of the write (the nodes' ctime and mtime).
        pub time: i64,
        /// The op code, which selects the body (see [`TxnBody`]).
        pub op_type: i32,
    }
}

record! {
    /// The tree digest after a transaction, logged after its body since ZooKeeper 3.6.
    pub struct TxnDigest {
        /// The digest algorithm's version (2 in ZooKeeper 3.8).
        pub version: i32,
        /// The digest of the whole tree once the transaction is applied.
        pub tree_digest: i64,
    }
}

record! {
    /// A node's Stat as stored: `cversion` counts child creates (the visible cversion is
    /// `2 * cversion - numChildren`), and there are no derived fields.
    pub struct StatPersisted {
        /// Created zxid.
        pub czxid: i64,
        /// Last modified zxid.
        pub mzxid: i64,
        /// Created, wall-clock ms.
        pub ctime: i64,
        /// Last modified, wall-clock ms.
        pub mtime: i64,
        /// Data version.
        pub version: i32,
        /// Child creates.
        pub cversion: i32,
        /// ACL version.
        pub aversion: i32,
        /// Owner session, or the container/TTL marker.
        pub ephemeral_owner: i64,
        /// Zxid of the last child change.
        pub pzxid: i64,
    }
}

record! {
    /// create (1) and create2 (15).
    pub struct CreateTxn {
        /// The full path, sequence suffix included.
        pub path: String,
        /// The data (null stays null).
        pub data: Option<Vec<u8>>,
        /// The node's ACL.
        pub acl: Vec<Acl>,
        /// Whether the node is ephemeral (owned by the header's session).
        pub ephemeral: bool,
        /// The parent's stored cversion after this create.
        pub parent_c_version: i32,
    }
}

record! {
    /// createTTL (21).
    pub struct CreateTTLTxn {
        /// The full path, sequence suffix included.
        pub path: String,
        /// The data.
        pub data: Option<Vec<u8>>,
        /// The node's ACL.
        pub acl: Vec<Acl>,
        /// The parent's stored cversion after this create.
        pub parent_c_version: i32,
        /// The TTL in ms.
        pub ttl: i64,
    }
}

record! {
    /// createContainer (19).
    pub struct CreateContainerTxn {
        /// The full path.
        pub path: String,
        /// The data.
        pub data: Option<Vec<u8>>,
        /// The node's ACL.
        pub acl: Vec<Acl>,
        /// The parent's stored cversion after this create.
        pub parent_c_version: i32,
    }
}

record! {
    /// delete (2) and deleteContainer (20).
    pub struct DeleteTxn {
        /// The node deleted.
        pub path: String,
    }
}

record! {
    /// setData (5).
    pub struct SetDataTxn {
        /// The node.
        pub path: String,
        /// Its new data.
        pub data: Option<Vec<u8>>,
        /// Its new data version.
        pub version: i32,
    }
}

record! {
    /// check (13), inside a multi.
    pub struct CheckVersionTxn {
        /// The node checked.
        pub path: String,
        /// The version it had.
        pub version: i32,
    }
}

record! {
    /// setACL (7).
    pub struct SetACLTxn {
        /// The node.
        pub path: String,
        /// Its new ACL.
        pub acl: Vec<Acl>,
        /// Its new ACL version.
        pub version: i32,
    }
}

record! {
    /// createSession (-10).
    pub struct CreateSessionTxn {
        /// The negotiated session timeout, ms.
        pub time_out: i32,
    }
}

record! {
    /// closeSession (-11): the ephemerals the close deletes.
    pub struct CloseSessionTxn {
        /// Paths deleted with the session.
        pub paths2_delete: Vec<String>,
    }
}

record! {
    /// error (-1): a write that failed still takes its zxid and is logged.
    pub struct ErrorTxn {
        /// The error code.
        pub err: i32,
    }
}

/// The body of one logged transaction. The header's type selects it; several types share a
/// body (create and create2, delete and deleteContainer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnBody {
    /// create (1), create2 (15).
    Create(CreateTxn),
    /// createContainer (19).
    CreateContainer(CreateContainerTxn),
    /// createTTL (21).
    CreateTTL(CreateTTLTxn),
    /// delete (2), deleteContainer (20).
    Delete(DeleteTxn),
    /// setData (5).
    SetData(SetDataTxn),
    /// setACL (7).
    SetACL(SetACLTxn),
    /// check (13), only inside a multi.
    CheckVersion(CheckVersionTxn),
    /// createSession (-10).
    CreateSession(CreateSessionTxn),
    /// closeSession (-11). `None`: the body-less form ZooKeeper writes with
    /// `zookeeper.closeSessionTxn.enabled=false`.
    CloseSession(Option<CloseSessionTxn>),
    /// error (-1).
    Error(ErrorTxn),
    /// multi (14): each op as (its type, its body).
    Multi(Vec<(i32, TxnBody)>),
}

impl TxnBody {
    /// Decodes the body that follows a header of type `op_type`.
    ///
    /// # Errors
    /// [`DecodeError::UnknownValue`] for a type that has no logged body (or a multi inside a
    /// multi); any other [`DecodeError`] for bytes that do not hold the record.
    pub fn decode(op_type: i32, buf: &mut &[u8]) -> Result<TxnBody, DecodeError> {
        Self::decode_at(op_type, buf, true)
    }

    fn decode_at(op_type: i32, buf: &mut &[u8], top: bool) -> Result<TxnBody, DecodeError> {
        let unknown = DecodeError::UnknownValue {
            kind: "txn type",
            value: op_type.into(),
        };
        let op = OpCode::try_from(op_type).map_err(|_| unknown.clone())?;
        Ok(match op {
            OpCode::Create | OpCode::Create2 => TxnBody::Create(Codec::decode(buf)?),
            OpCode::CreateContainer => TxnBody::CreateContainer(Codec::decode(buf)?),
            OpCode::CreateTTL => TxnBody::CreateTTL(Codec::decode(buf)?),
            OpCode::Delete | OpCode::DeleteContainer => TxnBody::Delete(Codec::decode(buf)?),
            OpCode::SetData => TxnBody::SetData(Codec::decode(buf)?),
            OpCode::SetACL => TxnBody::SetACL(Codec::decode(buf)?),
            OpCode::Check => TxnBody::CheckVersion(Codec::decode(buf)?),
            OpCode::CreateSession => TxnBody::CreateSession(Codec::decode(buf)?),
            OpCode::CloseSession if buf.is_empty() => TxnBody::CloseSession(None),
            OpCode::CloseSession => TxnBody::CloseSession(Some(Codec::decode(buf)?)),
            OpCode::Error => TxnBody::Error(Codec::decode(buf)?),
            OpCode::Multi if top => {
                let count = i32::decode(buf)?;
                // Each op is at least a type and a buffer length: bound the count by the bytes.
                let count =
                    usize::try_from(count).map_err(|_| DecodeError::NegativeLength(count))?;
                if count > buf.len() / 8 {
                    return Err(DecodeError::LengthOverrun {
                        len: count as i64,
                        remaining: buf.len(),
                    });
                }
                let mut ops = Vec::with_capacity(count);
                for _ in 0..count {
                    let sub_type = i32::decode(buf)?;
                    let bytes = Option::<Vec<u8>>::decode(buf)?.unwrap_or_default();
                    let body = Self::decode_at(sub_type, &mut &bytes[..], false)?;
                    ops.push((sub_type, body));
                }
                TxnBody::Multi(ops)
            }
            _ => return Err(unknown),
        })
    }

    /// Appends the body's bytes (a multi's ops each as a type and a length-prefixed buffer).
    pub fn encode(&self, buf: &mut Vec<u8>) {
        match self {
            TxnBody::Create(t) => t.encode(buf),
            TxnBody::CreateContainer(t) => t.encode(buf),
            TxnBody::CreateTTL(t) => t.encode(buf),
            TxnBody::Delete(t) => t.encode(buf),
            TxnBody::SetData(t) => t.encode(buf),
            TxnBody::SetACL(t) => t.encode(buf),
            TxnBody::CheckVersion(t) => t.encode(buf),
            TxnBody::CreateSession(t) => t.encode(buf),
            TxnBody::CloseSession(t) => {
                if let Some(t) = t {
                    t.encode(buf);
                }
            }
            TxnBody::Error(t) => t.encode(buf),
            TxnBody::Multi(ops) => {
                i32::try_from(ops.len()).unwrap_or(i32::MAX).encode(buf);
                for (op_type, body) in ops {
                    op_type.encode(buf);
                    let mut inner = Vec::new();
                    body.encode(&mut inner);
                    Some(inner).encode(buf);
                }
            }
        }
    }
}

/// One logged transaction: what a log entry holds between its length and its end-of-record
/// byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnEntry {
    /// Who, when, which zxid, which type.
    pub header: TxnHeader,
    /// The record the type selects.
    pub body: TxnBody,
    /// The tree digest after it, where one was written.
    pub digest: Option<TxnDigest>,
}

impl TxnEntry {
    /// Decodes header, body and the optional digest from one entry's bytes.
    ///
    /// # Errors
    /// Any [`DecodeError`] of the header or body; a digest cut short is an error too.
    pub fn decode(mut bytes: &[u8]) -> Result<TxnEntry, DecodeError> {
        let buf = &mut bytes;
        let header = TxnHeader::decode(buf)?;
        let body = TxnBody::decode(header.op_type, buf)?;
        let digest = if buf.is_empty() {
            None
        } else {
            Some(TxnDigest::decode(buf)?)
        };
        Ok(TxnEntry {
            header,
            body,
            digest,
        })
    }

    /// Appends header, body and digest, as ZooKeeper marshals a log entry.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        self.header.encode(buf);
        self.body.encode(buf);
        if let Some(d) = &self.digest {
            d.encode(buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(entry: TxnEntry) {
        let mut bytes = Vec::new();
        entry.encode(&mut bytes);
        assert_eq!(TxnEntry::decode(&bytes).unwrap(), entry);
    }

    #[test]
    fn entries_round_trip() {
        let header = |op: OpCode| TxnHeader {
            client_id: 0x100,
            cxid: 3,
            zxid: 7,
            time: 1_700_000_000_000,
            op_type: op.into(),
        };
        let digest = Some(TxnDigest {
            version: 2,
            tree_digest: 12345,
        });
        round_trip(TxnEntry {
            header: header(OpCode::Create),
            body: TxnBody::Create(CreateTxn {
                path: "/a".into(),
                data: None,
                acl: Acl::open_unsafe(),
                ephemeral: true,
                parent_c_version: 4,
            }),
            digest,
        });
        round_trip(TxnEntry {
            header: header(OpCode::Multi),
            body: TxnBody::Multi(vec![
                (
                    OpCode::Delete.into(),
                    TxnBody::Delete(DeleteTxn { path: "/b".into() }),
                ),
                (OpCode::Error.into(), TxnBody::Error(ErrorTxn { err: -101 })),
            ]),
            digest: None,
        });
        round_trip(TxnEntry {
            header: header(OpCode::CloseSession),
            body: TxnBody::CloseSession(None),
            digest: None,
        });
    }

    #[test]
    fn hostile_bodies_are_errors() {
        // A multi claiming more ops than bytes, a nested multi, an unknown type.
        let mut bytes = Vec::new();
        i32::MAX.encode(&mut bytes);
        assert!(TxnBody::decode(OpCode::Multi.into(), &mut &bytes[..]).is_err());
        let mut nested = Vec::new();
        1i32.encode(&mut nested);
        i32::from(OpCode::Multi).encode(&mut nested);
        Some(vec![0u8, 0, 0, 0]).encode(&mut nested);
        assert!(TxnBody::decode(OpCode::Multi.into(), &mut &nested[..]).is_err());
        assert!(TxnBody::decode(4, &mut &[][..]).is_err());
    }
}
