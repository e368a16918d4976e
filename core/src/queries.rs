//! The core's queries: read-only accessors for the shell's four-letter words and admin
//! endpoints, and for tests.
//!
//! Invariants: nothing here mutates the core or takes a zxid, so a query may be asked between
//! any two inputs without changing what the next input does.

use super::views::{SessionInfo, WatchInfo, WatchKind};
use super::{ConnId, Core, CoreConfig, CoreMetrics, NotificationCounts, SessionId};

/// # Queries
///
/// What the server looks like now: its configuration and zxid, the tree's size, sessions,
/// watches and the watch metrics.
impl Core {
    /// The configuration the core runs with.
    pub fn config(&self) -> &CoreConfig {
        &self.config
    }

    /// The last zxid handed out.
    pub fn last_zxid(&self) -> i64 {
        self.zxid
    }

    /// The monotonic ms at which tick() next has work (earliest session bucket, or the
    /// reaper's next run while there is a container or TTL node), if any. An input may move it
    /// earlier (a new session, a first container or TTL node), so a shell sleeping until it
    /// must read it again after each input.
    pub fn next_deadline(&self) -> Option<u64> {
        [self.sessions.next_expiry(), self.reaper_deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Real nodes, `/` included (4 on a fresh server; the `srvr` count adds ZooKeeper's alias).
    pub fn node_count(&self) -> usize {
        self.tree.len()
    }

    /// Sum of path lengths and data lengths, as ZooKeeper's `approximateDataSize`.
    pub fn approximate_data_size(&self) -> u64 {
        self.tree.data_size()
    }

    /// Number of ephemeral nodes.
    pub fn ephemerals_count(&self) -> usize {
        self.tree.ephemerals_count()
    }

    /// How many sessions are live, without copying them (for gauges polled under the lock).
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// Every live session, by id.
    pub fn sessions(&self) -> Vec<SessionInfo> {
        self.sessions
            .iter()
            .map(|(&id, s)| SessionInfo {
                id,
                timeout_ms: s.timeout_ms,
                expires_at_ms: s.expires_at,
                conn: s.conn,
                ephemerals: self.tree.ephemerals_of(id).cloned().collect(),
                watches: s.conn.map(|conn| self.watches_of(conn)).unwrap_or_default(),
            })
            .collect()
    }

    /// The session a connection is bound to.
    pub fn connection_session(&self, conn: ConnId) -> Option<SessionId> {
        self.conns.get(&conn).and_then(|c| c.session)
    }

    /// The connection a live session is bound to, if any.
    pub fn session_connection(&self, session: SessionId) -> Option<ConnId> {
        self.sessions.get(session).and_then(|s| s.conn)
    }

    /// A live session's negotiated timeout, ms.
    pub fn session_timeout(&self, session: SessionId) -> Option<i32> {
        self.sessions.get(session).map(|s| s.timeout_ms)
    }

    /// Data-table watches (data, exist, persistent, recursive) as (conn, session, path), sorted
    /// — for wchs/wchc/wchp (docs/protocol.md §14.3).
    pub fn data_watches(&self) -> Vec<(ConnId, SessionId, String)> {
        let mut all: Vec<_> = self
            .data_watches
            .entries()
            .map(|(conn, path, _)| {
                (
                    conn,
                    self.connection_session(conn).unwrap_or(0),
                    path.to_string(),
                )
            })
            .collect();
        all.sort();
        all
    }

    /// All watches in both tables (mntr zk_watch_count).
    pub fn watch_count(&self) -> usize {
        self.data_watches.count() + self.child_watches.count()
    }

    /// Notification counters.
    pub fn metrics(&self) -> &CoreMetrics {
        &self.metrics
    }

    /// Notifications delivered so far, by type and by session.
    pub fn notification_counts(&self) -> NotificationCounts {
        let m = &self.metrics;
        NotificationCounts {
            node_created: m.node_created_watch_count,
            node_deleted: m.node_deleted_watch_count,
            node_data_changed: m.node_changed_watch_count,
            node_children_changed: m.node_children_watch_count,
            per_session: m.session_notifications.clone(),
        }
    }

    /// One connection's watches, both tables, sorted.
    fn watches_of(&self, conn: ConnId) -> Vec<WatchInfo> {
        let session = self.connection_session(conn);
        let mut all: Vec<WatchInfo> = [
            (WatchKind::Data, &self.data_watches),
            (WatchKind::Child, &self.child_watches),
        ]
        .into_iter()
        .flat_map(|(kind, table)| {
            table.of_conn(conn).map(move |(path, mode)| WatchInfo {
                path: path.to_string(),
                kind,
                mode: mode.into(),
                session,
                conn,
            })
        })
        .collect();
        all.sort();
        all
    }
}
