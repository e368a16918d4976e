//! The methods of [`Controls`], the test controls' face of a running server.
//!
//! Grouped as sessions and connections (expire, cut, freeze), the transaction log (freeze,
//! fail), fault rules, seeding and inspection, and where the HTTP face listens. Every control
//! goes through the shared state's synchronous methods, so none holds a lock across an
//! `.await`.

use shepherd_protocol::FourLetterWord;

use std::net::SocketAddr;

use crate::core::{NodeInfo, NotificationCounts, SessionId, SessionInfo, WatchInfo};
use crate::shell::controls::faults::{FaultId, FaultRule};
use crate::shell::handle::{ControlError, Controls, Server};
use crate::shell::observe::admin;
use crate::shell::state::shared::Shared;

impl<'a> Controls<'a> {
    fn shared(&self) -> &'a Shared {
        &self.server.shared
    }

    // ---- Sessions and connections -------------------------------------------------------

    /// Expires a session now, exactly as its timeout would: one closeSession txn, its
    /// ephemerals deleted with their events (delivered before this returns, in the core's
    /// order), its connection closed with no reply, so that the client learns of it on its
    /// next contact (a reconnect answered as expired). An unknown session is ignored.
    pub fn expire_session(&self, session: SessionId) {
        self.shared()
            .apply(|core, now| core.expire_session(session, now));
    }

    /// The sessions the server knows, by id, with their ephemerals and the watches of their
    /// current connection.
    pub fn sessions(&self) -> Vec<SessionInfo> {
        self.shared().query(|core| core.sessions())
    }

    /// One session, if the server knows it.
    pub fn session(&self, session: SessionId) -> Option<SessionInfo> {
        self.sessions().into_iter().find(|s| s.id == session)
    }

    /// Drops the session's connection at once, without ending the session: what a network
    /// reset does. Nothing more is written to it (queued replies are lost); the connection's
    /// watches are forgotten now, as for any closed socket, and the client is expected to
    /// reconnect, resume the session and re-register them with setWatches.
    ///
    /// # Errors
    /// [`ControlError::UnknownSession`] or [`ControlError::NotConnected`].
    pub fn close_connection(&self, session: SessionId) -> Result<(), ControlError> {
        self.shared().with_core(|core, router| {
            if core.session_timeout(session).is_none() {
                return Err(ControlError::UnknownSession(session));
            }
            let conn = core
                .session_connection(session)
                .ok_or(ControlError::NotConnected(session))?;
            core.close_connection(conn);
            router.kill(conn);
            Ok(())
        })
    }

    /// Freezes a session, simulating a network partition between it and the server: its
    /// connection stops being read and written (requests and pings stay unread in the socket,
    /// replies and notifications stay queued) and a reconnect of the same session is accepted
    /// but its handshake is held the same way. Other sessions are unaffected.
    ///
    /// The session's own timeout keeps running, as in a real partition: nothing touches it, so
    /// a freeze longer than the timeout expires it (ephemerals deleted, watchers told), and its
    /// connection's queue then ends with the close, delivered at the thaw. The idle-connection
    /// timer is suspended while frozen.
    ///
    /// # Errors
    /// [`ControlError::UnknownSession`]: only a live session can be frozen.
    pub fn freeze_session(&self, session: SessionId) -> Result<(), ControlError> {
        if self
            .shared()
            .query(|core| core.session_timeout(session).is_none())
        {
            return Err(ControlError::UnknownSession(session));
        }
        self.shared().frozen.freeze(session);
        Ok(())
    }

    /// Ends a freeze: what was queued is written in order, then the held requests are read and
    /// applied in order. Returns false if the session was not frozen.
    pub fn thaw_session(&self, session: SessionId) -> bool {
        self.shared().frozen.thaw(session)
    }

    // ---- The transaction log ----------------------------------------------------------------

    /// Holds the transaction log, as a disk that stops answering would: writes are still
    /// applied in memory, but their entries are not written, so nothing that depends on them
    /// (their replies, the events they trigger, any session's reads after them, even pings)
    /// is sent until [`Controls::thaw_log`]. A batch already being written completes.
    /// Returns false, and does nothing, without a data directory.
    pub fn freeze_log(&self) -> bool {
        match &self.shared().durable {
            Some(durable) => {
                durable.journal.freeze();
                true
            }
            None => false,
        }
    }

    /// Ends a [`Controls::freeze_log`]: what was held is written, and released once on
    /// disk. Returns false if the log was not frozen.
    pub fn thaw_log(&self) -> bool {
        self.shared()
            .durable
            .as_ref()
            .is_some_and(|durable| durable.journal.thaw())
    }

    /// Makes the next write to the transaction log fail as a full disk would, before any of
    /// that batch reaches the file. The server then does what it does on a real log error: it
    /// acknowledges nothing more, closes every connection, refuses new ones, and reports the
    /// error through [`Server::failure`](crate::Server::failure). Returns false, and does nothing, without a data
    /// directory.
    pub fn fail_log(&self) -> bool {
        match &self.shared().durable {
            Some(durable) => {
                durable.journal.fail_next();
                true
            }
            None => false,
        }
    }

    /// How many messages (replies, events, closes) wait for the disk; always 0 in memory.
    pub fn held_for_disk(&self) -> usize {
        self.shared().router().gate().map_or(0, |gate| gate.held())
    }

    /// The last zxid on disk; `None` in memory.
    pub fn durable_zxid(&self) -> Option<i64> {
        self.shared()
            .durable
            .as_ref()
            .map(|durable| durable.journal.durable())
    }

    // ---- Fault rules ----------------------------------------------------------------------

    /// Adds a fault rule; it applies from the next request read. See [`FaultRule`].
    pub fn add_fault(&self, rule: FaultRule) -> FaultId {
        self.shared().faults.add(rule)
    }

    /// Removes a rule. False if it was already removed.
    pub fn remove_fault(&self, id: FaultId) -> bool {
        self.shared().faults.remove(id)
    }

    /// Removes every rule.
    pub fn clear_faults(&self) {
        self.shared().faults.clear();
    }

    /// How many times a rule has fired (`None` once removed).
    pub fn fault_fire_count(&self, id: FaultId) -> Option<u64> {
        self.shared().faults.fired_count(id)
    }

    /// Waits until a rule has fired at least once; resolves at once if it already has. A rule
    /// fires when its request is matched, before the fault is carried out: the effect (a
    /// closed socket, a reply) follows without further waiting on the server side. Returns
    /// false if the rule is unknown or is removed before it fires.
    ///
    /// Cancellation safe. Unbounded: wrap it in a timeout.
    pub async fn fault_fired(self, id: FaultId) -> bool {
        let Some(mut fired) = self.shared().faults.fired_watch(id) else {
            return false;
        };
        fired.wait_for(|n| *n > 0).await.is_ok()
    }

    // ---- Seeding and inspection ---------------------------------------------------------------

    /// Sets a node's sequence counter, the number its next sequential child gets (docs/protocol.md §8.1); it also
    /// moves the node's cversion. Past `i32::MAX` the counter wraps, as in ZooKeeper.
    ///
    /// # Errors
    /// [`ControlError::NoNode`].
    pub fn set_sequence_counter(&self, parent: &str, value: i32) -> Result<(), ControlError> {
        if self
            .shared()
            .with_core(|core, _| core.set_sequence_counter(parent, value))
        {
            Ok(())
        } else {
            Err(ControlError::NoNode(parent.to_string()))
        }
    }

    /// The last zxid handed out.
    pub fn last_zxid(&self) -> i64 {
        self.shared().query(|core| core.last_zxid())
    }

    /// Sets the last zxid; the next write takes the one after. Clients that saw a higher zxid
    /// are refused (docs/protocol.md §2.4 step 2); see also [`crate::ServerBuilder::initial_zxid`].
    pub fn set_last_zxid(&self, zxid: i64) {
        self.shared().with_core(|core, _| core.set_last_zxid(zxid));
    }

    /// Every node with its Stat and data length, sorted by path.
    pub fn dump_tree(&self) -> Vec<NodeInfo> {
        self.shared().query(|core| core.dump_tree())
    }

    /// Both watch tables: every registration with its path, table, mode and session.
    pub fn dump_watches(&self) -> Vec<WatchInfo> {
        self.shared().query(|core| core.dump_watches())
    }

    /// Watch notifications delivered so far (after ACL filtering, one per connection per
    /// trigger), by event type and by receiving session.
    pub fn notification_counts(&self) -> NotificationCounts {
        self.shared().query(|core| core.notification_counts())
    }

    /// Runs a four-letter word as if a client had sent it (to member 1, for an ensemble),
    /// whitelist or not; for tests and tooling.
    pub fn four_letter_word(&self, word: FourLetterWord) -> String {
        admin::render(self.shared(), 1, word)
    }

    // ---- The HTTP face ----------------------------------------------------------------------

    /// Where the HTTP test controls listen, if they are on
    /// ([`ServerBuilder::test_controls`](crate::ServerBuilder::test_controls)).
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.server.test_controls.as_ref().map(|(addr, _)| *addr)
    }

    /// The bearer token every HTTP test-controls call needs, if they are on.
    pub fn http_token(&self) -> Option<&'a str> {
        let server: &'a Server = self.server;
        server
            .test_controls
            .as_ref()
            .map(|(_, token)| token.as_str())
    }
}
