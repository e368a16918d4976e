//! multi (op 14) and multiRead (op 22), docs/protocol.md §10.
//!
//! Invariants: a multi is all-or-nothing under one zxid: its ops run in order against the live
//! tree, each seeing the effects of the ones before it, and on the first failure every change is
//! rolled back from the undo log and no event fires. multiRead is neither atomic nor a txn, and
//! never registers watches.

use shepherd_protocol::{
    Create2Response, CreateRequest, ErrorCode, Id, MultiOp, MultiResponse, MultiResult, OpCode,
};

use super::Core;
use super::ops::OpResult;
use super::txn::Txn;

impl Core {
    /// Applies the write ops of a multi inside `txn`. On failure the tree is rolled back, the
    /// txn's events are discarded, and the results are 0 before the failing op, its code at it,
    /// and -2 (RuntimeInconsistency) after it (docs/protocol.md §10.3).
    pub(crate) fn multi(&mut self, ops: &[MultiOp], ids: &[Id], txn: &mut Txn) -> MultiResponse {
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
            self.tree.rollback(std::mem::take(&mut txn.undo));
            txn.fired.clear();
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
        MultiResponse { results }
    }

    fn multi_op(&mut self, op: &MultiOp, ids: &[Id], txn: &mut Txn) -> OpResult<MultiResult> {
        Ok(match op {
            // 3.8 decays create2 to a plain create result, path only (ZOOKEEPER-4026, docs/protocol.md §10.2).
            MultiOp::Create(r) | MultiOp::Create2(r) => {
                MultiResult::Create(self.create(OpCode::Create, r, -1, ids, txn)?.0)
            }
            MultiOp::CreateContainer(r) => {
                let (path, stat) = self.create(OpCode::CreateContainer, r, -1, ids, txn)?;
                MultiResult::Create2(Create2Response { path, stat })
            }
            MultiOp::CreateTTL(r) => {
                let create = CreateRequest {
                    path: r.path.clone(),
                    data: r.data.clone(),
                    acl: r.acl.clone(),
                    flags: r.flags,
                };
                let (path, stat) = self.create(OpCode::CreateTTL, &create, r.ttl, ids, txn)?;
                MultiResult::Create2(Create2Response { path, stat })
            }
            MultiOp::Delete(r) => {
                self.delete(&r.path, r.version, ids, txn)?;
                MultiResult::Delete
            }
            MultiOp::SetData(r) => MultiResult::SetData(self.set_data(r, ids, txn)?),
            MultiOp::Check(r) => {
                self.check(r, ids)?;
                MultiResult::Check
            }
            // Filtered out before a multi runs (a mix is MarshallingError, docs/protocol.md §10.1).
            MultiOp::GetData(_) | MultiOp::GetChildren(_) => {
                return Err(ErrorCode::MarshallingError);
            }
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
