//! Server-side controls for tests: fault rules matched per request, frozen sessions, and a
//! "core changed" signal that [`crate::ServerHandle::wait_for`] waits on.
//!
//! All of it is off the hot path when unused: a connection checks two atomics per frame and
//! decodes nothing unless a fault rule exists or a session is frozen.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use parking_lot::Mutex;
use shepherd_protocol::{ErrorCode, OpCode};
use tokio::sync::{Notify, watch};

use crate::core::{SessionId, peek};

/// What a matching request suffers. See [`FaultRule`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Apply the request, then drop its reply and everything after it for that connection, and
    /// close the connection: the server did it, the client never hears (the lost-create case).
    /// Notifications the request itself triggered for this connection, which precede its reply
    /// (§9.6), are still sent.
    ApplyThenDrop,
    /// Close the connection without applying the request. Replies already queued before it are
    /// flushed first.
    DropBeforeApply,
    /// Apply the request at once, but hold its reply back for this long (on tokio's clock, so
    /// virtual time applies). Later frames for the connection, replies and notifications alike,
    /// stay queued behind it; requests keep being read and applied meanwhile.
    Delay(Duration),
    /// Do not apply the request: reply with this error code, header only, with the current
    /// zxid (no zxid is taken, even for a write). The session is touched as by any request.
    Reject(ErrorCode),
}

/// How many times a rule fires before it goes quiet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultTimes {
    /// Once (the default).
    Once,
    /// This many times.
    Times(u64),
    /// On every matching request.
    Always,
}

/// A fault and the requests it applies to: every filter given must match.
///
/// * `session`: requests on that session's connections;
/// * `opcode`: requests with that opcode; [`OpCode::Create`] matches the whole create family
///   (create, create2, createContainer, createTTL), every other opcode only itself;
/// * `path_prefix`: requests naming a path that starts with it (a plain string prefix); a multi
///   or multiRead matches when any sub-op does; requests without a path (ping, auth,
///   setWatches, …) never match a rule with a prefix.
///
/// Pings match only a rule whose opcode is [`OpCode::Ping`], so that a rule without an opcode
/// filter is about real requests. Handshakes (ConnectRequest) never match: use
/// [`crate::ServerHandle::freeze_session`] or [`crate::ServerHandle::close_connection`] to act
/// on connections. When several rules match, the one added first fires.
///
/// ```
/// use shepherd_protocol::OpCode;
/// use shepherd_server::{Fault, FaultRule};
///
/// let rule = FaultRule::new(Fault::ApplyThenDrop)
///     .opcode(OpCode::Create)
///     .path_prefix("/locks")
///     .times(1);
/// # let _ = rule;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultRule {
    fault: Fault,
    session: Option<SessionId>,
    opcode: Option<OpCode>,
    path_prefix: Option<String>,
    times: FaultTimes,
}

impl FaultRule {
    /// A rule that fires once, on any request (pings excepted).
    pub fn new(fault: Fault) -> FaultRule {
        FaultRule {
            fault,
            session: None,
            opcode: None,
            path_prefix: None,
            times: FaultTimes::Once,
        }
    }

    /// Only requests of this session.
    pub fn session(mut self, session: SessionId) -> Self {
        self.session = Some(session);
        self
    }

    /// Only requests with this opcode ([`OpCode::Create`]: any create).
    pub fn opcode(mut self, op: OpCode) -> Self {
        self.opcode = Some(op);
        self
    }

    /// Only requests naming a path with this prefix.
    pub fn path_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.path_prefix = Some(prefix.into());
        self
    }

    /// Fire once (the default).
    pub fn once(mut self) -> Self {
        self.times = FaultTimes::Once;
        self
    }

    /// Fire `n` times.
    pub fn times(mut self, n: u64) -> Self {
        self.times = FaultTimes::Times(n);
        self
    }

    /// Fire on every matching request until removed.
    pub fn always(mut self) -> Self {
        self.times = FaultTimes::Always;
        self
    }

    fn can_fire(&self, fired: u64) -> bool {
        match self.times {
            FaultTimes::Once => fired == 0,
            FaultTimes::Times(n) => fired < n,
            FaultTimes::Always => true,
        }
    }

    fn matches(&self, session: Option<SessionId>, payload: &[u8]) -> bool {
        if self.session.is_some() && self.session != session {
            return false;
        }
        let Some(peek) = peek(payload) else {
            return false;
        };
        let op_matches = match (self.opcode, peek.op) {
            (Some(OpCode::Create), Some(op)) => matches!(
                op,
                OpCode::Create | OpCode::Create2 | OpCode::CreateContainer | OpCode::CreateTTL
            ),
            (Some(want), op) => Some(want) == op,
            (None, op) => op != Some(OpCode::Ping),
        };
        op_matches
            && self
                .path_prefix
                .as_deref()
                .is_none_or(|prefix| peek.paths.iter().any(|p| p.starts_with(prefix)))
    }
}

/// Names a rule added with [`crate::ServerHandle::add_fault`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FaultId(u64);

/// Why a harness control could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HarnessError {
    /// The server does not know this session (never existed, closed or expired).
    #[error("no session 0x{0:x}")]
    UnknownSession(SessionId),
    /// The session exists but has no connection right now.
    #[error("session 0x{0:x} has no connection")]
    NotConnected(SessionId),
    /// No node at this path.
    #[error("no node {0}")]
    NoNode(String),
}

struct RuleState {
    id: FaultId,
    rule: FaultRule,
    fired: watch::Sender<u64>,
}

/// The harness state of one server.
pub(crate) struct Harness {
    rules: Mutex<Vec<RuleState>>,
    next_fault: AtomicU64,
    rules_present: AtomicBool,
    frozen: Mutex<HashSet<SessionId>>,
    frozen_present: AtomicBool,
    /// Bumped on every freeze and thaw; connection tasks re-check when it moves.
    freeze_generation: watch::Sender<u64>,
    /// Notified (all waiters) after every change of the core.
    pub(crate) changed: Notify,
}

impl Harness {
    pub(crate) fn new() -> Harness {
        Harness {
            rules: Mutex::new(Vec::new()),
            next_fault: AtomicU64::new(1),
            rules_present: AtomicBool::new(false),
            frozen: Mutex::new(HashSet::new()),
            frozen_present: AtomicBool::new(false),
            freeze_generation: watch::Sender::new(0),
            changed: Notify::new(),
        }
    }

    pub(crate) fn add_fault(&self, rule: FaultRule) -> FaultId {
        let id = FaultId(self.next_fault.fetch_add(1, Relaxed));
        let mut rules = self.rules.lock();
        rules.push(RuleState {
            id,
            rule,
            fired: watch::Sender::new(0),
        });
        self.rules_present.store(true, Relaxed);
        id
    }

    pub(crate) fn remove_fault(&self, id: FaultId) -> bool {
        let mut rules = self.rules.lock();
        let before = rules.len();
        rules.retain(|r| r.id != id);
        self.rules_present.store(!rules.is_empty(), Relaxed);
        rules.len() != before
    }

    pub(crate) fn clear_faults(&self) {
        self.rules.lock().clear();
        self.rules_present.store(false, Relaxed);
    }

    pub(crate) fn fired_count(&self, id: FaultId) -> Option<u64> {
        let rules = self.rules.lock();
        rules.iter().find(|r| r.id == id).map(|r| *r.fired.borrow())
    }

    pub(crate) fn fired_watch(&self, id: FaultId) -> Option<watch::Receiver<u64>> {
        let rules = self.rules.lock();
        rules
            .iter()
            .find(|r| r.id == id)
            .map(|r| r.fired.subscribe())
    }

    /// The fault of the first live rule that matches this request, counted as fired.
    pub(crate) fn match_fault(&self, session: Option<SessionId>, payload: &[u8]) -> Option<Fault> {
        if !self.rules_present.load(Relaxed) {
            return None;
        }
        let rules = self.rules.lock();
        let rule = rules
            .iter()
            .find(|r| r.rule.can_fire(*r.fired.borrow()) && r.rule.matches(session, payload))?;
        rule.fired.send_modify(|n| *n += 1);
        Some(rule.rule.fault.clone())
    }

    pub(crate) fn freeze(&self, session: SessionId) {
        let mut frozen = self.frozen.lock();
        frozen.insert(session);
        self.frozen_present.store(true, Relaxed);
        self.freeze_generation.send_modify(|g| *g += 1);
    }

    pub(crate) fn thaw(&self, session: SessionId) -> bool {
        let mut frozen = self.frozen.lock();
        let was = frozen.remove(&session);
        self.frozen_present.store(!frozen.is_empty(), Relaxed);
        self.freeze_generation.send_modify(|g| *g += 1);
        was
    }

    /// Cheap: false whenever no session is frozen.
    /// Whether any fault rule is registered; lets the request path skip the session lookup.
    pub(crate) fn any_faults(&self) -> bool {
        self.rules_present.load(Relaxed)
    }

    pub(crate) fn any_frozen(&self) -> bool {
        self.frozen_present.load(Relaxed)
    }

    pub(crate) fn is_frozen(&self, session: SessionId) -> bool {
        self.any_frozen() && self.frozen.lock().contains(&session)
    }

    pub(crate) fn freeze_watch(&self) -> watch::Receiver<u64> {
        self.freeze_generation.subscribe()
    }
}
