//! What the core counts about watches, for mntr and for tests: notifications delivered, and
//! ZooKeeper's per-trigger summaries.
//!
//! [`CoreMetrics`] keeps two views that deliberately differ (notifications delivered, after
//! READ-ACL filtering, versus mntr's trigger summaries, before it); its documentation says how.
//! [`NotificationCounts`] is the delivered view by event type and session, for test controls.
//!
//! Invariants: counters only grow, except that a session's own count goes when the session
//! ends (so the map holds live sessions only, and its memory is bounded by theirs); a
//! [`TriggerSummary`]'s `min` and `max` are 0 until its first sample and bound every sample
//! after it.

use std::collections::BTreeMap;

use shepherd_protocol::EventType;

use super::SessionId;

/// ZooKeeper's `AvgMinMaxCounter`: a summary of samples, printed by mntr as
/// `zk_{avg,min,max,cnt,sum}_<name>`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TriggerSummary {
    /// Samples recorded.
    pub count: u64,
    /// Their sum.
    pub sum: u64,
    /// The smallest (0 before any sample).
    pub min: u64,
    /// The largest (0 before any sample).
    pub max: u64,
}

impl TriggerSummary {
    fn record(&mut self, value: u64) {
        self.min = if self.count == 0 {
            value
        } else {
            self.min.min(value)
        };
        self.max = self.max.max(value);
        self.count += 1;
        self.sum += value;
    }

    /// The mean, rounded half-up to 4 decimals as ZooKeeper does (0 before any sample).
    pub fn avg(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        (self.sum as f64 / self.count as f64 * 10_000.0).round() / 10_000.0
    }
}

/// Counters of watch notifications.
///
/// Two views, deliberately different:
/// * the `node_*_watch_count` counters, `session_notifications` and `watch_bytes` count
///   notifications **delivered**: after READ-ACL filtering (docs/protocol.md §9.9), one per connection per
///   trigger, setWatches catch-up events included;
/// * the `*_triggers` summaries are ZooKeeper's mntr `*_watch_count` metrics: one sample per
///   trigger of a watch table that matched at least one watcher, valued at the number matched,
///   before ACL filtering (a NodeDeleted samples the data table and the child table separately,
///   even when the same connection is in both). Catch-up events are not triggers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CoreMetrics {
    /// NodeCreated notifications sent.
    pub node_created_watch_count: u64,
    /// NodeDeleted notifications sent.
    pub node_deleted_watch_count: u64,
    /// NodeDataChanged notifications sent.
    pub node_changed_watch_count: u64,
    /// NodeChildrenChanged notifications sent.
    pub node_children_watch_count: u64,
    /// Notifications sent per live session (by the session of the receiving connection);
    /// a session's entry goes when it ends.
    pub session_notifications: BTreeMap<SessionId, u64>,
    /// Bytes of notification payloads sent (mntr `zk_watch_bytes`; frame prefix excluded).
    pub watch_bytes: u64,
    /// NodeCreated triggers (mntr `node_created_watch_count`).
    pub node_created_triggers: TriggerSummary,
    /// NodeDeleted triggers (mntr `node_deleted_watch_count`).
    pub node_deleted_triggers: TriggerSummary,
    /// NodeDataChanged triggers (mntr `node_changed_watch_count`).
    pub node_changed_triggers: TriggerSummary,
    /// NodeChildrenChanged triggers (mntr `node_children_watch_count`).
    pub node_children_triggers: TriggerSummary,
}

impl CoreMetrics {
    /// All notifications sent.
    pub fn notifications_total(&self) -> u64 {
        self.node_created_watch_count
            + self.node_deleted_watch_count
            + self.node_changed_watch_count
            + self.node_children_watch_count
    }

    /// Counts one notification sent to a connection of `session` (if it has one).
    pub(super) fn count(&mut self, event: EventType, session: Option<SessionId>, bytes: usize) {
        match event {
            EventType::NodeCreated => self.node_created_watch_count += 1,
            EventType::NodeDeleted => self.node_deleted_watch_count += 1,
            EventType::NodeDataChanged => self.node_changed_watch_count += 1,
            EventType::NodeChildrenChanged => self.node_children_watch_count += 1,
            _ => {}
        }
        self.watch_bytes += bytes as u64;
        if let Some(session) = session {
            *self.session_notifications.entry(session).or_default() += 1;
        }
    }

    /// Forgets an ended session's notification count, so that the per-session map does not
    /// grow with every session the server ever had.
    pub(super) fn forget_session(&mut self, session: SessionId) {
        self.session_notifications.remove(&session);
    }

    /// Samples one trigger that matched `matched` watchers.
    pub(super) fn record_trigger(&mut self, event: EventType, matched: u64) {
        let summary = match event {
            EventType::NodeCreated => &mut self.node_created_triggers,
            EventType::NodeDeleted => &mut self.node_deleted_triggers,
            EventType::NodeDataChanged => &mut self.node_changed_triggers,
            EventType::NodeChildrenChanged => &mut self.node_children_triggers,
            _ => return,
        };
        summary.record(matched);
    }
}

/// Watch notifications delivered (after READ-ACL filtering, one per connection per trigger,
/// setWatches catch-up events included), by event type and by receiving session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotificationCounts {
    /// NodeCreated.
    pub node_created: u64,
    /// NodeDeleted.
    pub node_deleted: u64,
    /// NodeDataChanged.
    pub node_data_changed: u64,
    /// NodeChildrenChanged.
    pub node_children_changed: u64,
    /// Per receiving session.
    pub per_session: BTreeMap<SessionId, u64>,
}

impl NotificationCounts {
    /// Every notification delivered.
    pub fn total(&self) -> u64 {
        self.node_created + self.node_deleted + self.node_data_changed + self.node_children_changed
    }

    /// The count for one event type (0 for the session-state types, which are never counted).
    pub fn of(&self, event: EventType) -> u64 {
        match event {
            EventType::NodeCreated => self.node_created,
            EventType::NodeDeleted => self.node_deleted,
            EventType::NodeDataChanged => self.node_data_changed,
            EventType::NodeChildrenChanged => self.node_children_changed,
            _ => 0,
        }
    }

    /// The count for one session (0 if it never received one).
    pub fn session(&self, session: SessionId) -> u64 {
        self.per_session.get(&session).copied().unwrap_or(0)
    }
}
