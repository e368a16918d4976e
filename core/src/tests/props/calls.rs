//! The checked calls: each call into the core (handshake, request, rejection, tick, forced
//! expiry), with its actions checked against what the reference promises.
//!
//! Invariants checked: nothing is sent to a closed connection (`Model::carry_out`); every
//! payload decodes and re-encodes to the same bytes; a request's notifications precede its
//! reply, which comes last for its connection (docs/protocol.md §9.6); the zxid moves by exactly one per txn
//! (docs/protocol.md §3.3); handshakes, refusals and expiry close exactly what §2.4, §4.1, §12.5, §13.2 and §13.4
//! say.

use std::collections::BTreeSet;

use shepherd_protocol::{
    Codec, ConnectRequest, ConnectResponse, ErrorCode, OpCode, Reply, ReplyHeader, RequestHeader,
    decode_from, decode_reply, encode_reply,
};

use super::expect::{Expect, check_event};
use super::model::Model;
use crate::{Action, ConnId, SessionId, SessionInfo};

impl Model {
    pub(super) fn connect(&mut self, conn: ConnId, payload: &[u8]) -> Option<ConnectResponse> {
        let zxid = self.core.last_zxid();
        let before = self.sessions();
        self.handshaken.insert(conn);
        let actions = self.core.connect(conn, payload, self.now);
        let sent = self.carry_out(&actions);
        let delta = self.core.last_zxid() - zxid;
        let request = match decode_from::<ConnectRequest>(payload) {
            Ok(r) if r.last_zxid_seen <= zxid => r,
            // Refused without a reply (docs/protocol.md §2.4 step 2).
            _ => {
                assert_eq!(actions, [Action::Close(conn)]);
                assert_eq!(delta, 0);
                return None;
            }
        };
        let timeout = request.timeout.clamp(4_000, 40_000);
        let mut expected_closes = Vec::new();
        let valid = if request.session_id == 0 {
            // createSession is a txn (docs/protocol.md §2.4 step 5).
            assert_eq!(delta, 1, "createSession takes one zxid");
            true
        } else {
            assert_eq!(delta, 0, "a reattach takes no zxid");
            let valid = before.contains_key(&request.session_id)
                && request.passwd.as_ref() == self.passwords.get(&request.session_id);
            let old = before.get(&request.session_id).and_then(|s| s.conn);
            // docs/protocol.md §2.4 6a: the other connection goes first, once the password
            // matched (docs/compatibility.md: A wrong password leaves the live connection alone).
            if let Some(old) = old.filter(|&c| c != conn && valid) {
                expected_closes.push(old);
                assert_eq!(actions[0], Action::Close(old));
            }
            valid
        };
        if !valid {
            expected_closes.push(conn);
        }
        let closes: Vec<ConnId> = actions
            .iter()
            .filter_map(|a| match a {
                Action::Close(c) => Some(*c),
                Action::Send(..) => None,
            })
            .collect();
        assert_eq!(closes, expected_closes, "{actions:?}");
        assert_eq!(sent.keys().copied().collect::<Vec<_>>(), [conn]);
        let [payload] = &sent[&conn][..] else {
            panic!("one ConnectResponse expected: {actions:?}");
        };
        let response = decode_from::<ConnectResponse>(payload).expect("a ConnectResponse");
        assert_eq!(
            response.to_bytes(),
            *payload,
            "ConnectResponse has trailing bytes"
        );
        // The response answers in the request's form (docs/protocol.md §2.2).
        assert_eq!(response.read_only.is_some(), request.read_only.is_some());
        assert_eq!(response.read_only, request.read_only.map(|_| false));
        assert_eq!(response.protocol_version, 0);
        if !valid {
            assert_eq!(response, ConnectResponse::invalid(request.read_only));
            assert_eq!(self.core.connection_session(conn), None);
            return None;
        }
        assert_eq!(response.timeout, timeout);
        assert_eq!(
            self.core.session_timeout(response.session_id),
            Some(timeout)
        );
        assert_eq!(
            self.core.connection_session(conn),
            Some(response.session_id)
        );
        let passwd = response.passwd.clone().expect("a password");
        assert_eq!(passwd.len(), 16);
        if request.session_id == 0 {
            assert!(
                !self.passwords.contains_key(&response.session_id),
                "id reused"
            );
            assert_ne!(response.session_id, 0);
            self.passwords.insert(response.session_id, passwd);
        } else {
            assert_eq!(response.session_id, request.session_id);
            assert_eq!(Some(&passwd), self.passwords.get(&request.session_id));
        }
        Some(response)
    }

    /// One request frame. Returns the decoded reply, if there is one.
    pub(super) fn request(&mut self, conn: ConnId, payload: &[u8]) -> Option<Reply> {
        let zxid = self.core.last_zxid();
        let live = self.live(conn);
        let before = self.core.dump_tree();
        let actions = self.core.request(conn, payload, self.now);
        let mut sent = self.carry_out(&actions);
        let delta = self.core.last_zxid() - zxid;
        let Ok(header) = decode_from::<RequestHeader>(payload) else {
            assert_eq!(actions, [Action::Close(conn)], "undecodable header");
            assert_eq!(delta, 0);
            return None;
        };
        let Some(session) = live else {
            // No session (gone, or never made): dropped silently (docs/protocol.md §13.1).
            assert_eq!(actions, [], "request without a live session");
            assert_eq!(delta, 0);
            return None;
        };
        let expect = Expect::of(&header, &payload[8..]);
        let ctx = || format!("{header:?} on {conn} ({session:#x}): {expect:?} → {actions:?}");
        assert_eq!(delta, i64::from(expect.zxid_taken), "zxid delta, {}", ctx());
        // Only the requester's connection may be closed, and only when the reference says so.
        let closes: Vec<ConnId> = actions
            .iter()
            .filter_map(|a| match a {
                Action::Close(c) => Some(*c),
                Action::Send(..) => None,
            })
            .collect();
        let expected_closes = if expect.close { vec![conn] } else { vec![] };
        assert_eq!(closes, expected_closes, "closes, {}", ctx());
        // Everything to other connections is a notification.
        let own = sent.remove(&conn).unwrap_or_default();
        sent.values().flatten().for_each(|p| check_event(p));
        // On the requester's connection: notifications, then the reply last (docs/protocol.md §9.6).
        let (events, reply) = match (expect.reply, own.split_last()) {
            (true, Some((reply, events))) => (events, Some(reply)),
            (false, _) => (&own[..], None),
            (true, None) => panic!("no reply, {}", ctx()),
        };
        events.iter().for_each(|p| check_event(p));
        let reply = reply?;
        let want_xid = if expect.op == Some(OpCode::Ping) {
            -2
        } else {
            header.xid
        };
        let h = decode_from::<ReplyHeader>(reply).expect("a reply header");
        assert_eq!(h.xid, want_xid, "reply xid, {}", ctx());
        let want_zxid = expect.reply_zxid.unwrap_or(self.core.last_zxid());
        assert_eq!(h.zxid, want_zxid, "reply zxid, {}", ctx());
        if let Some(err) = expect.err {
            assert_eq!(h.err, err, "reply err, {}", ctx());
        }
        if want_xid == -1 {
            // The client chose the notification xid; the reply cannot be told from an event.
            return None;
        }
        let decoded = decode_reply(reply, |x| (x == want_xid).then_some(expect.op).flatten())
            .unwrap_or_else(|e| panic!("reply does not decode ({e:?}), {}", ctx()));
        let mut again = Vec::new();
        match &decoded {
            Reply::Ok(h, body) => encode_reply(h, Some(body), &mut again),
            Reply::Err(h) => {
                encode_reply(h, None, &mut again);
                // 3.8 follows a multiRead-of-writes' MarshallingError with an empty response
                // (docs/protocol.md §10.4): a lone closing MultiHeader.
                if expect.op == Some(OpCode::MultiRead) && h.err == -5 && reply.len() > again.len()
                {
                    again
                        .extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x01, 0xff, 0xff, 0xff, 0xff]);
                }
            }
            Reply::Event(..) => panic!("reply decoded as an event, {}", ctx()),
        }
        assert_eq!(
            again,
            *reply,
            "reply bytes differ from its re-encoding, {}",
            ctx()
        );
        self.check_effects(&before, payload, &decoded, &actions);
        Some(decoded)
    }

    /// A rejection answers with the error and the last zxid, applying nothing.
    pub(super) fn reject(&mut self, conn: ConnId, payload: &[u8], err: ErrorCode) {
        let zxid = self.core.last_zxid();
        let live = self.live(conn);
        let before = self.core.dump_tree();
        let actions = self.core.reply_error(conn, payload, err, self.now);
        self.carry_out(&actions);
        assert_eq!(self.core.last_zxid(), zxid);
        assert_eq!(self.core.dump_tree(), before);
        let header = decode_from::<RequestHeader>(payload).expect("a header");
        if live.is_none() {
            assert_eq!(actions, []);
            return;
        }
        let mut reply = Vec::new();
        let header = ReplyHeader {
            xid: header.xid,
            zxid,
            err: err.into(),
        };
        encode_reply(&header, None, &mut reply);
        assert_eq!(actions, [Action::Send(conn, reply)]);
    }

    pub(super) fn advance(&mut self, ms: u64) {
        self.now.mono_ms += ms;
        self.now.wall_ms += ms as i64;
        let zxid = self.core.last_zxid();
        let before = self.sessions();
        let nodes = self.core.node_count();
        let actions = self.core.tick(self.now);
        self.ticked = true;
        let sent = self.carry_out(&actions);
        let after = self.sessions();
        let expired: Vec<&SessionInfo> = before
            .values()
            .filter(|s| !after.contains_key(&s.id))
            .collect();
        // Expiry closes the sockets of the expired sessions, with nothing sent to them (docs/protocol.md §13.2).
        let closes: BTreeSet<ConnId> = actions
            .iter()
            .filter_map(|a| match a {
                Action::Close(c) => Some(*c),
                Action::Send(..) => None,
            })
            .collect();
        let expected: BTreeSet<ConnId> = expired.iter().filter_map(|s| s.conn).collect();
        assert_eq!(closes, expected, "tick closes {actions:?}");
        for s in &expired {
            assert!(s.expires_at_ms <= self.now.mono_ms, "expired early: {s:?}");
        }
        sent.values().flatten().for_each(|p| check_event(p));
        // One zxid per expired session and one per reaped node (docs/protocol.md §3.3, §8.3).
        let ephemerals: usize = expired.iter().map(|s| s.ephemerals.len()).sum();
        let removed = nodes - self.core.node_count();
        assert!(removed >= ephemerals);
        let reaped = removed - ephemerals;
        assert_eq!(
            self.core.last_zxid() - zxid,
            (expired.len() + reaped) as i64,
            "tick zxids"
        );
    }

    pub(super) fn expire(&mut self, session: SessionId) {
        let zxid = self.core.last_zxid();
        let before = self.sessions();
        let actions = self.core.expire_session(session, self.now);
        let sent = self.carry_out(&actions);
        sent.values().flatten().for_each(|p| check_event(p));
        match before.get(&session) {
            None => {
                assert_eq!(actions, []);
                assert_eq!(self.core.last_zxid(), zxid);
            }
            Some(info) => {
                assert_eq!(self.core.last_zxid(), zxid + 1);
                assert_eq!(self.core.session_timeout(session), None);
                if let Some(conn) = info.conn {
                    assert_eq!(actions.last(), Some(&Action::Close(conn)));
                    assert!(!sent.contains_key(&conn), "expired session got {actions:?}");
                }
            }
        }
    }
}
