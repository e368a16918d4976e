//! Turning the servers' answers into comparable lines, normalising only what legitimately
//! differs between two correct servers. Every rule is named here, once:
//!
//! | rule | what | why |
//! |---|---|---|
//! | `SESSION_IDS` | session ids become the slot's label (`s1.0`: slot 1, first session) | ids are drawn by each server (ZooKeeper: from its start time and server id) |
//! | `EPHEMERAL_OWNER` | a stat's ephemeralOwner that is a session of the sequence becomes its label; any other value (0, the container and TTL markers) is kept | it is a session id |
//! | `PASSWORDS` | a handshake's password becomes its length | opaque per server (docs/compatibility.md: Session passwords) |
//! | `TIMES` | ctime and mtime are dropped | wall-clock times |
//! | `ZXIDS` | every zxid at or after the sequence's start (the root's create) is printed as `+N` from it, earlier positive ones as `pre`, 0 and negatives as they are | the servers have different histories; within a sequence each write takes the next zxid on both |
//! | `UNORDERED_LISTS` | getChildren(2) names (also inside multiRead), getEphemerals paths and whoAmI identities are sorted | hash order in ZooKeeper (docs/compatibility.md: Unspecified orders); whoAmI lists `ServerCnxn.authInfo`, a set over a `ConcurrentHashMap` (zookeeper-server/src/main/java/org/apache/zookeeper/server/ServerCnxn.java at release-3.8.0) |
//! | `SESSION_CLOSE_EVENTS` | after a closeSession step, each run of one session's consecutive event lines is sorted (in `run.rs`) | the session's ephemerals are deleted in one transaction, in the order of ZooKeeper's per-session hash set, which changes with the paths' names |
//! | `ROOT` | the run's root path is printed as `{root}` | a fresh root per attempt, the same on both servers; only for reading |
//! | `NON_BMP` | each character outside the BMP in a line becomes the six U+FFFD that a lossy UTF-8 decoder reads from its CESU-8 form | ZooKeeper echoes such characters as CESU-8, which no client decodes (docs/compatibility.md: Characters outside the BMP are echoed as standard UTF-8); only the encoding differs, so the text must still match |
//! | `BIG_DATA` | data over 24 bytes or not printable is printed as its length and an FNV-1a hash | readability; the hash still tells different contents apart |
//!
//! Everything else is compared as sent: error codes, versions, lengths, counts, ACLs, paths,
//! event types and the bytes of anything that does not decode (shown in hex).

use std::collections::HashMap;
use std::fmt::Write as _;

use shepherd_protocol::{
    Codec, ConnectResponse, ErrorCode, MultiResult, OpCode, ReplyHeader, Response, Stat,
    WatcherEvent, xid,
};

use super::step::{ROOT, show_acl};

/// What the normalisation rules need to know about one run of a sequence.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The zxid of the root's create: `ZXIDS` counts from it.
    pub start_zxid: i64,
    /// The run's root path (`ROOT`).
    pub root: String,
    /// Session id to slot label (`SESSION_IDS`, `EPHEMERAL_OWNER`).
    pub sessions: HashMap<i64, String>,
}

/// 64-bit FNV-1a: a content fingerprint for `BIG_DATA`, not a security hash.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Bytes as hex, at most 48 of them, then the length and a fingerprint if longer.
pub fn hex(bytes: &[u8]) -> String {
    let mut out = String::new();
    for b in bytes.iter().take(48) {
        let _ = write!(out, "{b:02x}");
    }
    if bytes.len() > 48 {
        let _ = write!(out, "… ({} bytes, fnv {:016x})", bytes.len(), fnv1a(bytes));
    }
    out
}

fn error_name(code: i32) -> String {
    match ErrorCode::try_from(code) {
        Ok(c) => c.name().to_string(),
        Err(_) => format!("code{code}"),
    }
}

impl Context {
    /// `ZXIDS`.
    pub fn zxid(&self, zxid: i64) -> String {
        if zxid <= 0 {
            zxid.to_string()
        } else if zxid < self.start_zxid {
            "pre".into()
        } else {
            format!("+{}", zxid - self.start_zxid)
        }
    }

    /// `SESSION_IDS`, `EPHEMERAL_OWNER`.
    pub fn session(&self, id: i64) -> String {
        match self.sessions.get(&id) {
            Some(label) => label.clone(),
            None if id == 0 => "0".into(),
            None => format!("{id:#x}"),
        }
    }

    /// `ROOT`.
    pub fn path(&self, path: &str) -> String {
        match path.strip_prefix(self.root.as_str()) {
            Some(rest) if !self.root.is_empty() => format!("{ROOT}{rest}"),
            _ => path.to_string(),
        }
    }

    fn paths(&self, paths: &[String], sort: bool) -> String {
        let mut out: Vec<String> = paths.iter().map(|p| self.path(p)).collect();
        if sort {
            out.sort();
        }
        format!("{out:?}")
    }

    /// `BIG_DATA`.
    pub fn data(&self, data: &Option<Vec<u8>>) -> String {
        match data {
            None => "null".into(),
            Some(d) if d.len() <= 24 && d.iter().all(|b| b.is_ascii_graphic() || *b == b' ') => {
                format!("{:?}", String::from_utf8_lossy(d))
            }
            Some(d) => format!("<{} bytes fnv {:016x}>", d.len(), fnv1a(d)),
        }
    }

    /// A stat under `TIMES`, `ZXIDS` and `EPHEMERAL_OWNER`.
    pub fn stat(&self, s: &Stat) -> String {
        format!(
            "{{czxid={} mzxid={} pzxid={} v={} cv={} av={} owner={} len={} children={}}}",
            self.zxid(s.czxid),
            self.zxid(s.mzxid),
            self.zxid(s.pzxid),
            s.version,
            s.cversion,
            s.aversion,
            self.session(s.ephemeral_owner),
            s.data_length,
            s.num_children
        )
    }

    /// A handshake answer under `SESSION_IDS` and `PASSWORDS`.
    pub fn connect(&self, r: &ConnectResponse) -> String {
        format!(
            "connected: protocol={} timeout={} session={} password={} read_only={:?}",
            r.protocol_version,
            r.timeout,
            self.session(r.session_id),
            r.passwd.as_ref().map_or(-1, |p| p.len() as i64),
            r.read_only
        )
    }

    fn multi_result(&self, r: &MultiResult) -> String {
        match r {
            MultiResult::Create(p) => format!("create {}", self.path(p)),
            MultiResult::Create2(c) => {
                format!("create2 {} {}", self.path(&c.path), self.stat(&c.stat))
            }
            MultiResult::Delete => "delete".into(),
            MultiResult::SetData(s) => format!("setData {}", self.stat(s)),
            MultiResult::Check => "check".into(),
            MultiResult::GetData(d) => {
                format!("getData {} {}", self.data(&d.data), self.stat(&d.stat))
            }
            MultiResult::GetChildren(c) => format!("getChildren {}", self.paths(c, true)),
            MultiResult::Error(code) => format!("error {}", error_name(*code)),
        }
    }

    fn response(&self, r: &Response) -> String {
        match r {
            Response::Create(c) => self.path(&c.path),
            Response::Create2(c) | Response::CreateContainer(c) | Response::CreateTTL(c) => {
                format!("{} {}", self.path(&c.path), self.stat(&c.stat))
            }
            Response::Exists(s) | Response::SetData(s) | Response::SetACL(s) => self.stat(&s.stat),
            Response::GetData(d) | Response::Reconfig(d) => {
                format!("{} {}", self.data(&d.data), self.stat(&d.stat))
            }
            Response::GetACL(a) => format!("{} {}", show_acl(&a.acl), self.stat(&a.stat)),
            Response::GetChildren(c) => self.paths(&c.children, true),
            Response::GetChildren2(c) => {
                format!("{} {}", self.paths(&c.children, true), self.stat(&c.stat))
            }
            Response::Sync(p) => self.path(&p.path),
            Response::Multi(m) | Response::MultiRead(m) => {
                let parts: Vec<String> = m.results.iter().map(|r| self.multi_result(r)).collect();
                format!("[{}]", parts.join("; "))
            }
            Response::GetAllChildrenNumber(n) => n.total_number.to_string(),
            Response::GetEphemerals(e) => self.paths(&e.ephemerals, true),
            Response::WhoAmI(w) => {
                let ids: Vec<String> = w
                    .client_info
                    .iter()
                    .map(|c| format!("{}:{}", c.auth_scheme, c.user))
                    .collect();
                let mut ids = ids;
                ids.sort();
                format!("{ids:?}")
            }
            Response::AddWatch(e) => format!("err={}", e.err),
            Response::Sasl(t) => format!("token={}", self.data(&t.token)),
            Response::Delete
            | Response::Ping
            | Response::CheckWatches
            | Response::RemoveWatches
            | Response::Auth
            | Response::SetWatches
            | Response::SetWatches2
            | Response::CloseSession => String::new(),
        }
    }

    /// One frame a session received, as a line: an event, or the reply to `op` (the opcode
    /// sent under the frame's xid, if known). Never fails: what does not decode is shown raw.
    pub fn frame(&self, payload: &[u8], op: Option<OpCode>) -> String {
        non_bmp(&self.frame_line(payload, op))
    }

    fn frame_line(&self, payload: &[u8], op: Option<OpCode>) -> String {
        let mut rest = payload;
        let Ok(header) = ReplyHeader::decode(&mut rest) else {
            return format!("short frame {}", hex(payload));
        };
        if header.xid == xid::NOTIFICATION {
            let mut body = rest;
            return match WatcherEvent::decode(&mut body) {
                Ok(e) => format!(
                    "event {:?} {:?} {} zxid={}{}",
                    e.event_type,
                    e.state,
                    self.path(&e.path),
                    self.zxid(header.zxid),
                    trailing(body)
                ),
                Err(err) => format!(
                    "event zxid={} undecodable ({err}): {}",
                    self.zxid(header.zxid),
                    hex(rest)
                ),
            };
        }
        let name = op.map_or_else(|| format!("xid {}", header.xid), |o| o.name().to_string());
        let head = format!(
            "{name} {} zxid={}",
            error_name(header.err),
            self.zxid(header.zxid)
        );
        if header.err != 0 {
            return if rest.is_empty() {
                head
            } else {
                format!("{head} body={}", hex(rest))
            };
        }
        let Some(op) = op else {
            return format!("{head} unexpected xid, body={}", hex(rest));
        };
        let mut body = rest;
        match Response::decode(op, &mut body) {
            Ok(r) => {
                let shown = self.response(&r);
                let sep = if shown.is_empty() { "" } else { " " };
                format!("{head}{sep}{shown}{}", trailing(body))
            }
            Err(err) => format!("{head} undecodable ({err}): {}", hex(rest)),
        }
    }
}

fn trailing(rest: &[u8]) -> String {
    if rest.is_empty() {
        String::new()
    } else {
        format!(" trailing={}", hex(rest))
    }
}

/// `NON_BMP`: what a lossy UTF-8 decoder makes of ZooKeeper's CESU-8 echo of a character outside
/// the BMP (two 3-byte surrogate encodings, each byte an invalid sequence of its own: six
/// U+FFFD), so that a line from either server reads the same when only that encoding differs.
pub fn non_bmp(line: &str) -> String {
    line.chars()
        .flat_map(|c| {
            let n = if u32::from(c) > 0xFFFF { 6 } else { 1 };
            std::iter::repeat_n(
                if n == 6 {
                    char::REPLACEMENT_CHARACTER
                } else {
                    c
                },
                n,
            )
        })
        .collect()
}
