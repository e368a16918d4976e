//! Which request the proxy cuts a connection after: a matcher on the requests a client sends,
//! read with `shepherd-protocol`'s records.
//!
//! Invariant: a request matches on its opcode and, if asked, on a path it names (any sub-op's
//! path for a multi or multiRead, as the server's fault rules match); an armed matcher fires
//! once, on the `n`th match, and is then spent.

use shepherd_protocol::{Codec, OpCode, Request, RequestHeader, decode_request};

/// What to cut a connection after: the `n`th request (first by default) with one of the given
/// opcodes whose path contains a marker. The request is forwarded and applied; its reply is
/// withheld and the connection then closed, so the client never hears of it.
#[derive(Debug, Clone)]
pub struct CutAfter {
    ops: Vec<OpCode>,
    marker: Option<String>,
    /// Matches still to let through before the one that is cut.
    skip: usize,
}

impl CutAfter {
    /// Cuts after the first request with one of `ops`.
    pub fn request(ops: impl IntoIterator<Item = OpCode>) -> CutAfter {
        CutAfter {
            ops: ops.into_iter().collect(),
            marker: None,
            skip: 0,
        }
    }

    /// Only requests naming a path that contains `marker`.
    pub fn path_contains(mut self, marker: impl Into<String>) -> CutAfter {
        self.marker = Some(marker.into());
        self
    }

    /// The `n`th matching request (counting from 1), not the first.
    pub fn nth(mut self, n: usize) -> CutAfter {
        assert!(n >= 1, "requests are counted from 1");
        self.skip = n - 1;
        self
    }

    /// Whether `payload` (a request frame without its length prefix) matches; counts the match.
    /// Returns the xid whose reply must be withheld when this is the match to cut after.
    pub(crate) fn hit(&mut self, payload: &[u8]) -> Option<i32> {
        let mut body = payload;
        let header = RequestHeader::decode(&mut body).ok()?;
        let op = OpCode::try_from(header.op_type).ok()?;
        if !self.ops.contains(&op) {
            return None;
        }
        let named = |marker: &String| paths(op, payload, body).iter().any(|p| p.contains(marker));
        if !self.marker.as_ref().is_none_or(named) {
            return None;
        }
        if self.skip > 0 {
            self.skip -= 1;
            return None;
        }
        Some(header.xid)
    }
}

/// The paths a request names: every sub-op's for a multi or multiRead, else the path its body
/// starts with (every request that names one starts with it).
fn paths(op: OpCode, payload: &[u8], mut body: &[u8]) -> Vec<String> {
    match op {
        OpCode::Multi | OpCode::MultiRead => match decode_request(payload) {
            Ok((_, Ok(Request::Multi(m) | Request::MultiRead(m)))) => {
                m.ops.iter().map(|op| op.path().to_owned()).collect()
            }
            _ => Vec::new(),
        },
        _ => String::decode(&mut body).into_iter().collect(),
    }
}
