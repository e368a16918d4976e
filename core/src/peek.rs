//! A look at a request payload without applying it: its xid, opcode and the paths it names.
//! Fault rules in the shell match on these.
//!
//! Invariants: peeking mutates nothing and never fails on a decodable header; a body that does
//! not decode simply names no paths, as the core would answer it with MarshallingError anyway.

use shepherd_protocol::{OpCode, Request, decode_request};

/// What a request payload is, without applying it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestPeek {
    /// The request's xid.
    pub xid: i32,
    /// The opcode, if known.
    pub op: Option<OpCode>,
    /// The paths it names: one for most ops, every sub-op's for multi and multiRead, none for
    /// ping, auth, setWatches and the like, or when the body does not decode.
    pub paths: Vec<String>,
}

/// Decodes a request payload's header and the paths it names. `None` when not even the header
/// decodes (the core would close the connection).
pub fn peek(payload: &[u8]) -> Option<RequestPeek> {
    let (header, body) = decode_request(payload).ok()?;
    let paths = match body {
        Ok(request) => request_paths(request),
        Err(_) => Vec::new(),
    };
    Some(RequestPeek {
        xid: header.xid,
        op: OpCode::try_from(header.op_type).ok(),
        paths,
    })
}

fn request_paths(request: Request) -> Vec<String> {
    let one = match request {
        Request::Create(r) | Request::Create2(r) | Request::CreateContainer(r) => r.path,
        Request::CreateTTL(r) => r.path,
        Request::Delete(r) => r.path,
        Request::Exists(r)
        | Request::GetData(r)
        | Request::GetChildren(r)
        | Request::GetChildren2(r) => r.path,
        Request::SetData(r) => r.path,
        Request::GetACL(r)
        | Request::Sync(r)
        | Request::GetAllChildrenNumber(r)
        | Request::GetEphemerals(r) => r.path,
        Request::SetACL(r) => r.path,
        Request::Check(r) => r.path,
        Request::CheckWatches(r) | Request::RemoveWatches(r) => r.path,
        Request::AddWatch(r) => r.path,
        Request::Multi(m) | Request::MultiRead(m) => {
            return m.ops.iter().map(|op| op.path().to_string()).collect();
        }
        _ => return Vec::new(),
    };
    vec![one]
}
