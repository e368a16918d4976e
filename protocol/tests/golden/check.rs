//! Checking one frame: decode it by its direction and kind, re-encode it, compare, and record
//! what it proved in the [`Coverage`] that the test's minimum-coverage assertions read.

use std::collections::BTreeMap;

use shepherd_protocol::{
    ConnectRequest, ConnectResponse, DecodeError, MultiResult, OpCode, Reply, ReplyHeader, Request,
    Response, WatcherEvent, decode_from, decode_reply, decode_request, encode_event, encode_frame,
    encode_reply, encode_request, xid,
};

use crate::fixture::{Dir, Fixture, FrameLine, Kind, comments_call_invalid};
use crate::normalize::{Normalizable, Outcome, compare};

/// Facts collected over all frames, for the coverage assertions.
#[derive(Default)]
pub(crate) struct Coverage {
    pub(crate) connect_request_lens: BTreeMap<usize, usize>,
    pub(crate) connect_response_lens: BTreeMap<usize, usize>,
    pub(crate) expired_handshake: usize,
    pub(crate) request_ops: BTreeMap<i32, usize>,
    pub(crate) ok_reply_ops: BTreeMap<i32, usize>,
    pub(crate) err_replies: usize,
    pub(crate) failing_multi: usize,
    pub(crate) events: usize,
    pub(crate) ping_replies: usize,
    pub(crate) top_level_check: usize,
}

pub(crate) fn check_frame(
    fixture: &Fixture,
    f: &FrameLine,
    cov: &mut Coverage,
) -> Result<Outcome, String> {
    let frame = &f.frame;
    if frame.len() < 4 {
        return Err(format!(
            "frame of {} bytes has no length prefix",
            frame.len()
        ));
    }
    let prefix = i32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]);
    let payload = &frame[4..];
    if usize::try_from(prefix) != Ok(payload.len()) {
        return Err(format!(
            "length prefix {prefix} but the payload is {} bytes",
            payload.len()
        ));
    }
    let none = Normalizable::default();

    match (f.dir, f.kind) {
        (Dir::C2s, Kind::Connect) => {
            let req: ConnectRequest = decode_from(payload).map_err(|e| e.to_string())?;
            *cov.connect_request_lens.entry(payload.len()).or_default() += 1;
            let out = encode_frame(|b| shepherd_protocol::Codec::encode(&req, b));
            compare(frame, &out, &none, |_| false)
        }
        (Dir::S2c, Kind::Connect) => {
            let resp: ConnectResponse = decode_from(payload).map_err(|e| e.to_string())?;
            if !matches!(payload.len(), 36 | 37) {
                return Err(format!(
                    "ConnectResponse payload is {} bytes, not 36 or 37",
                    payload.len()
                ));
            }
            *cov.connect_response_lens.entry(payload.len()).or_default() += 1;
            if resp.timeout == 0 {
                if !(resp.is_expired()
                    && resp.session_id == 0
                    && resp.passwd.as_deref() == Some(&[0u8; 16][..]))
                {
                    return Err(format!("odd expired handshake {resp:?}"));
                }
                cov.expired_handshake += 1;
            }
            let out = encode_frame(|b| shepherd_protocol::Codec::encode(&resp, b));
            compare(frame, &out, &none, |_| false)
        }
        (Dir::C2s, Kind::Request) => {
            let (header, body) = decode_request(payload).map_err(|e| e.to_string())?;
            if Some(header.op_type) != f.op {
                return Err(format!(
                    "header op {} but the line says {:?}",
                    header.op_type, f.op
                ));
            }
            let request = match body {
                Ok(request) => request,
                Err(DecodeError::UnknownValue { kind, value })
                    if matches!(kind, "OpCode" | "request opcode") =>
                {
                    if !comments_call_invalid(&fixture.comments, header.op_type) {
                        return Err(format!(
                            "opcode {value} rejected ({kind}) but the fixture's comments do not \
                             call it unknown or invalid"
                        ));
                    }
                    let out = encode_frame(|b| shepherd_protocol::Codec::encode(&header, b));
                    return match compare(frame, &out, &none, |_| false)? {
                        Outcome::Exact => Ok(Outcome::RejectedOpcode(header.op_type)),
                        other => Err(format!("unexpected {other:?}")),
                    };
                }
                Err(e) => return Err(format!("body of op {}: {e}", header.op_type)),
            };
            if i32::from(request.op_code()) != header.op_type {
                return Err(format!("decoded as {:?}", request.op_code()));
            }
            *cov.request_ops.entry(header.op_type).or_default() += 1;
            if matches!(request, Request::Check(_)) {
                cov.top_level_check += 1;
            }
            let mut normalizable = Normalizable::default();
            normalizable.request(&request);
            let out = encode_frame(|b| encode_request(header.xid, &request, b));
            compare(frame, &out, &normalizable, |again| {
                decode_request(again).is_ok_and(|(h, r)| h == header && r == Ok(request.clone()))
            })
        }
        (Dir::S2c, Kind::Reply) => {
            let op = f.op.ok_or("a reply line needs an op")?;
            let reply = decode_reply(payload, |_| OpCode::try_from(op).ok())
                .map_err(|e| format!("reply to op {op}: {e}"))?;
            let mut normalizable = Normalizable::default();
            let out = match &reply {
                Reply::Ok(header, body) => {
                    if i32::from(body.op_code()) != op {
                        return Err(format!("decoded as a reply to {:?}", body.op_code()));
                    }
                    *cov.ok_reply_ops.entry(op).or_default() += 1;
                    if header.xid == xid::PING && op == i32::from(OpCode::Ping) {
                        cov.ping_replies += 1;
                    }
                    if let Response::Multi(m) = body
                        && m.results
                            .iter()
                            .any(|r| matches!(r, MultiResult::Error(code) if *code != 0))
                    {
                        cov.failing_multi += 1;
                    }
                    normalizable.response(body);
                    encode_frame(|b| encode_reply(header, Some(body), b))
                }
                Reply::Err(header) => {
                    cov.err_replies += 1;
                    encode_frame(|b| encode_reply(header, None, b))
                }
                Reply::Event(..) => return Err("a reply line holds a notification".into()),
            };
            compare(frame, &out, &normalizable, |again| {
                decode_reply(again, |_| OpCode::try_from(op).ok()).as_ref() == Ok(&reply)
            })
        }
        (Dir::S2c, Kind::Event) => {
            let reply = decode_reply(payload, |_| None).map_err(|e| e.to_string())?;
            let Reply::Event(header, event) = reply else {
                return Err(format!("an event line decodes as {reply:?}"));
            };
            check_event_header(&header, &event)?;
            cov.events += 1;
            let out = encode_frame(|b| encode_event(header.zxid, &event, b));
            compare(frame, &out, &none, |_| false)
        }
        (dir, kind) => Err(format!("{kind:?} frame in direction {dir:?}")),
    }
}

pub(crate) fn check_event_header(header: &ReplyHeader, event: &WatcherEvent) -> Result<(), String> {
    if header.err != 0 {
        return Err(format!("notification with err {}: {event:?}", header.err));
    }
    Ok(())
}
