//! The transaction log the core emits when [`CoreConfig::log_txns`] is on: one [`TxnEntry`]
//! per zxid handed out, in zxid order, as ZooKeeper 3.8 writes it (docs/storage.md), for the
//! shell to make durable.
//!
//! Invariants: every zxid produces exactly one entry, pushed when its txn completes and
//! before the next zxid is taken, so the buffer is always in zxid order with no gaps; headers
//! carry the session (0 for the reaper), the request's xid (0 for createSession, expiry and
//! reaping), the zxid, the wall time and the type, as ZooKeeper's `PrepRequestProcessor`
//! sets them; a digest (the tree digest after the txn, [`digest`](super::digest)) is attached
//! exactly where ZooKeeper attaches one: to every txn that completes its preparation, and to
//! no plain failed write.
//!
//! [`CoreConfig::log_txns`]: super::CoreConfig::log_txns

use shepherd_protocol::txn::{
    CreateContainerTxn, CreateTTLTxn, CreateTxn, ErrorTxn, TxnBody, TxnDigest, TxnEntry, TxnHeader,
};
use shepherd_protocol::{Acl, CreateMode, OpCode};

use super::owner::Owner;
use super::txn::Txn;
use super::{Core, digest, path};

/// The txn types that are not request op codes (ZooKeeper's `OpCode.error`).
pub(crate) const ERROR_TYPE: i32 = -1;

impl Core {
    /// Moves the entries logged since the last call into `into`, in zxid order. Empty unless
    /// [`CoreConfig::log_txns`](super::CoreConfig::log_txns) is on.
    pub fn take_log(&mut self, into: &mut Vec<TxnEntry>) {
        into.append(&mut self.log);
    }

    /// The tree digest ZooKeeper would compute now (`DataTree.getTreeDigest`), if the core
    /// keeps it (only while logging).
    pub fn tree_digest(&self) -> Option<i64> {
        self.tree.digest()
    }

    /// Logs one txn with the header `txn` describes. `digest`: `None` for no digest record,
    /// `Some(skew)` for the tree digest now plus `skew`.
    pub(super) fn log_txn(
        &mut self,
        txn: &Txn,
        op_type: i32,
        body: impl FnOnce() -> TxnBody,
        digest: Option<i64>,
    ) {
        if !self.config.log_txns {
            return;
        }
        let digest = digest.and_then(|skew| {
            self.tree.digest().map(|d| TxnDigest {
                version: digest::VERSION,
                tree_digest: d.wrapping_add(skew),
            })
        });
        self.log.push(TxnEntry {
            header: TxnHeader {
                client_id: txn.session,
                cxid: txn.cxid,
                zxid: txn.zxid,
                time: txn.time,
                op_type,
            },
            body: body(),
            digest,
        });
    }

    /// Logs a write that failed as a whole: type error, its code, and no digest (ZooKeeper
    /// throws before the digest is prepared).
    pub(super) fn log_error(&mut self, txn: &Txn, err: i32) {
        self.log_txn(txn, ERROR_TYPE, || TxnBody::Error(ErrorTxn { err }), None);
    }

    /// Logs a single-op write from its txn: the op's own record and the digest after it when
    /// it succeeded, an error record without a digest when it failed.
    pub(super) fn log_single(&mut self, txn: &mut Txn, result: Result<(), i32>) {
        match result {
            Ok(()) => {
                if let Some((op_type, body)) = txn.records.as_mut().and_then(Vec::pop) {
                    let skew = txn.digest_skew;
                    self.log_txn(txn, op_type, || body, Some(skew));
                }
            }
            Err(err) => self.log_error(txn, err),
        }
    }

    /// Records a create that just succeeded (path, data, ACL and TTL as stored): the record
    /// its opcode selects, with the parent's stored cversion after it. ZooKeeper prepares the
    /// logged digest from a Stat whose owner follows the **flags** (`pRequest2TxnCreate`),
    /// while the node applied follows the opcode; where the two disagree (a create with
    /// container flags, a createContainer with other flags) the logged digest is that
    /// prepared one, which `txn.digest_skew` carries.
    pub(super) fn record_create(
        &self,
        op: OpCode,
        mode: CreateMode,
        (path, data, acl, ttl): (&str, &Option<Vec<u8>>, &[Acl], i64),
        txn: &mut Txn,
    ) {
        let parent = path::split(path).0;
        let parent_c_version = self.tree.get(parent).map_or(0, |n| n.creates);
        let (logged_path, data, acl) = (path.to_string(), data.clone(), acl.to_vec());
        txn.record(op.into(), || match op {
            OpCode::CreateContainer => TxnBody::CreateContainer(CreateContainerTxn {
                path: logged_path,
                data,
                acl,
                parent_c_version,
            }),
            OpCode::CreateTTL => TxnBody::CreateTTL(CreateTTLTxn {
                path: logged_path,
                data,
                acl,
                parent_c_version,
                ttl,
            }),
            _ => TxnBody::Create(CreateTxn {
                path: logged_path,
                data,
                acl,
                ephemeral: mode.is_ephemeral(),
                parent_c_version,
            }),
        });
        let prepared_owner = if mode == CreateMode::Container {
            Owner::Container
        } else if mode.is_ttl() {
            Owner::Ttl(ttl)
        } else if mode.is_ephemeral() {
            Owner::Ephemeral(txn.session)
        } else {
            Owner::Persistent
        };
        if let Some(node) = self.tree.get(path)
            && node.owner != prepared_owner
            && self.tree.digest().is_some()
        {
            let mut prepared = node.clone();
            prepared.owner = prepared_owner;
            txn.digest_skew = digest::node_digest(path, &prepared).wrapping_sub(node.digest());
        }
    }
}
