//! Watch delivery: turning what a committed txn fired into notifications (docs/protocol.md §9.2), routing each
//! to the connections whose watches it triggers (docs/protocol.md §9.3), filtered by the READ ACL of the node
//! (docs/protocol.md §9.9), and counting what was triggered and what was sent.
//!
//! The watch tables themselves (what is registered where, and how a path matches) live in
//! `watch.rs`; this file decides who hears about a change and in which order.
//!
//! Invariants: events are delivered in the order they were fired, each connection at most once
//! per trigger; a NodeDeleted reaches a connection in both tables only once; every receiver of
//! one event gets the same bytes (zxid -1 in the header, docs/protocol.md §9.5); a trigger is sampled in the
//! `*_triggers` summaries before ACL filtering, a notification counted only when sent.

use std::collections::BTreeSet;

use shepherd_protocol::{Acl, EventType, KeeperState, WatcherEvent, encode_event, perms};

use super::txn::Fired;
use super::{Action, ConnId, Core, acl, path};

/// Which watch manager a trigger goes to.
#[derive(Debug, Clone, Copy)]
enum Table {
    Data,
    Child,
}

impl Core {
    /// Delivers the events of a committed txn, in order (docs/protocol.md §9.2), each connection at most once
    /// per trigger (docs/protocol.md §9.3), dropping those the receiver may not READ (§9.9).
    pub(crate) fn deliver(&mut self, fired: Vec<Fired>, out: &mut Vec<Action>) {
        use EventType::{NodeCreated, NodeDeleted};
        for event in fired {
            match event {
                Fired::Created {
                    path,
                    acl,
                    parent_acl,
                } => {
                    let hit = self.trigger(Table::Data, &path, NodeCreated);
                    self.notify(hit, NodeCreated, &path, Some(acl.as_slice()), out);
                    self.parent_changed(&path, &parent_acl, out);
                }
                Fired::Deleted {
                    path,
                    acl,
                    parent_acl,
                } => {
                    let first = self.trigger(Table::Data, &path, NodeDeleted);
                    let second = self.trigger(Table::Child, &path, NodeDeleted);
                    // Child watchers already told by the data trigger are skipped (docs/protocol.md §9.2).
                    let second: Vec<ConnId> = second.difference(&first).copied().collect();
                    self.notify(first, NodeDeleted, &path, Some(acl.as_slice()), out);
                    self.notify(second, NodeDeleted, &path, Some(acl.as_slice()), out);
                    self.parent_changed(&path, &parent_acl, out);
                }
                Fired::DataChanged { path, acl } => {
                    let hit = self.trigger(Table::Data, &path, EventType::NodeDataChanged);
                    self.notify(
                        hit,
                        EventType::NodeDataChanged,
                        &path,
                        Some(acl.as_slice()),
                        out,
                    );
                }
            }
        }
    }

    /// NodeChildrenChanged on the parent of `path`, after a create or delete there.
    fn parent_changed(&mut self, path: &str, parent_acl: &[Acl], out: &mut Vec<Action>) {
        let parent = path::split(path).0;
        let hit = self.trigger(Table::Child, parent, EventType::NodeChildrenChanged);
        self.notify(
            hit,
            EventType::NodeChildrenChanged,
            parent,
            Some(parent_acl),
            out,
        );
    }

    /// Triggers one table and records the trigger in ZooKeeper's `*_watch_count` summaries:
    /// one sample per trigger that matched at least one watcher, valued at the number matched,
    /// before ACL filtering and before the NodeDeleted de-duplication (verified on 3.8).
    fn trigger(&mut self, table: Table, path: &str, event: EventType) -> BTreeSet<ConnId> {
        let hit = match table {
            Table::Data => self.data_watches.trigger(path, event),
            Table::Child => self.child_watches.trigger(path, event),
        };
        if !hit.is_empty() {
            self.metrics.record_trigger(event, hit.len() as u64);
        }
        hit
    }

    /// Sends one notification to each connection; `acl` is the ACL to filter by (None for
    /// setWatches catch-up events, which are not filtered, docs/protocol.md §9.7). Header zxid -1 (3.8, §9.5).
    pub(crate) fn notify(
        &mut self,
        conns: impl IntoIterator<Item = ConnId>,
        event_type: EventType,
        path: &str,
        acl: Option<&[Acl]>,
        out: &mut Vec<Action>,
    ) {
        // Every receiver gets the same bytes: encode them once, not once per watcher.
        let mut encoded: Option<Vec<u8>> = None;
        for conn in conns {
            let Some(c) = self.conns.get(&conn) else {
                continue;
            };
            if let Some(acl) = acl
                && !acl::allows(acl, c.identities.as_slice(), perms::READ)
            {
                continue;
            }
            let payload = encoded
                .get_or_insert_with(|| {
                    let event = WatcherEvent {
                        event_type,
                        state: KeeperState::SyncConnected,
                        path: path.to_string(),
                    };
                    let mut payload = Vec::new();
                    encode_event(-1, &event, &mut payload);
                    payload
                })
                .clone();
            self.metrics.count(event_type, c.session, payload.len());
            out.push(Action::Send(conn, payload));
        }
    }
}
