//! Sans-IO codec for the ZooKeeper client wire protocol, as spoken by ZooKeeper 3.8.
//!
//! Bytes go in, typed records come out, and back: no sockets, no clocks, and with default
//! features no async runtime. The crate owns the exact wire form of every record a ZooKeeper
//! client and server exchange (the jute "binary archive"), the numeric vocabularies (opcodes,
//! error codes, create modes, event types), the framing rule with its `jute.maxbuffer` limit,
//! and the recognition of four-letter admin words.
//!
//! Invariants: decoding never panics and never allocates more than the frame holds; null and
//! empty stay distinct where the wire distinguishes them; decoding then re-encoding a frame
//! produced by a real ZooKeeper gives the same bytes (checked against captured traffic).
//!
//! ```
//! use shepherd_protocol::{Codec, Request, CreateRequest, Acl, encode_request, decode_request};
//!
//! let create = Request::Create(CreateRequest {
//!     path: "/lock".into(),
//!     data: Some(b"owner".to_vec()),
//!     acl: Acl::open_unsafe(),
//!     flags: 1, // ephemeral
//! });
//! let mut payload = Vec::new();
//! encode_request(7, &create, &mut payload);
//! let (header, decoded) = decode_request(&payload).unwrap();
//! assert_eq!(header.xid, 7);
//! assert_eq!(decoded.unwrap(), create);
//! ```
//!
//! Features: `codec` adds a tokio-util `Decoder`/`Encoder` ([`FrameCodec`]); `arbitrary` adds
//! proptest strategies for every record.

// The two declaration macros come first: every module below uses them.
mod record;
mod wire_enum;

mod acl;
mod codec;
mod connect;
mod create_mode;
mod error_code;
mod four_letter_word;
mod frame;
mod header;
mod multi;
mod op_code;
mod ops;
mod requests;
mod responses;
pub mod sasl;
mod stat;
pub mod txn;
mod watch_modes;
mod watcher_event;

pub use acl::{Acl, ClientInfo, Id, perms};
pub use codec::{Codec, DecodeError, decode_from};
pub use connect::{ConnectRequest, ConnectResponse};
pub use create_mode::CreateMode;
pub use error_code::ErrorCode;
pub use four_letter_word::FourLetterWord;
pub use frame::{DEFAULT_MAX_BUFFER, encode_frame, frame_len};
#[cfg(feature = "codec")]
pub use frame::{Frame, FrameCodec};
pub use header::{ReplyHeader, RequestHeader, xid};
pub use multi::{MultiHeader, MultiOp, MultiRequest, MultiResponse, MultiResult};
pub use op_code::OpCode;
pub use ops::{RawBody, Request, Response, encode_event, encode_reply, encode_request};
pub use requests::*;
pub use responses::*;
pub use stat::Stat;
pub use watch_modes::{AddWatchMode, WatcherType};
pub use watcher_event::{EventType, KeeperState, WatcherEvent};

/// Decodes a request payload (after the length prefix): its header, then its body.
///
/// The header is returned even when the body fails, because the server must still answer with
/// the request's xid: an unknown opcode gets `Unimplemented`, a malformed body
/// `MarshallingError`.
///
/// # Errors
/// The outer error means not even the 8-byte header could be read (ZooKeeper closes the
/// connection). The inner one is about the opcode or the body.
pub fn decode_request(
    mut payload: &[u8],
) -> Result<(RequestHeader, Result<Request, DecodeError>), DecodeError> {
    let header = RequestHeader::decode(&mut payload)?;
    let body = OpCode::try_from(header.op_type).and_then(|op| Request::decode(op, &mut payload));
    Ok((header, body))
}

/// What a reply payload turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A watch notification (xid -1).
    Event(ReplyHeader, WatcherEvent),
    /// A reply whose header says success, with its body.
    Ok(ReplyHeader, Response),
    /// A reply with a non-zero error code: the header alone.
    Err(ReplyHeader),
}

/// Decodes a reply payload (after the length prefix). `op_for_xid` gives the opcode the caller
/// sent with that xid; pings (-2) are looked up as any other xid.
///
/// # Errors
/// [`DecodeError`] for a malformed frame, or an xid the caller does not know (returned as
/// [`DecodeError::UnknownValue`] with kind `xid`).
pub fn decode_reply(
    mut payload: &[u8],
    op_for_xid: impl FnOnce(i32) -> Option<OpCode>,
) -> Result<Reply, DecodeError> {
    let header = ReplyHeader::decode(&mut payload)?;
    if header.xid == xid::NOTIFICATION {
        return Ok(Reply::Event(header, WatcherEvent::decode(&mut payload)?));
    }
    if header.err != 0 {
        return Ok(Reply::Err(header));
    }
    let op = op_for_xid(header.xid).ok_or(DecodeError::UnknownValue {
        kind: "xid",
        value: header.xid.into(),
    })?;
    Ok(Reply::Ok(header, Response::decode(op, &mut payload)?))
}

#[cfg(test)]
mod proptests;
