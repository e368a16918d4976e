//! multi (op 14) and multiRead (op 22): op lists and result lists (docs/protocol.md §10).
//!
//! Both directions are a run of `MultiHeader` + body pairs closed by a header with `done` set.
//! Every pair consumes at least one header's bytes, so a loop over them ends within the frame;
//! an op type the list may not hold is a decode error (ZooKeeper: `MarshallingError`). Whether
//! read and write ops are mixed is for the server to judge, so both decode here.

use crate::codec::{Codec, DecodeError};
use crate::op_code::OpCode;
use crate::record::record;
use crate::requests::{
    CheckVersionRequest, CreateRequest, CreateTTLRequest, DeleteRequest, GetChildrenRequest,
    GetDataRequest, SetDataRequest,
};
use crate::responses::{Create2Response, ErrorResponse, GetDataResponse};
use crate::stat::Stat;

record! {
    /// Precedes each op and each result in a multi (docs/protocol.md §10).
    pub struct MultiHeader {
        /// The op type, or -1 for the terminator and for error results.
        pub op_type: i32,
        /// True on the terminator only.
        pub done: bool,
        /// -1 in requests; the result code in responses.
        pub err: i32,
    }
}

/// One operation inside a multi or multiRead request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultiOp {
    /// create (1): the result is a path.
    Create(CreateRequest),
    /// create2 (15): ZooKeeper 3.8 answers it with a plain create result.
    Create2(CreateRequest),
    /// createContainer (19).
    CreateContainer(CreateRequest),
    /// createTTL (21).
    CreateTTL(CreateTTLRequest),
    /// delete (2).
    Delete(DeleteRequest),
    /// setData (5).
    SetData(SetDataRequest),
    /// check (13).
    Check(CheckVersionRequest),
    /// getData (4), multiRead only; the watch flag is ignored.
    GetData(GetDataRequest),
    /// getChildren (8), multiRead only; the watch flag is ignored.
    GetChildren(GetChildrenRequest),
}

impl MultiOp {
    /// The op type written in its header.
    pub fn op_code(&self) -> OpCode {
        match self {
            MultiOp::Create(_) => OpCode::Create,
            MultiOp::Create2(_) => OpCode::Create2,
            MultiOp::CreateContainer(_) => OpCode::CreateContainer,
            MultiOp::CreateTTL(_) => OpCode::CreateTTL,
            MultiOp::Delete(_) => OpCode::Delete,
            MultiOp::SetData(_) => OpCode::SetData,
            MultiOp::Check(_) => OpCode::Check,
            MultiOp::GetData(_) => OpCode::GetData,
            MultiOp::GetChildren(_) => OpCode::GetChildren,
        }
    }

    /// Whether this op reads (allowed in multiRead) rather than writes (allowed in multi).
    pub fn is_read(&self) -> bool {
        matches!(self, MultiOp::GetData(_) | MultiOp::GetChildren(_))
    }

    /// The path the op addresses.
    pub fn path(&self) -> &str {
        match self {
            MultiOp::Create(r) | MultiOp::Create2(r) | MultiOp::CreateContainer(r) => &r.path,
            MultiOp::CreateTTL(r) => &r.path,
            MultiOp::Delete(r) => &r.path,
            MultiOp::SetData(r) => &r.path,
            MultiOp::Check(r) => &r.path,
            MultiOp::GetData(r) | MultiOp::GetChildren(r) => &r.path,
        }
    }

    fn encode_body(&self, buf: &mut Vec<u8>) {
        match self {
            MultiOp::Create(r) | MultiOp::Create2(r) | MultiOp::CreateContainer(r) => r.encode(buf),
            MultiOp::CreateTTL(r) => r.encode(buf),
            MultiOp::Delete(r) => r.encode(buf),
            MultiOp::SetData(r) => r.encode(buf),
            MultiOp::Check(r) => r.encode(buf),
            MultiOp::GetData(r) | MultiOp::GetChildren(r) => r.encode(buf),
        }
    }
}

/// The body of a multi or multiRead request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MultiRequest {
    /// The ops, in order.
    pub ops: Vec<MultiOp>,
}

/// The terminator both lists end with.
const TERMINATOR: MultiHeader = MultiHeader {
    op_type: -1,
    done: true,
    err: -1,
};

impl Codec for MultiRequest {
    const MIN_SIZE: usize = MultiHeader::MIN_SIZE;
    fn decode(buf: &mut &[u8]) -> Result<Self, DecodeError> {
        let mut ops = Vec::new();
        loop {
            let header = MultiHeader::decode(buf)?;
            if header.done {
                return Ok(MultiRequest { ops });
            }
            let op = match OpCode::try_from(header.op_type)? {
                OpCode::Create => MultiOp::Create(Codec::decode(buf)?),
                OpCode::Create2 => MultiOp::Create2(Codec::decode(buf)?),
                OpCode::CreateContainer => MultiOp::CreateContainer(Codec::decode(buf)?),
                OpCode::CreateTTL => MultiOp::CreateTTL(Codec::decode(buf)?),
                OpCode::Delete => MultiOp::Delete(Codec::decode(buf)?),
                OpCode::SetData => MultiOp::SetData(Codec::decode(buf)?),
                OpCode::Check => MultiOp::Check(Codec::decode(buf)?),
                OpCode::GetData => MultiOp::GetData(Codec::decode(buf)?),
                OpCode::GetChildren => MultiOp::GetChildren(Codec::decode(buf)?),
                _ => return Err(DecodeError::Multi("op type not allowed in a multi")),
            };
            ops.push(op);
        }
    }
    fn encode(&self, buf: &mut Vec<u8>) {
        for op in &self.ops {
            MultiHeader {
                op_type: op.op_code().into(),
                done: false,
                err: -1,
            }
            .encode(buf);
            op.encode_body(buf);
        }
        TERMINATOR.encode(buf);
    }
}

/// One result inside a multi or multiRead response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultiResult {
    /// create (type 1): the path. ZooKeeper 3.8 also answers create2 this way.
    Create(String),
    /// create2, createContainer, createTTL (type 15): path and stat.
    Create2(Create2Response),
    /// delete (type 2).
    Delete,
    /// setData (type 5).
    SetData(Stat),
    /// check (type 13).
    Check,
    /// getData (type 4).
    GetData(GetDataResponse),
    /// getChildren (type 8).
    GetChildren(Vec<String>),
    /// An error result (type -1) with its code: 0 before the failing op, the failure's code at
    /// it, -2 (RuntimeInconsistency) after it.
    Error(i32),
}

/// The body of a multi or multiRead response.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MultiResponse {
    /// One result per op, in order.
    pub results: Vec<MultiResult>,
}

impl Codec for MultiResponse {
    const MIN_SIZE: usize = MultiHeader::MIN_SIZE;
    fn decode(buf: &mut &[u8]) -> Result<Self, DecodeError> {
        let mut results = Vec::new();
        loop {
            let header = MultiHeader::decode(buf)?;
            if header.done {
                return Ok(MultiResponse { results });
            }
            let result = match OpCode::try_from(header.op_type)? {
                OpCode::Create => MultiResult::Create(Codec::decode(buf)?),
                OpCode::Create2 => MultiResult::Create2(Codec::decode(buf)?),
                OpCode::Delete => MultiResult::Delete,
                OpCode::SetData => MultiResult::SetData(Codec::decode(buf)?),
                OpCode::Check => MultiResult::Check,
                OpCode::GetData => MultiResult::GetData(Codec::decode(buf)?),
                OpCode::GetChildren => MultiResult::GetChildren(Codec::decode(buf)?),
                OpCode::Error => MultiResult::Error(ErrorResponse::decode(buf)?.err),
                _ => return Err(DecodeError::Multi("result type not allowed in a multi")),
            };
            results.push(result);
        }
    }
    fn encode(&self, buf: &mut Vec<u8>) {
        for result in &self.results {
            let (op, err) = match result {
                MultiResult::Create(_) => (OpCode::Create, 0),
                MultiResult::Create2(_) => (OpCode::Create2, 0),
                MultiResult::Delete => (OpCode::Delete, 0),
                MultiResult::SetData(_) => (OpCode::SetData, 0),
                MultiResult::Check => (OpCode::Check, 0),
                MultiResult::GetData(_) => (OpCode::GetData, 0),
                MultiResult::GetChildren(_) => (OpCode::GetChildren, 0),
                MultiResult::Error(code) => (OpCode::Error, *code),
            };
            MultiHeader {
                op_type: op.into(),
                done: false,
                err,
            }
            .encode(buf);
            match result {
                MultiResult::Create(path) => path.encode(buf),
                MultiResult::Create2(r) => r.encode(buf),
                MultiResult::SetData(stat) => stat.encode(buf),
                MultiResult::GetData(r) => r.encode(buf),
                MultiResult::GetChildren(names) => names.encode(buf),
                MultiResult::Error(code) => ErrorResponse { err: *code }.encode(buf),
                MultiResult::Delete | MultiResult::Check => {}
            }
        }
        TERMINATOR.encode(buf);
    }
}

#[cfg(any(test, feature = "arbitrary"))]
mod arbitrary {
    use super::*;
    use proptest::prelude::*;

    impl Arbitrary for MultiOp {
        type Parameters = ();
        type Strategy = BoxedStrategy<MultiOp>;
        fn arbitrary_with(_: ()) -> Self::Strategy {
            prop_oneof![
                any::<CreateRequest>().prop_map(MultiOp::Create),
                any::<CreateRequest>().prop_map(MultiOp::Create2),
                any::<CreateRequest>().prop_map(MultiOp::CreateContainer),
                any::<CreateTTLRequest>().prop_map(MultiOp::CreateTTL),
                any::<DeleteRequest>().prop_map(MultiOp::Delete),
                any::<SetDataRequest>().prop_map(MultiOp::SetData),
                any::<CheckVersionRequest>().prop_map(MultiOp::Check),
                any::<GetDataRequest>().prop_map(MultiOp::GetData),
                any::<GetChildrenRequest>().prop_map(MultiOp::GetChildren),
            ]
            .boxed()
        }
    }

    impl Arbitrary for MultiRequest {
        type Parameters = ();
        type Strategy = BoxedStrategy<MultiRequest>;
        fn arbitrary_with(_: ()) -> Self::Strategy {
            proptest::collection::vec(any::<MultiOp>(), 0..8)
                .prop_map(|ops| MultiRequest { ops })
                .boxed()
        }
    }

    impl Arbitrary for MultiResult {
        type Parameters = ();
        type Strategy = BoxedStrategy<MultiResult>;
        fn arbitrary_with(_: ()) -> Self::Strategy {
            prop_oneof![
                any::<String>().prop_map(MultiResult::Create),
                any::<Create2Response>().prop_map(MultiResult::Create2),
                Just(MultiResult::Delete),
                any::<Stat>().prop_map(MultiResult::SetData),
                Just(MultiResult::Check),
                any::<GetDataResponse>().prop_map(MultiResult::GetData),
                any::<Vec<String>>().prop_map(MultiResult::GetChildren),
                any::<i32>().prop_map(MultiResult::Error),
            ]
            .boxed()
        }
    }

    impl Arbitrary for MultiResponse {
        type Parameters = ();
        type Strategy = BoxedStrategy<MultiResponse>;
        fn arbitrary_with(_: ()) -> Self::Strategy {
            proptest::collection::vec(any::<MultiResult>(), 0..8)
                .prop_map(|results| MultiResponse { results })
                .boxed()
        }
    }
}
