//! The read-only views the core hands out about its state: sessions with their watches, watch
//! registrations, and znodes with their stats. They are snapshots, detached from the core, so
//! the shell can print them (four-letter words) or a test can compare them after the fact.
//!
//! Invariants: a view is a copy taken between two inputs and never changes afterwards; a
//! node's [`Stat`] is the one a read would return at that point, and a session's watches are
//! those of its current connection (watches belong to connections, docs/protocol.md §9.7).

use shepherd_protocol::Stat;

use super::watch::Mode;
use super::{ConnId, SessionId};

/// One session, as the four-letter words and test controls see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// The session id.
    pub id: SessionId,
    /// The negotiated timeout, ms.
    pub timeout_ms: i32,
    /// The monotonic ms of the expiry bucket the session is in.
    pub expires_at_ms: u64,
    /// The connection bound to it, if any.
    pub conn: Option<ConnId>,
    /// The paths of its ephemeral nodes, sorted.
    pub ephemerals: Vec<String>,
    /// The watches of its current connection, both tables, sorted (empty while disconnected:
    /// watches belong to connections, docs/protocol.md §9.7).
    pub watches: Vec<WatchInfo>,
}

/// Which watch manager a registration is in (ZooKeeper keeps two, docs/protocol.md §9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WatchKind {
    /// The data table: getData and exists watches, and persistent ones.
    Data,
    /// The child table: getChildren watches, and persistent ones.
    Child,
}

/// How a registration behaves when it fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WatchMode {
    /// One-shot.
    Standard,
    /// addWatch mode 0.
    Persistent,
    /// addWatch mode 1.
    PersistentRecursive,
}

impl From<Mode> for WatchMode {
    fn from(mode: Mode) -> WatchMode {
        match mode {
            Mode::Standard => WatchMode::Standard,
            Mode::Persistent => WatchMode::Persistent,
            Mode::Recursive => WatchMode::PersistentRecursive,
        }
    }
}

/// One watch registration. A persistent watch is registered in both tables, so it appears
/// twice, once per [`WatchKind`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WatchInfo {
    /// The watched path.
    pub path: String,
    /// The table it is in.
    pub kind: WatchKind,
    /// One-shot or persistent.
    pub mode: WatchMode,
    /// The session of the connection, if it has completed its handshake.
    pub session: Option<SessionId>,
    /// The connection that registered it.
    pub conn: ConnId,
}

/// One znode, as [`Core::dump_tree`](super::Core::dump_tree) lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    /// The absolute path.
    pub path: String,
    /// Its Stat, exactly as a client would read it.
    pub stat: Stat,
    /// Its data length in bytes (0 for null data).
    pub data_len: usize,
}
