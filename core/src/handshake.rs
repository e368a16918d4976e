//! The handshake (docs/protocol.md §2.4): the first frame of a connection, a ConnectRequest, either creates a
//! session, resumes one, or is refused.
//!
//! Invariants: the negotiated timeout is clamped into [min, max] session timeout; only a new
//! session takes a zxid (createSession is a txn), a resume does not; a session is bound to at
//! most one connection, so any other connection on it is closed first, even when the password
//! then turns out to be wrong (docs/protocol.md §2.4 6a); a refusal forgets the connection along with its close.

use std::net::{IpAddr, Ipv4Addr};

use shepherd_protocol::txn::{CreateSessionTxn, TxnBody};
use shepherd_protocol::{Codec, ConnectRequest, ConnectResponse, OpCode, decode_from};

use super::txn::Txn;

use super::{Action, ConnId, ConnInfo, Core, Now, SessionId};

impl Core {
    /// Answers a ConnectRequest payload; see [`Core::connect`] for the actions it returns.
    pub(super) fn handshake(&mut self, conn: ConnId, payload: &[u8], now: Now) -> Vec<Action> {
        let request = match decode_from::<ConnectRequest>(payload) {
            // "Client must try another server": refuse without a reply (docs/protocol.md §2.4 step 2).
            Ok(r) if r.last_zxid_seen <= self.zxid => r,
            _ => {
                self.drop_conn(conn);
                return vec![Action::Close(conn)];
            }
        };
        if !self.conns.contains_key(&conn) {
            self.open_connection(
                conn,
                ConnInfo {
                    addr: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
                    member: 1,
                },
            );
        }
        // docs/protocol.md §2.4 step 3: clamp into [min, max].
        let min = i32::try_from(self.config.min_session_timeout_ms).unwrap_or(i32::MAX);
        let max = i32::try_from(self.config.max_session_timeout_ms).unwrap_or(i32::MAX);
        let timeout = request.timeout.max(min).min(max);
        let read_only = request.read_only.map(|_| false);
        let mut out = Vec::new();
        let response = if request.session_id == 0 {
            // createSession is a txn: it takes a zxid (docs/protocol.md §2.4 step 5).
            self.zxid += 1;
            let member = self.conns.get(&conn).map_or(1, |c| c.member);
            let id = self.sessions.create(timeout, conn, now.mono_ms, member);
            self.bind(conn, id);
            // Logged as ZooKeeper's createSession request: xid 0, the negotiated timeout,
            // and the digest (unchanged by it).
            let txn = Txn::new(self.zxid, now.wall_ms, id, 0, false);
            let body = || TxnBody::CreateSession(CreateSessionTxn { time_out: timeout });
            self.log_txn(&txn, OpCode::CreateSession.into(), body, Some(0));
            let passwd = Some(self.sessions.password(id).to_vec());
            ConnectResponse {
                protocol_version: 0,
                timeout,
                session_id: id,
                passwd,
                read_only,
            }
        } else {
            let id = request.session_id;
            let valid = self.sessions.get(id).is_some()
                && request
                    .passwd
                    .as_deref()
                    .is_some_and(|p| self.sessions.password_matches(id, p));
            if !valid {
                out.push(Action::Send(
                    conn,
                    ConnectResponse::invalid(request.read_only).to_bytes(),
                ));
                out.push(Action::Close(conn));
                self.drop_conn(conn);
                return out;
            }
            // docs/protocol.md §2.4 6a: any other connection on this session goes first. Only
            // once the password matched: ZooKeeper closes it before the check, which lets anyone
            // who guesses an id disconnect its owner (docs/compatibility.md: A wrong password
            // leaves the live connection alone).
            if let Some(old) = self.sessions.get(id).and_then(|s| s.conn)
                && old != conn
            {
                self.drop_conn(old);
                out.push(Action::Close(old));
            }
            // docs/protocol.md §2.4 6b: same id and password, touched with the new timeout, no zxid.
            let session = self.sessions.get_mut(id).expect("checked above");
            session.timeout_ms = timeout;
            let passwd = Some(self.sessions.password(id).to_vec());
            self.sessions.touch(id, now.mono_ms);
            self.bind(conn, id);
            ConnectResponse {
                protocol_version: 0,
                timeout,
                session_id: id,
                passwd,
                read_only,
            }
        };
        out.push(Action::Send(conn, response.to_bytes()));
        out
    }

    fn bind(&mut self, conn: ConnId, session: SessionId) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.session = Some(session);
        }
        if let Some(s) = self.sessions.get_mut(session) {
            s.conn = Some(conn);
        }
    }
}
