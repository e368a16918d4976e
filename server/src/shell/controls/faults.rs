//! Fault rules: which requests suffer what. The connection's task carries a fault out
//! (`net/conn/faulted.rs`).
//!
//! A rule is matched per request, on the connection's task, before the core sees the request;
//! the first live rule that matches fires (its count goes up, waking `fault_fired`) and its
//! [`Fault`] is applied by `apply_fault` in place of the plain request. A fault is applied
//! under the core lock and its outcome routed before the lock is released, as for any request,
//! so a faulted reply keeps its place in the core's single total order.
//!
//! Off the hot path when unused: with no rule registered a connection checks one atomic per
//! frame and decodes nothing.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use parking_lot::Mutex;
use shepherd_protocol::{ErrorCode, OpCode};
use tokio::sync::watch;

use crate::core::{SessionId, peek};

/// What a matching request suffers. See [`FaultRule`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Apply the request, then drop its reply and everything after it for that connection, and
    /// close the connection: the server did it, the client never hears (the lost-create case).
    /// Notifications the request itself triggered for this connection, which precede its reply
    /// (docs/protocol.md §9.6), are still sent.
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
    /// Test only, a broken server on purpose: answer a setData with success and the node's
    /// current stat, without applying it (a write acknowledged and then lost). Other requests
    /// are applied as usual. For testing that a history checker catches it; never set by the
    /// HTTP test controls.
    #[doc(hidden)]
    AckBeforeApply,
    /// Test only, a broken server on purpose: getData answers, for each path, the first
    /// successful answer it gave under this rule, whatever has been written since (a stale
    /// read). For testing that a history checker catches it; never set by the HTTP controls.
    #[doc(hidden)]
    StaleRead(StaleReads),
    /// Test only, a broken server on purpose: getChildren (and getChildren2) leave out the
    /// child with the lowest sequence suffix when it is an ephemeral of another session, so
    /// that a contender of a sequential lock never sees the holder's node and takes the lock
    /// while the holder holds (a lock granted twice). For testing that a history checker
    /// catches it; never set by the HTTP controls.
    #[doc(hidden)]
    HideLowestChild,
}

impl Fault {
    /// [`Fault::StaleRead`] with a fresh memory of first answers.
    #[doc(hidden)]
    pub fn stale_read() -> Fault {
        Fault::StaleRead(StaleReads::default())
    }
}

/// The first getData answer body per path, kept by a [`Fault::StaleRead`] rule and shared by
/// its clones. Two are equal only when they are the same memory.
#[doc(hidden)]
#[derive(Clone, Default)]
pub struct StaleReads(std::sync::Arc<Mutex<std::collections::HashMap<String, Vec<u8>>>>);

impl StaleReads {
    /// The body to answer for `path`: the first one remembered, `fresh` on the first call.
    pub(crate) fn answer(&self, path: &str, fresh: &[u8]) -> Vec<u8> {
        self.0
            .lock()
            .entry(path.to_owned())
            .or_insert_with(|| fresh.to_vec())
            .clone()
    }
}

impl std::fmt::Debug for StaleReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StaleReads({} paths)", self.0.lock().len())
    }
}

impl PartialEq for StaleReads {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for StaleReads {}

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
/// [`crate::Controls::freeze_session`] or [`crate::Controls::close_connection`] to act
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

    /// The rule's parts, for listing it (the test controls' `GET /faults`): the fault, then the
    /// session, opcode and path-prefix filters, then how many times it fires.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn parts(
        &self,
    ) -> (
        &Fault,
        Option<SessionId>,
        Option<OpCode>,
        Option<&str>,
        FaultTimes,
    ) {
        (
            &self.fault,
            self.session,
            self.opcode,
            self.path_prefix.as_deref(),
            self.times,
        )
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

/// Names a rule added with [`crate::Controls::add_fault`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FaultId(u64);

impl FaultId {
    /// The rule's number, unique within its server (the test controls name rules by it).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn number(self) -> u64 {
        self.0
    }

    /// The id numbered `n`; it names a rule only if [`FaultId::number`] gave `n`.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn from_number(n: u64) -> FaultId {
        FaultId(n)
    }
}

struct RuleState {
    id: FaultId,
    rule: FaultRule,
    fired: watch::Sender<u64>,
}

/// The fault rules of one server, in the order they were added.
pub(crate) struct FaultRules {
    rules: Mutex<Vec<RuleState>>,
    next_fault: AtomicU64,
    /// Whether `rules` is non-empty, readable without the lock.
    rules_present: AtomicBool,
}

impl FaultRules {
    pub(crate) fn new() -> FaultRules {
        FaultRules {
            rules: Mutex::new(Vec::new()),
            next_fault: AtomicU64::new(1),
            rules_present: AtomicBool::new(false),
        }
    }

    pub(crate) fn add(&self, rule: FaultRule) -> FaultId {
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

    pub(crate) fn remove(&self, id: FaultId) -> bool {
        let mut rules = self.rules.lock();
        let before = rules.len();
        rules.retain(|r| r.id != id);
        self.rules_present.store(!rules.is_empty(), Relaxed);
        rules.len() != before
    }

    pub(crate) fn clear(&self) {
        self.rules.lock().clear();
        self.rules_present.store(false, Relaxed);
    }

    pub(crate) fn fired_count(&self, id: FaultId) -> Option<u64> {
        let rules = self.rules.lock();
        rules.iter().find(|r| r.id == id).map(|r| *r.fired.borrow())
    }

    /// Every rule, in the order added, with how many times it has fired.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn list(&self) -> Vec<(FaultId, FaultRule, u64)> {
        let rules = self.rules.lock();
        rules
            .iter()
            .map(|r| (r.id, r.rule.clone(), *r.fired.borrow()))
            .collect()
    }

    pub(crate) fn fired_watch(&self, id: FaultId) -> Option<watch::Receiver<u64>> {
        let rules = self.rules.lock();
        rules
            .iter()
            .find(|r| r.id == id)
            .map(|r| r.fired.subscribe())
    }

    /// Whether any fault rule is registered; lets the request path skip the session lookup.
    pub(crate) fn any(&self) -> bool {
        self.rules_present.load(Relaxed)
    }

    /// The fault of the first live rule that matches this request, counted as fired.
    pub(crate) fn matching(&self, session: Option<SessionId>, payload: &[u8]) -> Option<Fault> {
        if !self.any() {
            return None;
        }
        let rules = self.rules.lock();
        let rule = rules
            .iter()
            .find(|r| r.rule.can_fire(*r.fired.borrow()) && r.rule.matches(session, payload))?;
        rule.fired.send_modify(|n| *n += 1);
        Some(rule.rule.fault.clone())
    }
}
