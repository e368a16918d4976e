//! The core's test controls: what a test or fault harness does to the core beyond ordinary
//! inputs, and the full dumps it checks against.
//!
//! Invariants: nothing here changes the semantics of a request. The setters move one counter
//! each (the last zxid, a node's create counter) and touch nothing else, so a test can reach
//! an edge case (a lastZxidSeen refusal, a sequence near the 32-bit limit) without a long run;
//! `reply_error` answers a request without applying it and only touches the session, as any
//! request would; the dumps are read-only.

use shepherd_protocol::ErrorCode;

use super::dispatch::reply;
use super::views::{NodeInfo, WatchInfo, WatchKind};
use super::{Action, ConnId, Core, Now};

/// # Test controls
///
/// Reaching states that would take a long run to reach, rejecting a request as a fault rule
/// says, and dumping the whole tree or every watch.
impl Core {
    /// Sets the last zxid (test controls: e.g. to exercise the lastZxidSeen refusal).
    pub fn set_last_zxid(&mut self, zxid: i64) {
        self.zxid = zxid;
    }

    /// Restarts every session's timeout from `now`, as a server restart does: each expires a
    /// full timeout later unless its client comes back first.
    pub fn rearm_sessions(&mut self, now: Now) {
        let ids: Vec<_> = self.sessions.iter().map(|(id, _)| *id).collect();
        for id in ids {
            self.sessions.touch(id, now.mono_ms);
        }
    }

    /// Writes an ensemble's membership into `/zookeeper/config` at start, as a replicated
    /// ZooKeeper 3.8 does (`ZKDatabase.initConfigInZKDatabase`): no txn and no watch event,
    /// data version -1, mzxid the configuration's version (0 for a static one), mtime `now`.
    pub fn set_config_node(&mut self, data: Vec<u8>, now: Now) {
        self.tree
            .replace_data("/zookeeper/config", Some(data), (-1, 0, now.wall_ms));
    }

    /// Sets a node's create counter C, which names its next sequential child (docs/protocol.md §8.1) and shows
    /// in its cversion. False if the node does not exist.
    pub fn set_sequence_counter(&mut self, path: &str, value: i32) -> bool {
        self.tree.update(path, |n| n.creates = value)
    }

    /// Every node with its Stat, sorted by path (`/zookeeper` and its children included).
    pub fn dump_tree(&self) -> Vec<NodeInfo> {
        let mut nodes: Vec<NodeInfo> = Vec::with_capacity(self.tree.len());
        self.tree.walk(|path, _, node| {
            nodes.push(NodeInfo {
                path: path.to_string(),
                stat: node.stat(),
                data_len: node.data().map_or(0, <[u8]>::len),
            });
        });
        nodes.sort_by(|a, b| a.path.cmp(&b.path));
        nodes
    }

    /// Both watch tables, every registration, sorted by path, table, mode, session.
    pub fn dump_watches(&self) -> Vec<WatchInfo> {
        let mut all: Vec<WatchInfo> = [
            (WatchKind::Data, &self.data_watches),
            (WatchKind::Child, &self.child_watches),
        ]
        .into_iter()
        .flat_map(|(kind, table)| {
            table.entries().map(move |(conn, path, mode)| WatchInfo {
                path: path.to_string(),
                kind,
                mode: mode.into(),
                session: self.connection_session(conn),
                conn,
            })
        })
        .collect();
        all.sort();
        all
    }

    /// Answers a request with `err` without applying it (a fault harness's rejection): the
    /// header alone, with the request's xid and the current zxid, none taken. The session is
    /// touched as by any request. Like [`Core::request`], a request on a session that is gone
    /// gets nothing, and an undecodable header closes the connection.
    pub fn reply_error(
        &mut self,
        conn: ConnId,
        payload: &[u8],
        err: ErrorCode,
        now: Now,
    ) -> Vec<Action> {
        let (header, _, session) = match self.admit(conn, payload) {
            Ok(admitted) => admitted,
            Err(actions) => return actions,
        };
        self.sessions.touch(session, now.mono_ms);
        vec![Action::Send(conn, reply(header.xid, self.zxid, err, None))]
    }
}
