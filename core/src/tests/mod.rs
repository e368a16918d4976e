//! Scenario tests of the core, driven through real request bytes: requests are built with
//! `encode_request` and replies read back with `decode_reply`, with time passed by hand.

mod acl_auth;
mod basics;
mod controls;
mod errors;
mod hardening;
mod log;
mod multi;
mod props;
mod reaper;
mod restore;
mod sasl;
mod sessions;
mod tree;
mod watches;

use std::net::{IpAddr, Ipv4Addr};

use shepherd_protocol::{
    Acl, Codec, ConnectRequest, ConnectResponse, CreateRequest, DeleteRequest, EventType, Id,
    OpCode, PathRequest, PathWatchRequest, Reply, ReplyHeader, Request, Response, SetDataRequest,
    Stat, decode_from, decode_reply, encode_request,
};

use super::{Action, ConnId, ConnInfo, Core, CoreConfig, Now, SessionId};

/// The start of every test's clock.
pub(super) const T0: Now = Now {
    mono_ms: 1_000_000,
    wall_ms: 1_700_000_000_000,
};

/// A core plus a hand-driven clock.
pub(super) struct H {
    pub core: Core,
    pub now: Now,
    next_conn: ConnId,
}

/// One connected client.
pub(super) struct Client {
    pub conn: ConnId,
    pub session: SessionId,
    pub passwd: Vec<u8>,
    pub timeout: i32,
    next_xid: i32,
}

/// The actions of one call, with what is needed to decode this request's reply.
pub(super) struct Out {
    pub actions: Vec<Action>,
    conn: ConnId,
    xid: i32,
    op: OpCode,
}

impl Out {
    /// Every payload sent to `conn`, decoded.
    pub fn decoded(&self, conn: ConnId) -> Vec<Reply> {
        self.actions
            .iter()
            .filter_map(|a| match a {
                Action::Send(c, p) if *c == conn => Some(p),
                _ => None,
            })
            .map(|p| {
                let (xid, op) = (self.xid, self.op);
                let want = if op == OpCode::Ping { -2 } else { xid };
                decode_reply(p, |x| (x == want).then_some(op)).expect("decodable reply")
            })
            .collect()
    }

    /// This request's reply (the last non-event payload to its connection).
    pub fn reply(&self) -> Reply {
        self.decoded(self.conn)
            .into_iter()
            .rfind(|r| !matches!(r, Reply::Event(..)))
            .expect("a reply")
    }

    pub fn header(&self) -> ReplyHeader {
        match self.reply() {
            Reply::Ok(h, _) | Reply::Err(h) | Reply::Event(h, _) => h,
        }
    }

    pub fn err(&self) -> i32 {
        self.header().err
    }

    pub fn zxid(&self) -> i64 {
        self.header().zxid
    }

    /// The success body; panics on an error reply.
    pub fn ok(&self) -> Response {
        match self.reply() {
            Reply::Ok(_, body) => body,
            other => panic!("expected success, got {other:?}"),
        }
    }

    pub fn stat(&self) -> Stat {
        match self.ok() {
            Response::Exists(s) | Response::SetData(s) | Response::SetACL(s) => s.stat,
            Response::GetData(d) => d.stat,
            Response::Create2(c) | Response::CreateContainer(c) | Response::CreateTTL(c) => c.stat,
            Response::GetChildren2(c) => c.stat,
            Response::GetACL(a) => a.stat,
            other => panic!("no stat in {other:?}"),
        }
    }

    /// The notifications sent to `conn`, in order.
    pub fn events(&self, conn: ConnId) -> Vec<(EventType, String)> {
        self.decoded(conn)
            .into_iter()
            .filter_map(|r| match r {
                Reply::Event(h, e) => {
                    assert_eq!(h.zxid, -1, "3.8 notifications carry zxid -1");
                    Some((e.event_type, e.path))
                }
                _ => None,
            })
            .collect()
    }

    pub fn closed(&self, conn: ConnId) -> bool {
        self.actions.contains(&Action::Close(conn))
    }
}

/// Every notification in a list of actions, as (conn, type, path).
pub(super) fn all_events(actions: &[Action]) -> Vec<(ConnId, EventType, String)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send(c, p) => match decode_reply(p, |_| None) {
                Ok(Reply::Event(_, e)) => Some((*c, e.event_type, e.path)),
                _ => None,
            },
            Action::Close(_) => None,
        })
        .collect()
}

impl H {
    /// A core with TTL nodes enabled (`zookeeper.extendedTypesEnabled=true`), as the real
    /// ZooKeeper the tests are checked against runs; [`CoreConfig::default`] has them off.
    pub fn new() -> H {
        H::with(CoreConfig {
            extended_types_enabled: true,
            ..CoreConfig::default()
        })
    }

    pub fn with(config: CoreConfig) -> H {
        H {
            core: Core::new(config, T0),
            now: T0,
            next_conn: 1,
        }
    }

    pub fn advance(&mut self, ms: u64) {
        self.now.mono_ms += ms;
        self.now.wall_ms += ms as i64;
    }

    pub fn tick(&mut self) -> Vec<Action> {
        self.core.tick(self.now)
    }

    pub fn open(&mut self) -> ConnId {
        let conn = self.next_conn;
        self.next_conn += 1;
        self.core.open_connection(
            conn,
            ConnInfo {
                addr: IpAddr::V4(Ipv4Addr::LOCALHOST),
                member: 1,
            },
        );
        conn
    }

    /// Sends a ConnectRequest on a fresh connection and decodes the response.
    pub fn handshake(
        &mut self,
        req: &ConnectRequest,
    ) -> (ConnId, Vec<Action>, Option<ConnectResponse>) {
        let conn = self.open();
        let actions = self.core.connect(conn, &req.to_bytes(), self.now);
        let response = actions.iter().find_map(|a| match a {
            Action::Send(c, p) if *c == conn => {
                Some(decode_from::<ConnectResponse>(p).expect("response"))
            }
            _ => None,
        });
        (conn, actions, response)
    }

    pub fn connect(&mut self) -> Client {
        self.connect_with(30_000)
    }

    pub fn connect_with(&mut self, timeout: i32) -> Client {
        let req = ConnectRequest {
            timeout,
            passwd: Some(vec![0; 16]),
            read_only: Some(false),
            ..Default::default()
        };
        let (conn, _, response) = self.handshake(&req);
        let r = response.expect("a new session");
        Client {
            conn,
            session: r.session_id,
            passwd: r.passwd.unwrap(),
            timeout: r.timeout,
            next_xid: 1,
        }
    }

    /// Sends one request on the client's connection.
    pub fn send(&mut self, c: &mut Client, request: Request) -> Out {
        let xid = c.next_xid;
        c.next_xid += 1;
        let op = request.op_code();
        let mut payload = Vec::new();
        encode_request(xid, &request, &mut payload);
        let actions = self.core.request(c.conn, &payload, self.now);
        Out {
            actions,
            conn: c.conn,
            xid,
            op,
        }
    }

    /// Sends raw bytes (header included) on a connection.
    pub fn raw(&mut self, conn: ConnId, payload: &[u8]) -> Vec<Action> {
        self.core.request(conn, payload, self.now)
    }
}

pub(super) fn open_acl() -> Vec<Acl> {
    Acl::open_unsafe()
}

pub(super) fn create_req(path: &str, data: Option<&[u8]>, flags: i32) -> CreateRequest {
    CreateRequest {
        path: path.into(),
        data: data.map(<[u8]>::to_vec),
        acl: open_acl(),
        flags,
    }
}

pub(super) fn create(path: &str, data: &[u8]) -> Request {
    Request::Create(create_req(path, Some(data), 0))
}

pub(super) fn create_flags(path: &str, flags: i32) -> Request {
    Request::Create(create_req(path, Some(b""), flags))
}

pub(super) fn create_acl(path: &str, acl: Vec<Acl>) -> Request {
    Request::Create(CreateRequest {
        path: path.into(),
        data: Some(vec![]),
        acl,
        flags: 0,
    })
}

pub(super) fn delete(path: &str, version: i32) -> Request {
    Request::Delete(DeleteRequest {
        path: path.into(),
        version,
    })
}

pub(super) fn set_data(path: &str, data: &[u8], version: i32) -> Request {
    Request::SetData(SetDataRequest {
        path: path.into(),
        data: Some(data.to_vec()),
        version,
    })
}

pub(super) fn exists(path: &str, watch: bool) -> Request {
    Request::Exists(PathWatchRequest {
        path: path.into(),
        watch,
    })
}

pub(super) fn get_data(path: &str, watch: bool) -> Request {
    Request::GetData(PathWatchRequest {
        path: path.into(),
        watch,
    })
}

pub(super) fn get_children(path: &str, watch: bool) -> Request {
    Request::GetChildren(PathWatchRequest {
        path: path.into(),
        watch,
    })
}

pub(super) fn get_acl(path: &str) -> Request {
    Request::GetACL(PathRequest { path: path.into() })
}

pub(super) fn digest_acl(perms: i32, credential: &str) -> Acl {
    Acl {
        perms,
        id: Id::new("digest", super::acl::digest_identity(credential.as_bytes())),
    }
}
