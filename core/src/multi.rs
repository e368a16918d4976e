//! multi (op 14) and multiRead (op 22), docs/protocol.md §10.
//!
//! Invariants: a multi is all-or-nothing under one zxid: its ops run in order against the live
//! tree, each seeing the effects of the ones before it, and on the first failure every change is
//! rolled back from the undo log and no event fires. multiRead is neither atomic nor a txn, and
//! never registers watches.

use shepherd_protocol::txn::{CheckVersionTxn, ErrorTxn, TxnBody};
use shepherd_protocol::{
    Create2Response, CreateMode, CreateRequest, ErrorCode, Id, MultiOp, MultiResponse, MultiResult,
    OpCode,
};

use super::Core;
use super::log::ERROR_TYPE;
use super::txn::Txn;

/// Why a multi's op failed: the op alone (the multi answers per-op results), or the whole
/// request (the multi answers this error with no results, as 3.8 does when preparing an op
/// throws something other than a `KeeperException`).
enum Failure {
    Op(ErrorCode),
    Whole(ErrorCode),
}

impl From<ErrorCode> for Failure {
    fn from(code: ErrorCode) -> Failure {
        Failure::Op(code)
    }
}

impl Core {
    /// Applies the write ops of a multi inside `txn`. On failure the tree is rolled back, the
    /// txn's events are discarded, and the results are 0 before the failing op, its code at it,
    /// and -2 (RuntimeInconsistency) after it (docs/protocol.md §10.3); `Err` fails the whole
    /// request instead (its zxid is still taken).
    pub(crate) fn multi(
        &mut self,
        ops: &[MultiOp],
        ids: &[Id],
        txn: &mut Txn,
    ) -> Result<MultiResponse, ErrorCode> {
        let mut results = Vec::with_capacity(ops.len());
        let mut failure = None;
        for (i, op) in ops.iter().enumerate() {
            match self.multi_op(op, ids, txn) {
                Ok(result) => results.push(result),
                Err(code) => {
                    failure = Some((i, code));
                    break;
                }
            }
        }
        if let Some((failed, code)) = failure {
            let digest_at_failure = self.tree.digest();
            self.tree.rollback(std::mem::take(&mut txn.undo));
            txn.fired.clear();
            let code = match code {
                Failure::Op(code) => code,
                Failure::Whole(code) => {
                    // ZooKeeper fails the whole request with the digest its earlier ops
                    // prepared still set (none when the first op failed).
                    let skew = digest_at_failure
                        .zip(self.tree.digest())
                        .map(|(then, now)| then.wrapping_sub(now))
                        .filter(|_| failed > 0);
                    let err = code.into();
                    self.log_txn(txn, ERROR_TYPE, || TxnBody::Error(ErrorTxn { err }), skew);
                    return Err(code);
                }
            };
            if let Some(records) = &mut txn.records {
                // The ops before the failure keep their records; the failed op and those
                // after it are error records (`PrepRequestProcessor`'s multi loop).
                let failed_err = i32::from(code);
                let after = i32::from(ErrorCode::RuntimeInconsistency);
                records.truncate(failed);
                records.extend((failed..ops.len()).map(|i| {
                    let err = if i == failed { failed_err } else { after };
                    (ERROR_TYPE, TxnBody::Error(ErrorTxn { err }))
                }));
            }
            results = (0..ops.len())
                .map(|i| {
                    MultiResult::Error(match i.cmp(&failed) {
                        std::cmp::Ordering::Less => 0,
                        std::cmp::Ordering::Equal => code.into(),
                        std::cmp::Ordering::Greater => ErrorCode::RuntimeInconsistency.into(),
                    })
                })
                .collect();
        }
        if let Some(records) = txn.records.take() {
            self.log_txn(
                txn,
                OpCode::Multi.into(),
                || TxnBody::Multi(records),
                Some(0),
            );
        }
        Ok(MultiResponse { results })
    }

    fn multi_op(
        &mut self,
        op: &MultiOp,
        ids: &[Id],
        txn: &mut Txn,
    ) -> Result<MultiResult, Failure> {
        Ok(match op {
            MultiOp::Create(r) | MultiOp::Create2(r) | MultiOp::CreateContainer(r) => {
                self.multi_create(r, None, ids, txn)?
            }
            MultiOp::CreateTTL(r) => {
                let create = CreateRequest {
                    path: r.path.clone(),
                    data: r.data.clone(),
                    acl: r.acl.clone(),
                    flags: r.flags,
                };
                self.multi_create(&create, Some(r.ttl), ids, txn)?
            }
            MultiOp::Delete(r) => {
                self.delete(&r.path, r.version, ids, txn)?;
                MultiResult::Delete
            }
            MultiOp::SetData(r) => MultiResult::SetData(self.set_data(r, ids, txn)?),
            MultiOp::Check(r) => {
                let version = self.check(r, ids)?;
                // Logged with the version incremented, as `checkAndIncVersion` returns it.
                txn.record(OpCode::Check.into(), || {
                    TxnBody::CheckVersion(CheckVersionTxn {
                        path: r.path.clone(),
                        version: version.wrapping_add(1),
                    })
                });
                MultiResult::Check
            }
            // Filtered out before a multi runs (a mix is MarshallingError, docs/protocol.md §10.1).
            MultiOp::GetData(_) | MultiOp::GetChildren(_) => {
                return Err(Failure::Op(ErrorCode::MarshallingError));
            }
        })
    }

    /// A create inside a multi (docs/protocol.md §10.2). 3.8 rebuilds every create sub-op
    /// from its record (`MultiOperationRecord` → `Op.create`), so the **flags**, not the
    /// sub-op's opcode, choose the kind: 4 makes a container, 5 and 6 a TTL node, anything
    /// else a plain create (whose flags are then validated, an invalid value being
    /// BadArguments). A createTTL sub-op keeps its TTL only with TTL flags. TTL flags on a
    /// sub-op without a TTL field make 3.8 cast a `CreateRequest` to `CreateTTLRequest`: the
    /// whole multi fails with MarshallingError. The result is a create2-shaped one (path and
    /// stat, type 15) for a container or TTL node, and a plain create result (path only) for
    /// the rest, whichever opcode the sub-op had (ZOOKEEPER-4026).
    fn multi_create(
        &mut self,
        r: &CreateRequest,
        ttl: Option<i64>,
        ids: &[Id],
        txn: &mut Txn,
    ) -> Result<MultiResult, Failure> {
        let kind = CreateMode::try_from(r.flags).unwrap_or(CreateMode::Persistent);
        let (op, ttl) = match (kind, ttl) {
            (CreateMode::Container, _) => (OpCode::CreateContainer, -1),
            (k, Some(ttl)) if k.is_ttl() => (OpCode::CreateTTL, ttl),
            (k, None) if k.is_ttl() => return Err(Failure::Whole(ErrorCode::MarshallingError)),
            _ => (OpCode::Create, -1),
        };
        let (path, stat) = self.create(op, r, ttl, ids, txn)?;
        Ok(if op == OpCode::Create {
            MultiResult::Create(path)
        } else {
            MultiResult::Create2(Create2Response { path, stat })
        })
    }

    /// multiRead (docs/protocol.md §10.4): each op on its own, errors as per-op results, watch flags ignored.
    pub(crate) fn multi_read(&mut self, ops: &[MultiOp], ids: &[Id]) -> MultiResponse {
        let results = ops
            .iter()
            .map(|op| {
                let result = match op {
                    MultiOp::GetData(r) => {
                        self.get_data(&r.path, None, ids).map(MultiResult::GetData)
                    }
                    MultiOp::GetChildren(r) => self
                        .get_children(&r.path, ids)
                        .map(MultiResult::GetChildren),
                    _ => Err(ErrorCode::MarshallingError),
                };
                result.unwrap_or_else(|code| MultiResult::Error(code.into()))
            })
            .collect();
        MultiResponse { results }
    }
}
