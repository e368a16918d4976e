//! What the diagnostic words that list state (`wchc`, `wchp`, `dump`, and their AdminServer
//! twins) read from the core, in bounded slices, and the summary `wchs` prints from counters.
//!
//! Listing every watch or session in one read would hold the core lock for as long as the
//! state is large, stalling every client; instead a cursor walks the state a slice at a time,
//! each slice a separate short read, and picks up after the last item it returned. The state
//! may change between slices: the walk then shows each item as it was when its slice was
//! read, as ZooKeeper's own dumps (taken while requests go on) may; a watch removed and set
//! again between two slices may be listed twice.
//!
//! Invariants: one slice costs at most `max` steps (an item returned, or a connection or
//! session passed over) plus one lookup; a cursor never goes back, so a walk ends after at
//! most as many slices as there are items and connections or sessions, over `max`.

use super::watch::PathId;
use super::{ConnId, Core, SessionId};

/// The data-table watch figures `wchs` prints (ZooKeeper's `WatchManager.toString`), read
/// from counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WatchSummary {
    /// Connections with at least one data watch.
    pub connections: usize,
    /// Paths with at least one data watch.
    pub paths: usize,
    /// (connection, path) registrations.
    pub total: usize,
}

/// Where a walk of the data-table watches is: the connections that had watches when it began,
/// by id, and the position within one of them.
#[derive(Debug, Clone)]
pub struct WatchCursor {
    conns: Vec<ConnId>,
    next: usize,
    /// The last path listed of the connection at `next`, by its number in the table.
    after: Option<PathId>,
}

/// Where a walk of the sessions and their ephemerals is.
#[derive(Debug, Clone, Default)]
pub struct SessionCursor {
    /// The last session whose ephemerals are all listed.
    done: Option<SessionId>,
    /// The session being listed and its last ephemeral listed (`None` before the first).
    within: Option<(SessionId, Option<String>)>,
}

/// One session in a [`Core::session_slice`]: its id and expiry bucket (monotonic ms).
pub type SessionRow = (SessionId, u64);

/// # Diagnostics
///
/// Bounded reads for the words that list state; see the module documentation.
impl Core {
    /// The data-table watch figures, from counters.
    pub fn data_watch_summary(&self) -> WatchSummary {
        WatchSummary {
            connections: self.data_watches.conn_count(),
            paths: self.data_watches.path_count(),
            total: self.data_watches.count(),
        }
    }

    /// Starts a walk of the data-table watches. It copies the ids of the connections that
    /// watch something (as many as open connections at most, eight bytes each), nothing more.
    pub fn data_watch_cursor(&self) -> WatchCursor {
        let mut conns: Vec<ConnId> = self.data_watches.conns().collect();
        conns.sort_unstable();
        WatchCursor {
            conns,
            next: 0,
            after: None,
        }
    }

    /// Appends up to `max` data-table watches as (connection, session, path), by connection
    /// then by the paths' numbers in the table (ZooKeeper lists a connection's paths in hash
    /// order), and returns true when the walk is done. A connection's session is 0 before
    /// its handshake; a connection gone since the walk began is passed over.
    pub fn data_watch_slice(
        &self,
        cursor: &mut WatchCursor,
        max: usize,
        out: &mut Vec<(ConnId, SessionId, String)>,
    ) -> bool {
        let max = max.max(1);
        let mut steps = 0;
        while steps < max {
            let Some(&conn) = cursor.conns.get(cursor.next) else {
                return true;
            };
            let want = max - steps;
            let paths = self.data_watches.paths_of_after(conn, cursor.after, want);
            let session = self.connection_session(conn).unwrap_or(0);
            steps += paths.len().max(1);
            if paths.len() < want {
                cursor.next += 1;
                cursor.after = None;
            } else {
                cursor.after = paths.last().map(|(id, _)| *id);
            }
            out.extend(paths.into_iter().map(|(_, p)| (conn, session, p)));
        }
        cursor.next >= cursor.conns.len()
    }

    /// Appends up to `max` steps of the walk of sessions, by id: each session to `sessions`
    /// (with its expiry bucket) followed by its ephemerals to `ephemerals`, in path order.
    /// Returns true when the walk is done.
    pub fn session_slice(
        &self,
        cursor: &mut SessionCursor,
        max: usize,
        sessions: &mut Vec<SessionRow>,
        ephemerals: &mut Vec<(SessionId, String)>,
    ) -> bool {
        let max = max.max(1);
        let mut steps = 0;
        while steps < max {
            let (id, after) = match cursor.within.take() {
                Some(within) => within,
                None => {
                    let Some((&id, session)) = self.sessions.after(cursor.done).next() else {
                        return true;
                    };
                    sessions.push((id, session.expires_at));
                    steps += 1;
                    if steps == max {
                        // Its ephemerals start the next slice.
                        cursor.within = Some((id, None));
                        break;
                    }
                    (id, None)
                }
            };
            let want = max - steps;
            let before = ephemerals.len();
            ephemerals.extend(
                self.tree
                    .ephemerals_after(id, after.as_deref())
                    .take(want)
                    .map(|p| (id, p.clone())),
            );
            let listed = ephemerals.len() - before;
            steps += listed;
            if listed == want {
                cursor.within = ephemerals.last().map(|(_, p)| (id, Some(p.clone())));
            } else {
                cursor.done = Some(id);
            }
        }
        cursor.within.is_none() && self.sessions.after(cursor.done).next().is_none()
    }
}
