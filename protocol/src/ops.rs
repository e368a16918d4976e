//! One enum of requests and one of responses, with a variant per operation (docs/protocol.md §4).
//!
//! A request is decoded from its opcode and body. A response has no opcode of its own on the
//! wire: it is decoded with the opcode the caller remembered for that xid, and only when the
//! reply header's `err` is 0 (a failed reply is the header alone, docs/protocol.md §4.2).

use crate::codec::{Codec, DecodeError};
use crate::header::{ReplyHeader, RequestHeader};
use crate::multi::{MultiRequest, MultiResponse};
use crate::op_code::OpCode;
use crate::requests::*;
use crate::responses::*;
use crate::watcher_event::WatcherEvent;

/// Generates `Request`/`Response` with their opcode mapping and codecs from one table, so the
/// three views of an operation (variant, opcode, body type) cannot drift apart.
macro_rules! operations {
    (
        requests { $( $(#[$rm:meta])* $rvar:ident $(($rty:ty))? = $rop:ident ),+ $(,)? }
        responses { $( $(#[$sm:meta])* $svar:ident $(($sty:ty))? = $sop:ident ),+ $(,)? }
    ) => {
        /// A request body, one variant per operation.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Request {
            $( $(#[$rm])* $rvar $(($rty))? ),+
        }

        impl Request {
            /// The opcode this request is sent with.
            pub fn op_code(&self) -> OpCode {
                match self { $( operations!(@pat Request $rvar $(($rty))?) => OpCode::$rop ),+ }
            }

            /// Decodes the body of a request with opcode `op`.
            ///
            /// # Errors
            /// [`DecodeError`] for a malformed body, or for an opcode that is never a request
            /// (notification 0 and error -1).
            pub fn decode(op: OpCode, buf: &mut &[u8]) -> Result<Request, DecodeError> {
                $( if op == OpCode::$rop {
                    return Ok(operations!(@decode Request $rvar buf $(($rty))?));
                } )+
                Err(DecodeError::UnknownValue { kind: "request opcode", value: i32::from(op).into() })
            }

            /// Appends the body (not the header).
            pub fn encode(&self, buf: &mut Vec<u8>) {
                match self {
                    $( operations!(@bind Request $rvar v $(($rty))?) => { operations!(@encode v buf $(($rty))?) } )+
                }
            }
        }

        /// A response body, one variant per operation.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Response {
            $( $(#[$sm])* $svar $(($sty))? ),+
        }

        impl Response {
            /// The opcode of the request this answers.
            pub fn op_code(&self) -> OpCode {
                match self { $( operations!(@pat Response $svar $(($sty))?) => OpCode::$sop ),+ }
            }

            /// Decodes the body of a successful reply to a request with opcode `op`.
            ///
            /// # Errors
            /// [`DecodeError`] for a malformed body, or an opcode that has no reply.
            pub fn decode(op: OpCode, buf: &mut &[u8]) -> Result<Response, DecodeError> {
                $( if op == OpCode::$sop {
                    return Ok(operations!(@decode Response $svar buf $(($sty))?));
                } )+
                Err(DecodeError::UnknownValue { kind: "response opcode", value: i32::from(op).into() })
            }

            /// Appends the body (not the header).
            pub fn encode(&self, buf: &mut Vec<u8>) {
                match self {
                    $( operations!(@bind Response $svar v $(($sty))?) => { operations!(@encode v buf $(($sty))?) } )+
                }
            }
        }

        #[cfg(any(test, feature = "arbitrary"))]
        mod arbitrary {
            use super::*;
            use proptest::prelude::*;

            impl Arbitrary for Request {
                type Parameters = ();
                type Strategy = BoxedStrategy<Request>;
                fn arbitrary_with(_: ()) -> Self::Strategy {
                    proptest::strategy::Union::new(vec![
                        $( operations!(@strategy Request $rvar $(($rty))?) ),+
                    ]).boxed()
                }
            }

            impl Arbitrary for Response {
                type Parameters = ();
                type Strategy = BoxedStrategy<Response>;
                fn arbitrary_with(_: ()) -> Self::Strategy {
                    proptest::strategy::Union::new(vec![
                        $( operations!(@strategy Response $svar $(($sty))?) ),+
                    ]).boxed()
                }
            }
        }
    };

    (@pat $enum:ident $var:ident ($ty:ty)) => { $enum::$var(_) };
    (@pat $enum:ident $var:ident) => { $enum::$var };
    (@bind $enum:ident $var:ident $v:ident ($ty:ty)) => { $enum::$var($v) };
    (@bind $enum:ident $var:ident $v:ident) => { $enum::$var };
    (@decode $enum:ident $var:ident $buf:ident ($ty:ty)) => { $enum::$var(<$ty as Codec>::decode($buf)?) };
    (@decode $enum:ident $var:ident $buf:ident) => { $enum::$var };
    (@encode $v:ident $buf:ident ($ty:ty)) => { $v.encode($buf) };
    (@encode $v:ident $buf:ident) => { () };
    (@strategy $enum:ident $var:ident ($ty:ty)) => { any::<$ty>().prop_map($enum::$var).boxed() };
    (@strategy $enum:ident $var:ident) => { Just($enum::$var).boxed() };
}

operations! {
    requests {
        /// create (1).
        Create(CreateRequest) = Create,
        /// delete (2).
        Delete(DeleteRequest) = Delete,
        /// exists (3).
        Exists(ExistsRequest) = Exists,
        /// getData (4).
        GetData(GetDataRequest) = GetData,
        /// setData (5).
        SetData(SetDataRequest) = SetData,
        /// getACL (6).
        GetACL(GetACLRequest) = GetACL,
        /// setACL (7).
        SetACL(SetACLRequest) = SetACL,
        /// getChildren (8).
        GetChildren(GetChildrenRequest) = GetChildren,
        /// sync (9).
        Sync(SyncRequest) = Sync,
        /// ping (11), no body.
        Ping = Ping,
        /// getChildren2 (12).
        GetChildren2(GetChildren2Request) = GetChildren2,
        /// check (13): valid only inside multi; top-level it is refused.
        Check(CheckVersionRequest) = Check,
        /// multi (14).
        Multi(MultiRequest) = Multi,
        /// create2 (15).
        Create2(CreateRequest) = Create2,
        /// reconfig (16).
        Reconfig(ReconfigRequest) = Reconfig,
        /// checkWatches (17).
        CheckWatches(CheckWatchesRequest) = CheckWatches,
        /// removeWatches (18).
        RemoveWatches(RemoveWatchesRequest) = RemoveWatches,
        /// createContainer (19).
        CreateContainer(CreateRequest) = CreateContainer,
        /// deleteContainer (20): server-internal; 3.8 reads the path as raw bytes, no length.
        DeleteContainer(RawBody) = DeleteContainer,
        /// createTTL (21).
        CreateTTL(CreateTTLRequest) = CreateTTL,
        /// multiRead (22).
        MultiRead(MultiRequest) = MultiRead,
        /// auth (100).
        Auth(AuthPacket) = Auth,
        /// setWatches (101).
        SetWatches(SetWatches) = SetWatches,
        /// sasl (102).
        Sasl(GetSASLRequest) = Sasl,
        /// getEphemerals (103).
        GetEphemerals(GetEphemeralsRequest) = GetEphemerals,
        /// getAllChildrenNumber (104).
        GetAllChildrenNumber(GetAllChildrenNumberRequest) = GetAllChildrenNumber,
        /// setWatches2 (105).
        SetWatches2(SetWatches2) = SetWatches2,
        /// addWatch (106).
        AddWatch(AddWatchRequest) = AddWatch,
        /// whoAmI (107), no body.
        WhoAmI = WhoAmI,
        /// createSession (-10): server-internal; a client that sends it gets no reply.
        CreateSession = CreateSession,
        /// closeSession (-11), no body.
        CloseSession = CloseSession,
    }
    responses {
        /// create (1): the path.
        Create(CreateResponse) = Create,
        /// delete (2), no body.
        Delete = Delete,
        /// exists (3).
        Exists(ExistsResponse) = Exists,
        /// getData (4).
        GetData(GetDataResponse) = GetData,
        /// setData (5).
        SetData(SetDataResponse) = SetData,
        /// getACL (6).
        GetACL(GetACLResponse) = GetACL,
        /// setACL (7).
        SetACL(SetACLResponse) = SetACL,
        /// getChildren (8).
        GetChildren(GetChildrenResponse) = GetChildren,
        /// sync (9): the path echoed.
        Sync(SyncResponse) = Sync,
        /// ping (11), no body.
        Ping = Ping,
        /// getChildren2 (12).
        GetChildren2(GetChildren2Response) = GetChildren2,
        /// multi (14).
        Multi(MultiResponse) = Multi,
        /// create2 (15).
        Create2(Create2Response) = Create2,
        /// reconfig (16): the new config as data and stat.
        Reconfig(GetDataResponse) = Reconfig,
        /// checkWatches (17), no body.
        CheckWatches = CheckWatches,
        /// removeWatches (18), no body.
        RemoveWatches = RemoveWatches,
        /// createContainer (19).
        CreateContainer(Create2Response) = CreateContainer,
        /// createTTL (21).
        CreateTTL(Create2Response) = CreateTTL,
        /// multiRead (22).
        MultiRead(MultiResponse) = MultiRead,
        /// auth (100), no body.
        Auth = Auth,
        /// setWatches (101), no body.
        SetWatches = SetWatches,
        /// sasl (102).
        Sasl(SetSASLResponse) = Sasl,
        /// getEphemerals (103).
        GetEphemerals(GetEphemeralsResponse) = GetEphemerals,
        /// getAllChildrenNumber (104).
        GetAllChildrenNumber(GetAllChildrenNumberResponse) = GetAllChildrenNumber,
        /// setWatches2 (105), no body.
        SetWatches2 = SetWatches2,
        /// addWatch (106): a 4-byte 0, which the Java client reads.
        AddWatch(ErrorResponse) = AddWatch,
        /// whoAmI (107).
        WhoAmI(WhoAmIResponse) = WhoAmI,
        /// closeSession (-11), no body.
        CloseSession = CloseSession,
    }
}

/// The rest of a frame taken verbatim, for the one request whose body is not a jute record.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawBody(pub Vec<u8>);

impl Codec for RawBody {
    const MIN_SIZE: usize = 0;
    fn decode(buf: &mut &[u8]) -> Result<Self, DecodeError> {
        let body = buf.to_vec();
        *buf = &[];
        Ok(RawBody(body))
    }
    fn encode(&self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(&self.0);
    }
}

#[cfg(any(test, feature = "arbitrary"))]
impl proptest::arbitrary::Arbitrary for RawBody {
    type Parameters = ();
    type Strategy = proptest::strategy::BoxedStrategy<RawBody>;
    fn arbitrary_with(_: ()) -> Self::Strategy {
        use proptest::prelude::*;
        any::<Vec<u8>>().prop_map(RawBody).boxed()
    }
}

/// Encodes a request frame payload: header, then body.
pub fn encode_request(xid: i32, request: &Request, buf: &mut Vec<u8>) {
    RequestHeader {
        xid,
        op_type: request.op_code().into(),
    }
    .encode(buf);
    request.encode(buf);
}

/// Encodes a reply frame payload: header, then the body if there is one.
pub fn encode_reply(header: &ReplyHeader, body: Option<&Response>, buf: &mut Vec<u8>) {
    header.encode(buf);
    if let Some(body) = body {
        body.encode(buf);
    }
}

/// Encodes a notification frame payload (xid -1).
pub fn encode_event(zxid: i64, event: &WatcherEvent, buf: &mut Vec<u8>) {
    ReplyHeader {
        xid: crate::xid::NOTIFICATION,
        zxid,
        err: 0,
    }
    .encode(buf);
    event.encode(buf);
}
