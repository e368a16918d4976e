//! The test controls of [`ServerHandle`]: what a test does to a running server that no client
//! could, and what it reads of the server that no client sees.
//!
//! Grouped as sessions and connections (expire, cut, freeze), the transaction log (freeze),
//! fault rules, waiting on the core, and seeding and inspection. Every control goes through
//! the shared state's synchronous methods: a control that changes the core routes what
//! results under the core lock, so its events reach clients in the core's order, exactly as
//! if a request had caused them. A control that cannot apply says why with a
//! [`ControlError`] value.

use shepherd_protocol::FourLetterWord;

use crate::core::{Core, NodeInfo, NotificationCounts, SessionId, SessionInfo, WatchInfo};
use crate::shell::controls::faults::{FaultId, FaultRule};
use crate::shell::handle::ServerHandle;
use crate::shell::observe::admin;

/// Why a test control could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    /// The server does not know this session (never existed, closed or expired).
    #[error("no session 0x{0:x}")]
    UnknownSession(SessionId),
    /// The session exists but has no connection right now.
    #[error("session 0x{0:x} has no connection")]
    NotConnected(SessionId),
    /// No node at this path.
    #[error("no node {0}")]
    NoNode(String),
    /// The server has no member with this id (ids are `1..=n`).
    #[error("no member {0}")]
    UnknownMember(u64),
    /// The member could not be stopped or started: its port is taken, or the server is shut
    /// down or its log failed. The text says which.
    #[error("member {0}: {1}")]
    MemberUnavailable(u64, String),
}

impl ServerHandle {
    // ---- Sessions and connections -------------------------------------------------------

    /// Expires a session now, exactly as its timeout would: one closeSession txn, its
    /// ephemerals deleted with their events (delivered before this returns, in the core's
    /// order), its connection closed with no reply, so that the client learns of it on its
    /// next contact (a reconnect answered as expired). An unknown session is ignored.
    pub fn expire_session(&self, session: SessionId) {
        self.shared
            .apply(|core, now| core.expire_session(session, now));
    }

    /// The sessions the server knows, by id, with their ephemerals and the watches of their
    /// current connection.
    pub fn sessions(&self) -> Vec<SessionInfo> {
        self.shared.query(|core| core.sessions())
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
        self.shared.with_core(|core, router| {
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
            .shared
            .query(|core| core.session_timeout(session).is_none())
        {
            return Err(ControlError::UnknownSession(session));
        }
        self.shared.frozen.freeze(session);
        Ok(())
    }

    /// Ends a freeze: what was queued is written in order, then the held requests are read and
    /// applied in order. Returns false if the session was not frozen.
    pub fn thaw_session(&self, session: SessionId) -> bool {
        self.shared.frozen.thaw(session)
    }

    // ---- The transaction log ----------------------------------------------------------------

    /// Holds the transaction log, as a disk that stops answering would: writes are still
    /// applied in memory, but their entries are not written, so nothing that depends on them
    /// (their replies, the events they trigger, any session's reads after them, even pings)
    /// is sent until [`ServerHandle::thaw_log`]. A batch already being written completes.
    /// Returns false, and does nothing, without a data directory.
    pub fn freeze_log(&self) -> bool {
        match &self.shared.durable {
            Some(durable) => {
                durable.journal.freeze();
                true
            }
            None => false,
        }
    }

    /// Ends a [`ServerHandle::freeze_log`]: what was held is written, and released once on
    /// disk. Returns false if the log was not frozen.
    pub fn thaw_log(&self) -> bool {
        self.shared
            .durable
            .as_ref()
            .is_some_and(|durable| durable.journal.thaw())
    }

    /// Makes the next write to the transaction log fail as a full disk would, before any of
    /// that batch reaches the file. The server then does what it does on a real log error: it
    /// acknowledges nothing more, closes every connection, refuses new ones, and reports the
    /// error through [`ServerHandle::failure`]. Returns false, and does nothing, without a data
    /// directory.
    pub fn fail_log(&self) -> bool {
        match &self.shared.durable {
            Some(durable) => {
                durable.journal.fail_next();
                true
            }
            None => false,
        }
    }

    /// How many messages (replies, events, closes) wait for the disk; always 0 in memory.
    pub fn held_for_disk(&self) -> usize {
        self.shared.router().gate().map_or(0, |gate| gate.held())
    }

    /// The last zxid on disk; `None` in memory.
    pub fn durable_zxid(&self) -> Option<i64> {
        self.shared
            .durable
            .as_ref()
            .map(|durable| durable.journal.durable())
    }

    // ---- Fault rules ----------------------------------------------------------------------

    /// Adds a fault rule; it applies from the next request read. See [`FaultRule`].
    pub fn add_fault(&self, rule: FaultRule) -> FaultId {
        self.shared.faults.add(rule)
    }

    /// Removes a rule. False if it was already removed.
    pub fn remove_fault(&self, id: FaultId) -> bool {
        self.shared.faults.remove(id)
    }

    /// Removes every rule.
    pub fn clear_faults(&self) {
        self.shared.faults.clear();
    }

    /// How many times a rule has fired (`None` once removed).
    pub fn fault_fire_count(&self, id: FaultId) -> Option<u64> {
        self.shared.faults.fired_count(id)
    }

    /// Waits until a rule has fired at least once; resolves at once if it already has. A rule
    /// fires when its request is matched, before the fault is carried out: the effect (a
    /// closed socket, a reply) follows without further waiting on the server side. Returns
    /// false if the rule is unknown or is removed before it fires.
    ///
    /// Cancellation safe. Unbounded: wrap it in a timeout.
    pub async fn fault_fired(&self, id: FaultId) -> bool {
        let Some(mut fired) = self.shared.faults.fired_watch(id) else {
            return false;
        };
        fired.wait_for(|n| *n > 0).await.is_ok()
    }

    // ---- Waiting on the core ----------------------------------------------------------------

    /// Waits until `pred` holds of the core. It is checked now, then after every change of the
    /// core (request, handshake, tick, expiry, closed connection), with the core locked: keep it
    /// quick and do not call back into the handle from it.
    ///
    /// Cancellation safe. Unbounded: wrap it in a timeout. Under `tokio::time::pause` this is
    /// how a test waits for an expiry after `tokio::time::advance`.
    pub async fn wait_for(&self, mut pred: impl FnMut(&Core) -> bool) {
        self.shared
            .wait_until(|shared| shared.query(&mut pred))
            .await;
    }

    // ---- Seeding and inspection ---------------------------------------------------------------

    /// Sets a node's sequence counter, the number its next sequential child gets (docs/protocol.md §8.1); it also
    /// moves the node's cversion. Past `i32::MAX` the counter wraps, as in ZooKeeper.
    ///
    /// # Errors
    /// [`ControlError::NoNode`].
    pub fn set_sequence_counter(&self, parent: &str, value: i32) -> Result<(), ControlError> {
        if self
            .shared
            .with_core(|core, _| core.set_sequence_counter(parent, value))
        {
            Ok(())
        } else {
            Err(ControlError::NoNode(parent.to_string()))
        }
    }

    /// The last zxid handed out.
    pub fn last_zxid(&self) -> i64 {
        self.shared.query(|core| core.last_zxid())
    }

    /// Sets the last zxid; the next write takes the one after. Clients that saw a higher zxid
    /// are refused (docs/protocol.md §2.4 step 2); see also [`crate::ServerBuilder::initial_zxid`].
    pub fn set_last_zxid(&self, zxid: i64) {
        self.shared.with_core(|core, _| core.set_last_zxid(zxid));
    }

    /// Every node with its Stat and data length, sorted by path.
    pub fn dump_tree(&self) -> Vec<NodeInfo> {
        self.shared.query(|core| core.dump_tree())
    }

    /// Both watch tables: every registration with its path, table, mode and session.
    pub fn dump_watches(&self) -> Vec<WatchInfo> {
        self.shared.query(|core| core.dump_watches())
    }

    /// Watch notifications delivered so far (after ACL filtering, one per connection per
    /// trigger), by event type and by receiving session.
    pub fn notification_counts(&self) -> NotificationCounts {
        self.shared.query(|core| core.notification_counts())
    }

    /// Runs a four-letter word as if a client had sent it (to member 1, for an ensemble),
    /// whitelist or not; for tests and tooling.
    pub fn four_letter_word(&self, word: FourLetterWord) -> String {
        admin::render(&self.shared, 1, word)
    }

    /// Runs a four-letter word as ensemble member `member` answers it, whitelist or not,
    /// whatever the member's state; `None` for an unknown member.
    pub fn member_four_letter_word(&self, member: u64, word: FourLetterWord) -> Option<String> {
        self.shared.members.addr(member)?;
        Some(admin::render(&self.shared, member, word))
    }

    /// Runs `f` with the core locked, for inspection. Do not hold on to anything it borrows.
    pub fn inspect<T>(&self, f: impl FnOnce(&Core) -> T) -> T {
        self.shared.query(f)
    }
}
