//! Unit tests of the storage formats, on scratch directories.

mod damage;
mod data_dir;
mod fixtures;
mod log;
mod recovery;
mod snapshot;

use shepherd_protocol::Acl;
use shepherd_protocol::OpCode;
use shepherd_protocol::txn::{
    CreateSessionTxn, CreateTxn, DeleteTxn, ErrorTxn, SetDataTxn, TxnBody, TxnDigest, TxnEntry,
    TxnHeader,
};

/// `n` entries of assorted kinds, zxids `first..first + n`.
pub(super) fn sample_entries(first: i64, n: usize) -> Vec<TxnEntry> {
    (0..n)
        .map(|i| {
            let zxid = first + i as i64;
            let (op, body) = match i % 5 {
                0 => (
                    OpCode::CreateSession,
                    TxnBody::CreateSession(CreateSessionTxn { time_out: 30_000 }),
                ),
                1 => (
                    OpCode::Create,
                    TxnBody::Create(CreateTxn {
                        path: format!("/node-{i}"),
                        data: Some(vec![i as u8; i % 300]),
                        acl: Acl::open_unsafe(),
                        ephemeral: i % 2 == 0,
                        parent_c_version: i as i32,
                    }),
                ),
                2 => (
                    OpCode::SetData,
                    TxnBody::SetData(SetDataTxn {
                        path: format!("/node-{}", i - 1),
                        data: None,
                        version: 1,
                    }),
                ),
                3 => (OpCode::Error, TxnBody::Error(ErrorTxn { err: -101 })),
                _ => (
                    OpCode::Multi,
                    TxnBody::Multi(vec![(
                        OpCode::Delete.into(),
                        TxnBody::Delete(DeleteTxn {
                            path: format!("/node-{}", i - 3),
                        }),
                    )]),
                ),
            };
            TxnEntry {
                header: TxnHeader {
                    client_id: 0x100 + i as i64,
                    cxid: i as i32,
                    zxid,
                    time: 1_700_000_000_000 + i as i64,
                    op_type: op.into(),
                },
                body,
                digest: Some(TxnDigest {
                    version: 2,
                    tree_digest: zxid * 7919,
                }),
            }
        })
        .collect()
}
