//! The `sasl` request (op 102) and `enforce.auth` (docs/security.md, "SASL DIGEST-MD5"), as
//! ZooKeeper 3.8's `ZooKeeperServer.processSasl` and `AuthenticationHelper` answer them.
//!
//! A connection runs at most one DIGEST-MD5 exchange: its first sasl token starts it, the
//! server's `rspauth` ends it and adds `sasl:<user>` (and `super` for a `superUser`). A failed
//! exchange is answered `AuthFailed` (or `SessionClosedRequireSaslAuth` when `enforce.auth`
//! names `sasl`), with zxid 0 and a null token, and the connection is closed; the session lives
//! on until it expires, as on ZooKeeper. A sasl token after a completed exchange is a failed
//! exchange too (the JDK's DIGEST-MD5 server throws a `SaslException`, which ZooKeeper 3.8
//! answers as above; checked against a real server).
//!
//! Invariants: the per-connection state is one boxed exchange (a nonce and fixed parameters),
//! created on the first token and never replaced, so a flood of sasl requests costs nothing
//! beyond the first exchange and ends with the connection. The nonce is a pure function of the
//! server secret and the inputs (see [`Core::sasl_nonce`]), so the core stays deterministic.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use shepherd_protocol::sasl::{DigestMd5Server, DigestParams, ServerStep};
use shepherd_protocol::{
    Codec, ErrorCode, GetSASLRequest, Id, ReplyHeader, Response, SaslToken, encode_reply,
};

use super::dispatch::reply;
use super::{Action, ConnId, Core, Now, acl};

impl Core {
    /// The nonce of connection `conn`'s exchange: base64 of 30 bytes (40 characters, as
    /// ZooKeeper's) of HMAC-SHA256(session secret, label, boot salt, session id, connection id,
    /// wall clock ms).
    ///
    /// Why derived rather than drawn: the core reads no randomness, so that it replays and
    /// tests deterministically. A client cannot predict it without the 32-byte secret (drawn
    /// from the OS on a server's first start, then kept in its data directory). It never
    /// repeats: a connection runs one exchange, connection ids are not reused within a
    /// process's life, and every process start draws a new OS-random boot salt, so a restart
    /// with the same secret and a wall clock set back still derives new nonces.
    fn sasl_nonce(&self, conn: ConnId, session: i64, now: Now) -> String {
        let Ok(mut mac) = <Hmac<Sha256> as Mac>::new_from_slice(&self.config.session_secret) else {
            // HMAC takes keys of any length; this arm is never taken.
            return String::new();
        };
        mac.update(b"shepherd sasl nonce");
        mac.update(&self.config.boot_salt);
        mac.update(&session.to_be_bytes());
        mac.update(&conn.to_be_bytes());
        mac.update(&now.wall_ms.to_be_bytes());
        let tag = mac.finalize().into_bytes();
        acl::base64(&tag[..30])
    }

    /// Answers a sasl request (op 102), outside the request pipeline: zxid 0, no session touch.
    pub(super) fn sasl(
        &mut self,
        conn: ConnId,
        session: i64,
        xid: i32,
        body: &[u8],
        now: Now,
    ) -> Vec<Action> {
        let Some(users) = self.config.auth.sasl_users.clone() else {
            // No SASL configured: an OK header and a null token (docs/protocol.md §12.6).
            let token = Response::Sasl(SaslToken { token: None });
            return vec![Action::Send(
                conn,
                reply(xid, 0, ErrorCode::Ok, Some(&token)),
            )];
        };
        let Ok(request) = GetSASLRequest::decode(&mut &*body) else {
            // ZooKeeper fails to read the record and drops the connection.
            self.drop_conn(conn);
            return vec![Action::Close(conn)];
        };
        let nonce = self.sasl_nonce(conn, session, now);
        let Some(c) = self.conns.get_mut(&conn) else {
            return Vec::new();
        };
        let exchange = c.sasl.get_or_insert_with(|| {
            Box::new(DigestMd5Server::new(DigestParams::zookeeper(), nonce))
        });
        let token = request.token.unwrap_or_default();
        match exchange.step(&token, |user| users.get(user).cloned()) {
            Ok(ServerStep::Challenge(challenge)) => {
                let body = Response::Sasl(SaslToken {
                    token: Some(challenge),
                });
                vec![Action::Send(
                    conn,
                    reply(xid, 0, ErrorCode::Ok, Some(&body)),
                )]
            }
            Ok(ServerStep::Done { token, user }) => {
                let mut new = vec![Id::new("sasl", user.as_str())];
                if self.config.auth.super_users.contains(&user) {
                    new.push(Id::new("super", ""));
                }
                if !c.identities.add(&new) {
                    // Full identity table (acl::MAX_IDENTITIES): refused as a failed login.
                    return self.sasl_failed(conn, xid);
                }
                let body = Response::Sasl(SaslToken { token: Some(token) });
                vec![Action::Send(
                    conn,
                    reply(xid, 0, ErrorCode::Ok, Some(&body)),
                )]
            }
            Err(_) => self.sasl_failed(conn, xid),
        }
    }

    /// A failed exchange: AuthFailed (SessionClosedRequireSaslAuth when SASL is enforced) with
    /// zxid 0, then the connection closes. Unlike other error replies (docs/protocol.md §4.2)
    /// this one carries a body, a null token, because ZooKeeper 3.8 writes one.
    fn sasl_failed(&mut self, conn: ConnId, xid: i32) -> Vec<Action> {
        let err = if self.config.auth.sasl_required() {
            ErrorCode::SessionClosedRequireSaslAuth
        } else {
            ErrorCode::AuthFailed
        };
        self.drop_conn(conn);
        let header = ReplyHeader {
            xid,
            zxid: 0,
            err: err.into(),
        };
        let mut payload = Vec::new();
        let null_token = Response::Sasl(SaslToken { token: None });
        encode_reply(&header, Some(&null_token), &mut payload);
        vec![Action::Send(conn, payload), Action::Close(conn)]
    }

    /// `AuthenticationHelper.enforceAuthentication`: with enforcement on, a request (anything
    /// but auth and sasl, pings and closeSession included) from a connection holding no identity
    /// of an enforced scheme is answered SessionClosedRequireSaslAuth with zxid 0 and the
    /// connection is closed. `None`: the request may proceed.
    pub(super) fn enforce_auth(&mut self, conn: ConnId, xid: i32) -> Option<Vec<Action>> {
        let schemes = &self.config.auth.enforce_schemes;
        if schemes.is_empty() {
            return None;
        }
        let authenticated = self.conns.get(&conn).is_some_and(|c| {
            c.identities
                .as_slice()
                .iter()
                .any(|id| schemes.contains(&id.scheme))
        });
        if authenticated {
            return None;
        }
        self.drop_conn(conn);
        let refusal = reply(xid, 0, ErrorCode::SessionClosedRequireSaslAuth, None);
        Some(vec![Action::Send(conn, refusal), Action::Close(conn)])
    }
}
