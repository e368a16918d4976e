//! The reference's expectations, written independently of the core: which requests take a
//! zxid, what a request on a live session must produce (reply, close, zxid, error), what a
//! notification looks like, and the small facts of ZooKeeper the checks need.
//!
//! Invariants: nothing here reads the core; a new request type fails to compile until
//! [`takes_zxid`] classifies it.

use shepherd_protocol::{
    AuthPacket, OpCode, Reply, ReplyHeader, Request, RequestHeader, decode_from, decode_reply,
    encode_event,
};

/// Whether a decoded request is a txn: it takes a zxid, success or failure (docs/protocol.md §3.3). Exhaustive on
/// purpose, so a new request type must be classified here.
pub(super) fn takes_zxid(request: &Request) -> bool {
    use Request as R;
    match request {
        R::Create(_)
        | R::Create2(_)
        | R::CreateContainer(_)
        | R::CreateTTL(_)
        | R::Delete(_)
        | R::SetData(_)
        | R::SetACL(_)
        | R::Multi(_)
        | R::Reconfig(_)
        | R::CloseSession => true,
        R::Exists(_)
        | R::GetData(_)
        | R::GetACL(_)
        | R::GetChildren(_)
        | R::Sync(_)
        | R::Ping
        | R::GetChildren2(_)
        | R::CheckWatches(_)
        | R::RemoveWatches(_)
        | R::MultiRead(_)
        | R::SetWatches(_)
        | R::GetEphemerals(_)
        | R::GetAllChildrenNumber(_)
        | R::SetWatches2(_)
        | R::AddWatch(_)
        | R::WhoAmI => false,
        // Never applied: refused (docs/protocol.md §4.1, deleteContainer and a top-level check), dropped
        // (createSession), or answered outside the pipeline (auth, sasl).
        R::Check(_) | R::DeleteContainer(_) | R::CreateSession | R::Auth(_) | R::Sasl(_) => false,
    }
}

/// A write opcode whose body does not parse still takes a zxid (docs/protocol.md §3.3, §10.1).
pub(super) fn is_write_op(op: OpCode) -> bool {
    matches!(
        op,
        OpCode::Create
            | OpCode::Create2
            | OpCode::CreateContainer
            | OpCode::CreateTTL
            | OpCode::Delete
            | OpCode::SetData
            | OpCode::SetACL
            | OpCode::Multi
            | OpCode::Reconfig
            | OpCode::CloseSession
    )
}

/// What a request on a live session must produce.
#[derive(Debug)]
pub(super) struct Expect {
    /// The opcode the reply's body is decoded with.
    pub(super) op: Option<OpCode>,
    pub(super) reply: bool,
    /// The connection is closed after the reply (or without one).
    pub(super) close: bool,
    pub(super) zxid_taken: bool,
    /// The zxid the reply carries; `None` means the last zxid.
    pub(super) reply_zxid: Option<i64>,
    /// The error code, when the reference fixes it.
    pub(super) err: Option<i32>,
}

impl Expect {
    pub(super) fn of(header: &RequestHeader, mut body: &[u8]) -> Expect {
        let mut e = Expect {
            op: OpCode::try_from(header.op_type).ok(),
            reply: true,
            close: false,
            zxid_taken: false,
            reply_zxid: None,
            err: None,
        };
        match e.op {
            // Unknown and invalid opcodes (docs/protocol.md §4.1); a top-level check is refused the 3.9.3 way
            // (docs/protocol.md §0) and a client's deleteContainer is not accepted (§4.1).
            None
            | Some(
                OpCode::Notification | OpCode::Error | OpCode::Check | OpCode::DeleteContainer,
            ) => {
                e.close = true;
                e.reply_zxid = Some(-1);
                e.err = Some(-6);
            }
            // No reply at all (docs/protocol.md §4).
            Some(OpCode::CreateSession) => e.reply = false,
            Some(OpCode::Auth) => match decode_from::<AuthPacket>(body) {
                Err(_) => {
                    e.reply = false;
                    e.close = true;
                }
                Ok(p) => {
                    e.reply_zxid = Some(0);
                    let known = matches!(p.scheme.as_str(), "digest" | "ip");
                    e.err = Some(if known { 0 } else { -115 });
                    e.close = !known;
                }
            },
            Some(OpCode::Sasl) => {
                e.reply_zxid = Some(0);
                e.err = Some(0);
            }
            Some(op) => match Request::decode(op, &mut body) {
                Err(_) => {
                    e.err = Some(-5);
                    e.zxid_taken = is_write_op(op);
                }
                Ok(request) => {
                    e.zxid_taken = takes_zxid(&request);
                    e.close = request == Request::CloseSession;
                    if matches!(request, Request::Ping | Request::CloseSession) {
                        e.err = Some(0);
                    }
                }
            },
        }
        e
    }
}

pub(super) fn is_event(payload: &[u8]) -> bool {
    decode_from::<ReplyHeader>(payload).is_ok_and(|h| h.xid == -1)
}

/// A notification: 3.8's zxid -1, err 0, and exactly the bytes of its re-encoding.
pub(super) fn check_event(payload: &[u8]) {
    match decode_reply(payload, |_| None) {
        Ok(Reply::Event(h, e)) => {
            assert_eq!((h.zxid, h.err), (-1, 0), "notification header {h:?}");
            let mut again = Vec::new();
            encode_event(-1, &e, &mut again);
            assert_eq!(again, payload, "notification {e:?} has trailing bytes");
        }
        other => panic!("not a notification: {other:?} from {payload:?}"),
    }
}

/// Java's String.length().
pub(super) fn java_len(s: &str) -> u64 {
    s.encode_utf16().count() as u64
}

pub(super) fn parent_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}
