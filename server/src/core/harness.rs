//! What test harnesses read from and do to the core: sessions with their watches, the tree with
//! its stats, the watch tables, notification counts, a peek at a request's opcode and paths (for
//! fault rules), and the error reply a rejected request gets.
//!
//! Nothing here changes the semantics of a request; `reply_error` is the one mutation, and it
//! only touches the session, as any request would.

use shepherd_protocol::{Codec, ErrorCode, OpCode, Request, RequestHeader, Stat, decode_request};

use super::dispatch::reply;
use super::watch::Mode;
use super::{Action, ConnId, Core, NotificationCounts, Now, SessionId};

/// Which watch manager a registration is in (ZooKeeper keeps two, §9).
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

/// One znode, as [`Core::dump_tree`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    /// The absolute path.
    pub path: String,
    /// Its Stat, exactly as a client would read it.
    pub stat: Stat,
    /// Its data length in bytes (0 for null data).
    pub data_len: usize,
}

/// What a request payload is, without applying it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestPeek {
    /// The request's xid.
    pub xid: i32,
    /// The opcode, if known.
    pub op: Option<OpCode>,
    /// The paths it names: one for most ops, every sub-op's for multi and multiRead, none for
    /// ping, auth, setWatches and the like, or when the body does not decode.
    pub paths: Vec<String>,
}

/// Decodes a request payload's header and the paths it names. `None` when not even the header
/// decodes (the core would close the connection).
pub fn peek(payload: &[u8]) -> Option<RequestPeek> {
    let (header, body) = decode_request(payload).ok()?;
    let paths = match body {
        Ok(request) => request_paths(request),
        Err(_) => Vec::new(),
    };
    Some(RequestPeek {
        xid: header.xid,
        op: OpCode::try_from(header.op_type).ok(),
        paths,
    })
}

fn request_paths(request: Request) -> Vec<String> {
    let one = match request {
        Request::Create(r) | Request::Create2(r) | Request::CreateContainer(r) => r.path,
        Request::CreateTTL(r) => r.path,
        Request::Delete(r) => r.path,
        Request::Exists(r)
        | Request::GetData(r)
        | Request::GetChildren(r)
        | Request::GetChildren2(r) => r.path,
        Request::SetData(r) => r.path,
        Request::GetACL(r)
        | Request::Sync(r)
        | Request::GetAllChildrenNumber(r)
        | Request::GetEphemerals(r) => r.path,
        Request::SetACL(r) => r.path,
        Request::Check(r) => r.path,
        Request::CheckWatches(r) | Request::RemoveWatches(r) => r.path,
        Request::AddWatch(r) => r.path,
        Request::Multi(m) | Request::MultiRead(m) => {
            return m.ops.iter().map(|op| op.path().to_string()).collect();
        }
        _ => return Vec::new(),
    };
    vec![one]
}

impl Core {
    /// Every node with its Stat, sorted by path (`/zookeeper` and its children included).
    pub fn dump_tree(&self) -> Vec<NodeInfo> {
        let mut nodes: Vec<NodeInfo> = self
            .tree
            .iter()
            .map(|(path, node)| NodeInfo {
                path: path.clone(),
                stat: node.stat(),
                data_len: node.data.as_ref().map_or(0, Vec::len),
            })
            .collect();
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

    /// One connection's watches, both tables, sorted.
    pub(crate) fn watches_of(&self, conn: ConnId) -> Vec<WatchInfo> {
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

    /// The connection a live session is bound to, if any.
    pub fn session_connection(&self, session: SessionId) -> Option<ConnId> {
        self.sessions.get(session).and_then(|s| s.conn)
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
        let Ok(header) = RequestHeader::decode(&mut &payload[..]) else {
            self.drop_conn(conn);
            return vec![Action::Close(conn)];
        };
        let Some(session) = self
            .connection_session(conn)
            .filter(|s| self.sessions.get(*s).is_some())
        else {
            return Vec::new();
        };
        self.sessions.touch(session, now.mono_ms);
        vec![Action::Send(conn, reply(header.xid, self.zxid, err, None))]
    }
}
