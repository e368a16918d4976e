//! The core's inputs: everything that happens to the server enters through one of these
//! methods, and what the server does about it comes back as the ordered [`Action`]s to carry
//! out.
//!
//! This file is the public surface; the work is done next to each concept: the handshake in
//! `handshake.rs`, requests in `dispatch.rs`, forgetting connections and ending sessions in
//! `teardown.rs`, the reaper in `reaper.rs`.
//!
//! Invariants: each call runs to completion before the next (one total order, docs/protocol.md §3.3); the
//! actions it returns are in delivery order, notifications before the reply that reveals their
//! change (docs/protocol.md §9.6), and a `Close` is the last action for its connection, which the core has
//! already forgotten.

use shepherd_protocol::Id;

use super::watch::Spare;
use super::{Action, Conn, ConnId, ConnInfo, Core, Now, SessionId, acl};

/// What one [`Core::sweep`] call did: whether more remains, and the memory it took out of the
/// core, freed when this is dropped.
#[derive(Debug)]
#[must_use = "drop it once the core is released: it may free hundreds of megabytes"]
pub struct Swept {
    /// Whether registrations of gone connections remain to sweep.
    pub more: bool,
    _spare: Spare,
}

/// # Inputs
///
/// A connection opens, sends its ConnectRequest and then requests, and closes; time passes.
/// The shell calls these in the order they happen and carries out the actions they return.
impl Core {
    /// A TCP connection was accepted (gives the connection its `ip:<addr>` identity).
    pub fn open_connection(&mut self, conn: ConnId, info: ConnInfo) {
        let ip = Id::new("ip", acl::java_host_address(info.addr));
        self.conns.insert(
            conn,
            Conn {
                session: None,
                member: info.member.max(1),
                identities: acl::Identities::new(ip),
                sasl: None,
            },
        );
    }

    /// The transport authenticated the connection before its first frame: a TLS client
    /// certificate's `x509:<subject>` (and `super` for `x509.superUser`), added as ZooKeeper's
    /// `X509AuthenticationProvider` adds them after the handshake. Ignored for an unknown
    /// connection; identities past [`acl::MAX_IDENTITIES`] are dropped.
    pub fn add_transport_identities(&mut self, conn: ConnId, ids: &[Id]) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.identities.add(ids);
        }
    }

    /// The first frame payload of a connection (ConnectRequest bytes, no length prefix).
    /// Returns the actions: Send(conn, ConnectResponse payload) [+ Close(conn) for an invalid
    /// session (docs/protocol.md §2.4 step 6c)], Close(old_conn) first for any other connection bound to that session
    /// (docs/protocol.md §2.4 step 6a), or only Close(conn) (no reply) when undecodable or lastZxidSeen > last zxid
    /// (docs/protocol.md §2.4 step 2).
    pub fn connect(&mut self, conn: ConnId, payload: &[u8], now: Now) -> Vec<Action> {
        self.handshake(conn, payload, now)
    }

    /// Any later frame payload of a connection that completed connect().
    /// Returns notifications (to any connections, including this one) then this request's
    /// reply, in delivery order; Close(conn) after the reply for unknown opcodes (docs/protocol.md §4.1), auth
    /// failure (docs/protocol.md §12.5), closeSession (§13.4); nothing at all for requests on an unknown/closing
    /// session (docs/protocol.md §13.1) or for createSession (-10). Header undecodable (payload < 8 bytes) →
    /// [Close(conn)].
    ///
    /// A request that creates the first container or TTL node brings the reaper's next run into
    /// [`Core::next_deadline`]: a shell that sleeps until that deadline must read it again
    /// after every request.
    pub fn request(&mut self, conn: ConnId, payload: &[u8], now: Now) -> Vec<Action> {
        let reaper_idle = self.reaper_deadline().is_none();
        let out = self.dispatch(conn, payload, now);
        self.resume_reaper(now, reaper_idle);
        out
    }

    /// The socket is gone. Drop the connection's watches and identities; the session lives on.
    /// A connection with many watches leaves their removal to [`Core::sweep`].
    pub fn close_connection(&mut self, conn: ConnId) {
        self.drop_conn(conn);
    }

    /// Whether connections that went (closed, expired, replaced) left watch registrations to
    /// remove. They are already out of every registration count and lookup, and no trigger
    /// fires them; only the count of watched paths (`wchs`) may include a path they alone
    /// watched until its entry is swept.
    pub fn sweep_pending(&self) -> bool {
        self.data_watches.sweep_pending() || self.child_watches.sweep_pending()
    }

    /// Removes up to `max` of the registrations gone connections left, so that the work a
    /// client's close makes is done in bounded slices between other calls rather than in one
    /// (a million watches take seconds). The shell calls it while [`Core::sweep_pending`],
    /// releasing the core between calls, and drops the [`Swept`] it returns only after
    /// releasing the core: the last slice hands over the tables' spare capacity, which takes
    /// milliseconds to free.
    pub fn sweep(&mut self, max: usize) -> Swept {
        let mut spare = Spare::default();
        let done = self.data_watches.sweep(max, &mut spare);
        self.child_watches
            .sweep(max.saturating_sub(done), &mut spare);
        Swept {
            more: self.sweep_pending(),
            _spare: spare,
        }
    }

    /// Expire due sessions (tick buckets, docs/protocol.md §13.1-§13.2: closeSession txn takes one zxid,
    /// ephemerals deleted with their events, Close(conn) for a still-connected socket with no
    /// reply) and reap containers / TTL nodes (docs/protocol.md §8.3, §8.4, every container_check_interval_ms,
    /// rate-limited by container_max_per_minute; each reap is a deleteContainer txn taking a
    /// zxid and firing events).
    pub fn tick(&mut self, now: Now) -> Vec<Action> {
        let mut out = Vec::new();
        for id in self.sessions.due(now.mono_ms) {
            self.end_session(id, now, 0, true, &mut out);
        }
        self.reap_if_due(now, &mut out);
        out
    }

    /// Expire a session immediately, exactly as a timeout would (a test control). Returns
    /// the actions.
    pub fn expire_session(&mut self, session: SessionId, now: Now) -> Vec<Action> {
        let mut out = Vec::new();
        self.end_session(session, now, 0, true, &mut out);
        out
    }
}
