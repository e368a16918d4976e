//! Request routing (docs/protocol.md §3-§4): from a frame payload to the ordered actions that answer it, with
//! the zxid of every reply (docs/protocol.md §3.3), the session touch (§13.1), and the requests that are not
//! plain tree operations: auth (docs/protocol.md §12.5), sasl, the watch requests (§9.7, §9.8), closeSession
//! (docs/protocol.md §13.4) and the refusals (unknown ops, top-level check, deleteContainer).
//!
//! Invariants: every write, successful or not, takes exactly one zxid, and its reply carries
//! it; a request's notifications precede its reply in the returned actions (docs/protocol.md §9.6); a `Close`
//! is always the last action for its connection, and the connection is forgotten with it.

use shepherd_protocol::txn::{ErrorTxn, TxnBody};
use shepherd_protocol::{
    AuthPacket, Codec, Create2Response, CreateRequest, CreateResponse, ErrorCode, ErrorResponse,
    EventType, GetAllChildrenNumberResponse, GetEphemeralsResponse, Id, MultiOp, MultiResponse,
    OpCode, PathRequest, RemoveWatchesRequest, ReplyHeader, Request, RequestHeader, Response,
    SetWatches2, StatResponse, WhoAmIResponse, decode_from, encode_reply, xid,
};

use super::log::ERROR_TYPE;
use super::ops::OpResult;
use super::txn::Txn;
use super::watch::Mode;
use super::{Action, ConnId, Core, Now, SessionId, acl, path};

/// A reply payload: the header, then the body only on success (docs/protocol.md §4.2).
pub(super) fn reply(xid: i32, zxid: i64, err: ErrorCode, body: Option<&Response>) -> Vec<u8> {
    let header = ReplyHeader {
        xid,
        zxid,
        err: err.into(),
    };
    // Room for the header and a Stat (16 + 68 bytes) with a short path or data: most replies
    // then take one allocation instead of growing four times.
    let mut buf = Vec::with_capacity(128);
    encode_reply(&header, body.filter(|_| err == ErrorCode::Ok), &mut buf);
    buf
}

impl Core {
    /// The start of every request: its header, the body after it, and the connection's live
    /// session. `Err` holds what to do instead: an undecodable header closes the connection; a
    /// request whose session is gone is dropped silently, as the touch fails first
    /// (docs/protocol.md §13.1).
    pub(super) fn admit<'p>(
        &mut self,
        conn: ConnId,
        payload: &'p [u8],
    ) -> Result<(RequestHeader, &'p [u8], SessionId), Vec<Action>> {
        let mut body = payload;
        let Ok(header) = RequestHeader::decode(&mut body) else {
            self.drop_conn(conn);
            return Err(vec![Action::Close(conn)]);
        };
        match self
            .connection_session(conn)
            .filter(|s| self.sessions.get(*s).is_some())
        {
            Some(session) => Ok((header, body, session)),
            None => Err(Vec::new()),
        }
    }

    /// Answers a request payload; see [`Core::request`] for the actions it returns.
    pub(super) fn dispatch(&mut self, conn: ConnId, payload: &[u8], now: Now) -> Vec<Action> {
        let (header, mut body, session) = match self.admit(conn, payload) {
            Ok(admitted) => admitted,
            Err(actions) => return actions,
        };
        let xid = header.xid;
        let op = OpCode::try_from(header.op_type).ok();
        // auth and sasl are answered outside the request pipeline, with zxid 0 and no touch.
        match op {
            Some(OpCode::Auth) => return self.auth(conn, xid, body),
            Some(OpCode::Sasl) => return self.sasl(conn, session, xid, body, now),
            _ => {}
        }
        // enforce.auth: before the touch, as ZooKeeper checks before submitting (sasl.rs).
        if let Some(refusal) = self.enforce_auth(conn, xid) {
            return refusal;
        }
        self.sessions.touch(session, now.mono_ms);
        let op = match op {
            Some(OpCode::CreateSession) => return Vec::new(),
            // Unknown and invalid ops, a top-level check (the 3.9.3 answer, docs/protocol.md §0) and a client's
            // deleteContainer: Unimplemented with zxid -1, then close (docs/protocol.md §4.1).
            None
            | Some(
                OpCode::Notification | OpCode::Error | OpCode::Check | OpCode::DeleteContainer,
            ) => {
                self.drop_conn(conn);
                let refusal = reply(xid, -1, ErrorCode::Unimplemented, None);
                return vec![Action::Send(conn, refusal), Action::Close(conn)];
            }
            Some(op) => op,
        };
        match Request::decode(op, &mut body) {
            Ok(request) => self.execute(conn, session, xid, request, now),
            Err(_) => {
                // An undecodable body is MarshallingError; a write still takes its zxid (docs/protocol.md §3.3)
                // and is logged as an error txn without a digest (ZooKeeper fails it while
                // deserializing, before any digest is prepared).
                if op.is_write() {
                    self.zxid += 1;
                    let txn = Txn::new(self.zxid, now.wall_ms, session, xid, false);
                    self.log_error(&txn, ErrorCode::MarshallingError.into());
                }
                vec![Action::Send(
                    conn,
                    reply(xid, self.zxid, ErrorCode::MarshallingError, None),
                )]
            }
        }
    }

    /// Runs one write as a txn with the next zxid, and logs it; its events are delivered only
    /// on success.
    fn write<T>(
        &mut self,
        (session, xid): (SessionId, i32),
        now: Now,
        out: &mut Vec<Action>,
        op: impl FnOnce(&mut Core, &mut Txn) -> OpResult<T>,
    ) -> OpResult<T> {
        self.zxid += 1;
        let mut txn = Txn::new(self.zxid, now.wall_ms, session, xid, self.config.log_txns);
        let result = op(self, &mut txn);
        let logged = result.as_ref().map(|_| ()).map_err(|code| i32::from(*code));
        self.log_single(&mut txn, logged);
        if result.is_ok() {
            self.deliver(txn.fired, out);
        } else {
            self.tree.rollback(txn.undo);
        }
        result
    }

    fn execute(
        &mut self,
        conn: ConnId,
        session: SessionId,
        xid: i32,
        request: Request,
        now: Now,
    ) -> Vec<Action> {
        // Shared, not copied: a reference-count bump per request, whatever the identities.
        let shared_ids = self
            .conns
            .get(&conn)
            .map(|c| c.identities.share())
            .unwrap_or_default();
        let ids: &[Id] = &shared_ids;
        let watch = |w: bool| w.then_some(conn);
        let mut out = Vec::new();
        let create = |op: OpCode, r: CreateRequest, ttl: i64| {
            move |core: &mut Core, txn: &mut Txn| core.create(op, &r, ttl, ids, txn)
        };
        let children2 = matches!(request, Request::GetChildren2(_));
        let result: OpResult<Option<Response>> = match request {
            Request::Ping => {
                out.push(Action::Send(
                    conn,
                    reply(xid::PING, self.zxid, ErrorCode::Ok, None),
                ));
                return out;
            }
            Request::CloseSession => {
                self.end_session(session, now, xid, false, &mut out);
                out.push(Action::Send(
                    conn,
                    reply(xid, self.zxid, ErrorCode::Ok, None),
                ));
                out.push(Action::Close(conn));
                self.drop_conn(conn);
                return out;
            }
            Request::Create(r) => self
                .write((session, xid), now, &mut out, create(OpCode::Create, r, -1))
                .map(|(path, _)| Some(Response::Create(CreateResponse { path }))),
            Request::Create2(r) => self
                .write(
                    (session, xid),
                    now,
                    &mut out,
                    create(OpCode::Create2, r, -1),
                )
                .map(|(path, stat)| Some(Response::Create2(Create2Response { path, stat }))),
            Request::CreateContainer(r) => {
                self.write(
                    (session, xid),
                    now,
                    &mut out,
                    create(OpCode::CreateContainer, r, -1),
                )
                .map(|(path, stat)| Some(Response::CreateContainer(Create2Response { path, stat })))
            }
            Request::CreateTTL(r) => {
                let plain = CreateRequest {
                    path: r.path,
                    data: r.data,
                    acl: r.acl,
                    flags: r.flags,
                };
                self.write(
                    (session, xid),
                    now,
                    &mut out,
                    create(OpCode::CreateTTL, plain, r.ttl),
                )
                .map(|(path, stat)| Some(Response::CreateTTL(Create2Response { path, stat })))
            }
            Request::Delete(r) => self
                .write((session, xid), now, &mut out, |core, txn| {
                    core.delete(&r.path, r.version, ids, txn)
                })
                .map(|()| None),
            Request::SetData(r) => self
                .write((session, xid), now, &mut out, |core, txn| {
                    core.set_data(&r, ids, txn)
                })
                .map(|stat| Some(Response::SetData(StatResponse { stat }))),
            Request::SetACL(r) => self
                .write((session, xid), now, &mut out, |core, txn| {
                    core.set_acl(&r, ids, txn)
                })
                .map(|stat| Some(Response::SetACL(StatResponse { stat }))),
            Request::Reconfig(_) => {
                // Standalone: a txn that always fails (docs/protocol.md §4).
                self.zxid += 1;
                let txn = Txn::new(self.zxid, now.wall_ms, session, xid, false);
                self.log_error(&txn, ErrorCode::ReconfigDisabled.into());
                Err(ErrorCode::ReconfigDisabled)
            }
            Request::Multi(m) => {
                // Mixing reads into a multi fails the whole request, zxid taken (docs/protocol.md §10.1).
                self.zxid += 1;
                if m.ops.iter().any(MultiOp::is_read) {
                    // Logged as an error txn. ZooKeeper refuses a mix while decoding (no
                    // digest), but prepares a multi of reads alone up to its first op, which
                    // sets the digest before the failure.
                    let txn = Txn::new(self.zxid, now.wall_ms, session, xid, false);
                    let reads_only = m.ops.iter().all(MultiOp::is_read);
                    let err = ErrorCode::MarshallingError.into();
                    let body = || TxnBody::Error(ErrorTxn { err });
                    self.log_txn(&txn, ERROR_TYPE, body, reads_only.then_some(0));
                    Err(ErrorCode::MarshallingError)
                } else {
                    let logging = self.config.log_txns;
                    let mut txn = Txn::new(self.zxid, now.wall_ms, session, xid, logging);
                    let response = self.multi(&m.ops, ids, &mut txn);
                    self.deliver(txn.fired, &mut out);
                    response.map(|r| Some(Response::Multi(r)))
                }
            }
            Request::MultiRead(m) => {
                if m.ops.iter().all(MultiOp::is_read) {
                    Ok(Some(Response::MultiRead(self.multi_read(&m.ops, ids))))
                } else if m.ops.iter().any(MultiOp::is_read) {
                    // 3.8 refuses the mix while decoding, before a response exists: no body.
                    Err(ErrorCode::MarshallingError)
                } else {
                    // Writes only decode; 3.8 then makes an empty response, throws at the first
                    // op, and sends the MarshallingError header with that empty response after
                    // it (docs/protocol.md §10.4): the 9 bytes of a lone closing MultiHeader.
                    let empty = Response::MultiRead(MultiResponse { results: vec![] });
                    let header = ReplyHeader {
                        xid,
                        zxid: self.zxid,
                        err: ErrorCode::MarshallingError.into(),
                    };
                    let mut payload = Vec::new();
                    encode_reply(&header, Some(&empty), &mut payload);
                    out.push(Action::Send(conn, payload));
                    return out;
                }
            }
            Request::Exists(r) => self
                .exists(&r.path, watch(r.watch))
                .map(|stat| Some(Response::Exists(StatResponse { stat }))),
            Request::GetData(r) => self
                .get_data(&r.path, watch(r.watch), ids)
                .map(|d| Some(Response::GetData(d))),
            // Encoded straight from the tree (see `get_children_reply`); an error takes the
            // common path below.
            Request::GetChildren(r) | Request::GetChildren2(r) => {
                let with_stat = children2;
                match self.get_children_reply(xid, &r.path, watch(r.watch), ids, with_stat) {
                    Ok(payload) => {
                        out.push(Action::Send(conn, payload));
                        return out;
                    }
                    Err(code) => Err(code),
                }
            }
            Request::GetACL(r) => self
                .get_acl(&r.path, ids)
                .map(|a| Some(Response::GetACL(a))),
            Request::GetAllChildrenNumber(r) => {
                self.all_children_number(&r.path, ids).map(|total_number| {
                    Some(Response::GetAllChildrenNumber(
                        GetAllChildrenNumberResponse { total_number },
                    ))
                })
            }
            // Standalone, every earlier request is already applied: echo the path (docs/protocol.md §6.8).
            Request::Sync(r) => Ok(Some(Response::Sync(PathRequest { path: r.path }))),
            Request::GetEphemerals(r) => {
                let ephemerals = self.ephemerals(session, &r.path);
                Ok(Some(Response::GetEphemerals(GetEphemeralsResponse {
                    ephemerals,
                })))
            }
            Request::WhoAmI => {
                let client_info = acl::who_am_i(ids);
                Ok(Some(Response::WhoAmI(WhoAmIResponse { client_info })))
            }
            Request::AddWatch(r) => self.add_watch(conn, &r.path, r.mode),
            Request::CheckWatches(r) => self.remove_watches(conn, &r, false),
            Request::RemoveWatches(r) => self.remove_watches(conn, &r, true),
            Request::SetWatches(w) => {
                let w = SetWatches2 {
                    relative_zxid: w.relative_zxid,
                    data_watches: w.data_watches,
                    exist_watches: w.exist_watches,
                    child_watches: w.child_watches,
                    persistent_watches: Vec::new(),
                    persistent_recursive_watches: Vec::new(),
                };
                self.set_watches(conn, &w, &mut out);
                Ok(None)
            }
            Request::SetWatches2(w) => {
                self.set_watches(conn, &w, &mut out);
                Ok(None)
            }
            // Routed before decoding; kept total for the compiler.
            Request::Check(_)
            | Request::DeleteContainer(_)
            | Request::Auth(_)
            | Request::Sasl(_)
            | Request::CreateSession => Err(ErrorCode::Unimplemented),
        };
        let (err, body) = match result {
            Ok(body) => (ErrorCode::Ok, body),
            Err(code) => (code, None),
        };
        out.push(Action::Send(
            conn,
            reply(xid, self.zxid, err, body.as_ref()),
        ));
        out
    }

    /// auth (docs/protocol.md §12.5): digest always succeeds (and may add `super`), ip is a no-op, any other
    /// scheme is AuthFailed and the connection closes. Replies carry zxid 0.
    ///
    /// A digest that would take the connection past [`acl::MAX_IDENTITIES`] distinct
    /// identities is refused the way ZooKeeper refuses any failed auth: AuthFailed, then close.
    /// Repeating an identity the connection already has is a success that adds nothing.
    fn auth(&mut self, conn: ConnId, xid: i32, body: &[u8]) -> Vec<Action> {
        let Ok(packet) = decode_from::<AuthPacket>(body) else {
            // The Java server fails to read the packet and drops the connection.
            self.drop_conn(conn);
            return vec![Action::Close(conn)];
        };
        let added = match packet.scheme.as_str() {
            "digest" => {
                let id = acl::digest_identity(packet.auth.as_deref().unwrap_or_default());
                let is_super = self.config.super_digest.as_deref() == Some(id.as_str());
                let mut new = vec![Id::new("digest", id)];
                if is_super {
                    new.push(Id::new("super", ""));
                }
                self.conns
                    .get_mut(&conn)
                    .is_none_or(|c| c.identities.add(&new))
            }
            // The connection's ip identity is already there.
            "ip" => true,
            _ => false,
        };
        if !added {
            self.drop_conn(conn);
            let failed = reply(xid, 0, ErrorCode::AuthFailed, None);
            return vec![Action::Send(conn, failed), Action::Close(conn)];
        }
        vec![Action::Send(conn, reply(xid, 0, ErrorCode::Ok, None))]
    }

    /// addWatch (docs/protocol.md §6.11, §9.1): 3.8 registers both persistent modes in both tables; a bad mode
    /// is MarshallingError. The reply body is a 4-byte 0.
    fn add_watch(&mut self, conn: ConnId, path: &str, mode: i32) -> OpResult<Option<Response>> {
        let mode = match mode {
            0 => Mode::Persistent,
            1 => Mode::Recursive,
            _ => return Err(ErrorCode::MarshallingError),
        };
        self.data_watches.add(path, conn, mode);
        self.child_watches.add(path, conn, mode);
        Ok(Some(Response::AddWatch(ErrorResponse { err: 0 })))
    }

    /// checkWatches / removeWatches (docs/protocol.md §9.8): 3.8 knows types 1 (child table), 2 (data table) and
    /// 3 (both); 4 and 5 are MarshallingError. Nothing matched is NoWatcher; no event is sent.
    /// removeWatches removes the asking connection's watches; checkWatches asks 3.8's question,
    /// whether anyone watches the path (see `WatchTable::anyone_watches`), and for type 3
    /// asks both tables even when the first says yes, as 3.8 does, so either may fail it.
    fn remove_watches(
        &mut self,
        conn: ConnId,
        r: &RemoveWatchesRequest,
        remove: bool,
    ) -> OpResult<Option<Response>> {
        let (data, child) = match r.watcher_type {
            1 => (false, true),
            2 => (true, false),
            3 => (true, true),
            _ => return Err(ErrorCode::MarshallingError),
        };
        let found = if remove {
            let in_child = child && self.child_watches.remove(&r.path, conn);
            let in_data = data && self.data_watches.remove(&r.path, conn);
            in_child || in_data
        } else {
            let in_child = child && self.child_watches.anyone_watches(&r.path)?;
            let in_data = data && self.data_watches.anyone_watches(&r.path)?;
            in_child || in_data
        };
        if found {
            Ok(None)
        } else {
            Err(ErrorCode::NoWatcher)
        }
    }

    /// setWatches / setWatches2 (docs/protocol.md §9.7): catch-up events for what changed after `relativeZxid`
    /// (data list, then exist, then child), sent before the reply and not ACL-filtered; the rest
    /// are registered. Persistent lists register without catch-up.
    fn set_watches(&mut self, conn: ConnId, w: &SetWatches2, out: &mut Vec<Action>) {
        use EventType::{NodeChildrenChanged, NodeCreated, NodeDataChanged, NodeDeleted};
        let rel = w.relative_zxid;
        for p in &w.data_watches {
            match self.tree.get(path::lookup_key(p)).map(|n| n.mzxid) {
                None => self.notify([conn], NodeDeleted, p, None, out),
                Some(mzxid) if mzxid > rel => self.notify([conn], NodeDataChanged, p, None, out),
                Some(_) => self.data_watches.add(p, conn, Mode::Standard),
            }
        }
        for p in &w.exist_watches {
            if self.tree.get(path::lookup_key(p)).is_some() {
                self.notify([conn], NodeCreated, p, None, out);
            } else {
                self.data_watches.add(p, conn, Mode::Standard);
            }
        }
        for p in &w.child_watches {
            match self.tree.get(path::lookup_key(p)).map(|n| n.pzxid) {
                None => self.notify([conn], NodeDeleted, p, None, out),
                Some(pzxid) if pzxid > rel => {
                    self.notify([conn], NodeChildrenChanged, p, None, out)
                }
                Some(_) => self.child_watches.add(p, conn, Mode::Standard),
            }
        }
        for (paths, mode) in [
            (&w.persistent_watches, Mode::Persistent),
            (&w.persistent_recursive_watches, Mode::Recursive),
        ] {
            for p in paths {
                self.data_watches.add(p, conn, mode);
                self.child_watches.add(p, conn, mode);
            }
        }
    }
}
