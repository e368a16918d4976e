//! The driver of a run: the core plus what the shell would know (which connections are open,
//! which had their handshake, every session's password), and how each step is carried out.
//!
//! Invariants: the model only learns what a shell would (actions carried out, connections it
//! closed); every step goes through one of the checked calls in `calls.rs` and ends with the
//! whole-state check of `invariants.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use shepherd_protocol::{Codec, ConnectRequest, Reply, Request, RequestHeader, encode_request};

use super::T0;
use super::steps::{Handshake, LastZxid, Password, Pick, Step};
use crate::{Action, ConnId, ConnInfo, Core, CoreConfig, Now, SessionId, SessionInfo};

/// The driver: the core plus what the shell would know.
pub(super) struct Model {
    pub(super) core: Core,
    pub(super) now: Now,
    pub(super) next_conn: ConnId,
    /// Every connection ever opened, in order.
    pub(super) conns: Vec<ConnId>,
    /// Connections whose socket is open as far as the shell knows.
    pub(super) open: BTreeSet<ConnId>,
    /// Connections that had their handshake (connect is only ever called once per connection).
    pub(super) handshaken: BTreeSet<ConnId>,
    /// Every session ever created, with its password.
    pub(super) passwords: BTreeMap<SessionId, Vec<u8>>,
    pub(super) next_xid: i32,
    /// No time has passed since the last tick, so nothing may be overdue.
    pub(super) ticked: bool,
}

impl Model {
    pub(super) fn new(config: CoreConfig) -> Model {
        Model {
            core: Core::new(config, T0),
            now: T0,
            next_conn: 1,
            conns: Vec::new(),
            open: BTreeSet::new(),
            handshaken: BTreeSet::new(),
            passwords: BTreeMap::new(),
            next_xid: 1,
            ticked: true,
        }
    }

    pub(super) fn run(&mut self, step: Step) {
        match step {
            Step::Open(ip) => {
                self.open_conn(ip);
            }
            Step::Connect {
                pending,
                conn,
                ip,
                handshake,
                timeout,
                read_only,
                last_zxid,
            } => {
                let waiting: Vec<ConnId> =
                    self.open.difference(&self.handshaken).copied().collect();
                let conn = if pending && !waiting.is_empty() {
                    *conn.get(&waiting)
                } else {
                    self.open_conn(ip)
                };
                let zxid = self.core.last_zxid();
                let mut request = ConnectRequest {
                    protocol_version: 0,
                    last_zxid_seen: match last_zxid {
                        LastZxid::Zero => 0,
                        LastZxid::Current => zxid,
                        LastZxid::Ahead => zxid + 1,
                        LastZxid::Max => i64::MAX,
                        LastZxid::Negative => -1,
                    },
                    timeout,
                    session_id: 0,
                    passwd: None,
                    read_only,
                };
                let payload = match handshake {
                    Handshake::New(passwd) => {
                        request.passwd = passwd;
                        request.to_bytes()
                    }
                    Handshake::Resume(i, password) => {
                        let known: Vec<(&SessionId, &Vec<u8>)> = self.passwords.iter().collect();
                        if let Some((&id, passwd)) = (!known.is_empty()).then(|| *i.get(&known)) {
                            request.session_id = id;
                            request.passwd = match password {
                                Password::Right => Some(passwd.clone()),
                                Password::Wrong => {
                                    let mut wrong = passwd.clone();
                                    wrong[0] ^= 1;
                                    Some(wrong)
                                }
                                Password::Missing => None,
                                Password::Empty => Some(Vec::new()),
                            };
                        }
                        request.to_bytes()
                    }
                    Handshake::Unknown(id) => {
                        request.session_id = id;
                        request.passwd = Some(vec![0; 16]);
                        request.to_bytes()
                    }
                    Handshake::Garbage(bytes) => bytes,
                };
                self.connect(conn, &payload);
            }
            Step::Request { conn, xid, request } => {
                let conn = self.pick(conn);
                let xid = xid.unwrap_or_else(|| self.xid());
                let mut payload = Vec::new();
                encode_request(xid, &request, &mut payload);
                self.request(conn, &payload);
            }
            Step::RawOp {
                conn,
                xid,
                op,
                body,
            } => {
                let conn = self.pick(conn);
                let mut payload = Vec::new();
                RequestHeader { xid, op_type: op }.encode(&mut payload);
                payload.extend_from_slice(&body);
                self.request(conn, &payload);
            }
            Step::Mangled {
                conn,
                request,
                cut,
                junk,
            } => {
                {
                    let conn = self.pick(conn);
                    let xid = self.xid();
                    let mut payload = Vec::new();
                    encode_request(xid, &request, &mut payload);
                    if junk.is_empty() {
                        // Anywhere from no body to one byte short (the header may go too).
                        payload.truncate(cut.index(payload.len()));
                    } else {
                        payload.extend_from_slice(&junk);
                    }
                    self.request(conn, &payload);
                }
            }
            Step::Raw { conn, bytes } => {
                let conn = self.pick(conn);
                self.request(conn, &bytes);
            }
            Step::Reject { conn, request, err } => {
                let conn = self.pick(conn);
                let xid = self.xid();
                let mut payload = Vec::new();
                encode_request(xid, &request, &mut payload);
                self.reject(conn, &payload, err);
            }
            Step::SetCounter(path, value) => {
                let exists = self.core.dump_tree().iter().any(|n| n.path == path);
                assert_eq!(self.core.set_sequence_counter(&path, value), exists);
            }
            Step::CloseConn(conn) => {
                let conn = self.pick(conn);
                self.close(conn);
            }
            Step::Advance(ms) => self.advance(ms),
            Step::Sleep(ms) => {
                self.now.mono_ms += ms;
                self.now.wall_ms += ms as i64;
                self.ticked = false;
            }
            Step::Expire(i) => {
                let known: Vec<SessionId> = self.passwords.keys().copied().collect();
                if !known.is_empty() {
                    self.expire(*i.get(&known));
                }
            }
        }
        self.check_state();
    }

    pub(super) fn xid(&mut self) -> i32 {
        let xid = self.next_xid;
        self.next_xid = self.next_xid % i32::MAX + 1;
        xid
    }

    pub(super) fn open_conn(&mut self, ip: u8) -> ConnId {
        let conn = self.next_conn;
        self.next_conn += 1;
        let addr = match ip % 4 {
            0 => IpAddr::V4(Ipv4Addr::LOCALHOST),
            1 => IpAddr::V4(Ipv4Addr::new(10, 1, 2, 3)),
            2 => IpAddr::V6(Ipv6Addr::LOCALHOST),
            _ => IpAddr::V6(Ipv4Addr::new(1, 2, 3, 4).to_ipv6_mapped()),
        };
        self.core
            .open_connection(conn, ConnInfo { addr, member: 1 });
        self.conns.push(conn);
        self.open.insert(conn);
        conn
    }

    pub(super) fn live(&self, conn: ConnId) -> Option<SessionId> {
        self.core
            .connection_session(conn)
            .filter(|&s| self.core.session_timeout(s).is_some())
    }

    /// A connection for a request: usually one with a live session (a new one if there is
    /// none, so that runs keep doing something), else any connection ever opened.
    pub(super) fn pick(&mut self, pick: Pick) -> ConnId {
        let live: Vec<ConnId> = self
            .open
            .iter()
            .copied()
            .filter(|&c| self.live(c).is_some())
            .collect();
        if pick.prefer_live && !live.is_empty() {
            *pick.index.get(&live)
        } else if pick.prefer_live || self.conns.is_empty() {
            self.new_session()
        } else {
            *pick.index.get(&self.conns)
        }
    }

    /// A new connection with a new session.
    pub(super) fn new_session(&mut self) -> ConnId {
        let conn = self.open_conn(0);
        let handshake = ConnectRequest {
            timeout: 30_000,
            passwd: Some(vec![0; 16]),
            read_only: Some(false),
            ..Default::default()
        };
        self.connect(conn, &handshake.to_bytes())
            .expect("a new session");
        conn
    }

    pub(super) fn sessions(&self) -> BTreeMap<SessionId, SessionInfo> {
        self.core
            .sessions()
            .into_iter()
            .map(|s| (s.id, s))
            .collect()
    }

    /// Carries out the actions as a shell would, checking that nothing is sent to a connection
    /// that is closed (or was closed earlier in the list). Returns the payloads per connection.
    pub(super) fn carry_out(&mut self, actions: &[Action]) -> BTreeMap<ConnId, Vec<Vec<u8>>> {
        let mut sent: BTreeMap<ConnId, Vec<Vec<u8>>> = BTreeMap::new();
        for action in actions {
            match action {
                Action::Send(conn, payload) => {
                    assert!(
                        self.open.contains(conn),
                        "send to closed connection {conn}: {actions:?}"
                    );
                    sent.entry(*conn).or_default().push(payload.clone());
                }
                Action::Close(conn) => {
                    self.open.remove(conn);
                }
            }
        }
        sent
    }

    pub(super) fn close(&mut self, conn: ConnId) {
        let zxid = self.core.last_zxid();
        self.core.close_connection(conn);
        self.open.remove(&conn);
        assert_eq!(self.core.last_zxid(), zxid);
    }

    pub(super) fn send(&mut self, conn: ConnId, request: &Request) -> Option<Reply> {
        let xid = self.xid();
        let mut payload = Vec::new();
        encode_request(xid, request, &mut payload);
        self.request(conn, &payload)
    }
}
