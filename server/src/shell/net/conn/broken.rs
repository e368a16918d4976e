//! The test-only broken modes ([`Fault::AckBeforeApply`], [`Fault::StaleRead`],
//! [`Fault::HideLowestChild`]): a server that lies on purpose, so that the history checkers of
//! the test kit can be shown to catch each lie.
//!
//! Invariant: a broken mode only ever changes what one reply says (or, for an acknowledged
//! setData, replaces the request by a read of the same path); the tree and the core's order are
//! never corrupted, so the rest of a test's run stays meaningful. Nothing here is reachable
//! except through a fault rule added in-process.

use bytes::Bytes;
use shepherd_protocol::{
    Codec, GetChildrenResponse, OpCode, PathWatchRequest, Request, decode_request, encode_request,
};

use crate::core::SessionId;
use crate::shell::controls::faults::Fault;

/// Reply header bytes (xid, zxid, err) before a reply's body.
const REPLY_HEADER: usize = 16;

/// For a setData: an exists of the same path with the same xid, whose reply (a stat) has the
/// very shape of setData's, so the client reads success while nothing is written. Any other
/// request is returned unchanged.
pub(crate) fn ack_without_apply(payload: &[u8]) -> Bytes {
    let Ok((header, Ok(Request::SetData(set)))) = decode_request(payload) else {
        return Bytes::copy_from_slice(payload);
    };
    let exists = Request::Exists(PathWatchRequest {
        path: set.path,
        watch: false,
    });
    let mut out = Vec::new();
    encode_request(header.xid, &exists, &mut out);
    Bytes::from(out)
}

/// A successful reply to `payload` as `fault` rewrites it: getData's body replaced by the first
/// one remembered for the path; getChildren's list without its lowest sequential child when
/// that child is an ephemeral of a session other than `requester` (`owner` gives a node's
/// ephemeral owner). Any other reply (an error, another opcode) is returned unchanged.
pub(crate) fn rewrite_reply(
    fault: &Fault,
    payload: &[u8],
    reply: &Bytes,
    requester: Option<SessionId>,
    owner: &dyn Fn(&str) -> Option<SessionId>,
) -> Bytes {
    let Some(body) = reply.get(REPLY_HEADER..) else {
        return reply.clone();
    };
    if reply.get(12..16) != Some(&[0, 0, 0, 0][..]) {
        return reply.clone();
    }
    let Ok((header, Ok(request))) = decode_request(payload) else {
        return reply.clone();
    };
    let new_body = match (fault, OpCode::try_from(header.op_type), request) {
        (Fault::StaleRead(memory), Ok(OpCode::GetData), Request::GetData(r)) => {
            memory.answer(&r.path, body)
        }
        (
            Fault::HideLowestChild,
            Ok(OpCode::GetChildren | OpCode::GetChildren2),
            Request::GetChildren(r) | Request::GetChildren2(r),
        ) => match hide_lowest(body, &r.path, requester, owner) {
            Some(body) => body,
            None => return reply.clone(),
        },
        _ => return reply.clone(),
    };
    let mut out = reply[..REPLY_HEADER].to_vec();
    out.extend_from_slice(&new_body);
    Bytes::from(out)
}

/// A getChildren body of `dir` (the list, then getChildren2's stat, kept as is) without the
/// child whose ten-digit sequence suffix is lowest, when that child is another session's
/// ephemeral: a contender then never sees the holder, while the holder still sees itself.
fn hide_lowest(
    body: &[u8],
    dir: &str,
    requester: Option<SessionId>,
    owner: &dyn Fn(&str) -> Option<SessionId>,
) -> Option<Vec<u8>> {
    let mut rest = body;
    let mut listed = GetChildrenResponse::decode(&mut rest).ok()?;
    let sequence = |name: &str| -> Option<u64> {
        let digits = name.get(name.len().checked_sub(10)?..)?;
        digits.parse().ok()
    };
    let numbered: Vec<(usize, u64)> = listed
        .children
        .iter()
        .enumerate()
        .filter_map(|(i, name)| sequence(name).map(|n| (i, n)))
        .collect();
    let (lowest, _) = *numbered.iter().min_by_key(|(_, n)| *n)?;
    let path = format!("{}/{}", dir.trim_end_matches('/'), listed.children[lowest]);
    match owner(&path) {
        Some(0) | None => return None,
        Some(session) if Some(session) == requester => return None,
        Some(_) => {}
    }
    listed.children.remove(lowest);
    let mut out = listed.to_bytes();
    out.extend_from_slice(rest);
    Some(out)
}
