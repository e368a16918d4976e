//! Running a sequence on one server over the raw wire, one request at a time, and writing down
//! everything each session received, as normalised lines ([`Transcript`]).
//!
//! After each step every session sends a ping and records what arrives before its answer:
//! a server delivers a session's events before its reply to a later request, so the events the
//! step caused are all collected, on every session, at a point that does not depend on timing.
//!
//! Invariants: nothing [`forbidden`] is ever sent; every read is
//! bounded ([`Limits`]) and every loop is bounded in count; the sequence works under its own
//! root and the run removes it afterwards (through a separate session, authenticated as both
//! digest users, so that ACLs the sequence set rarely stop it).

use std::time::Duration;

use shepherd_protocol::{
    Acl, AuthPacket, Codec, CreateRequest, DeleteRequest, EventType, OpCode, PathWatchRequest,
    ReplyHeader, Request, Response, WatcherEvent, decode_from, xid,
};

use super::generate::DIGEST_IDS;
use super::known::forbidden;
use super::normalise::Context;
use super::session::{Read, Slot, handshake, read};
use super::step::{Action, Step};

/// The credential the cleanup also authenticates with. A server started for the oracle should
/// make it its super user (`superDigest=oracle:b29uxuNcniFv6vjwF9tdJVA4Q8c=`, as `.ci/run` and
/// `.ci/real-zk.sh` do): then the cleanup removes every node whatever its ACL, and no container
/// a sequence locked away is left for the reaper to delete in the middle of a later sequence,
/// which would move that sequence's zxids on one server and not the other.
pub const CLEANUP_SUPER_USER: &str = "oracle:oracle";

/// The bounds on a run's waits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The longest wait for any one frame.
    pub reply: Duration,
    /// The longest wait for the reaper in an [`Action::AwaitDeleted`] step.
    pub reap: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            reply: Duration::from_secs(10),
            reap: Duration::from_secs(5),
        }
    }
}

/// The most frames one read loop takes before giving up on the reply it waits for.
const MAX_FRAMES: usize = 10_000;
/// The most nodes the cleanup visits.
const MAX_CLEANUP: usize = 2_000;

/// What a server answered to a sequence, normalised.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transcript {
    /// The session handshakes.
    pub setup: Vec<String>,
    /// Per step: the lines every session received because of it, each prefixed `sN:`.
    pub steps: Vec<Vec<String>>,
}

/// One run of a sequence on one server.
struct Run<'a> {
    addr: &'a str,
    limits: Limits,
    ctx: Context,
    slots: Vec<Slot>,
}

/// Runs `steps` with `sessions` sessions on the server at `addr`, under `root` (which must not
/// exist there), and removes `root` afterwards.
///
/// # Errors
/// A message if the run could not even start (no connection, the root not created) or a step
/// is one the oracle must never send.
pub async fn run(
    addr: &str,
    sessions: usize,
    steps: &[Step],
    root: &str,
    limits: Limits,
) -> Result<Transcript, String> {
    if let Some(known) = steps.iter().find_map(forbidden) {
        return Err(format!(
            "refusing to send a step of {:?} ({})",
            known.name, known.cites
        ));
    }
    let mut run = Run {
        addr,
        limits,
        ctx: Context {
            root: root.to_string(),
            ..Context::default()
        },
        slots: (0..sessions).map(|_| Slot::empty()).collect(),
    };
    let mut transcript = Transcript::default();
    for slot in 0..sessions {
        let response = run.slots[slot].open(addr, limits.reply).await?;
        run.label(slot);
        transcript
            .setup
            .push(format!("s{slot}: {}", run.ctx.connect(&response)));
    }
    run.ctx.start_zxid = run.create_root(root).await?;
    for step in steps {
        let step = step.rooted(root);
        let mut lines = Vec::new();
        run.step(&step, &mut lines).await;
        for slot in 0..sessions {
            run.drain(slot, &mut lines).await;
        }
        if matches!(step.action, Action::CloseSession) {
            session_close_events(&mut lines);
        }
        transcript.steps.push(lines);
    }
    run.teardown(root).await;
    Ok(transcript)
}

impl Run<'_> {
    fn label(&mut self, slot: usize) {
        let s = &self.slots[slot];
        self.ctx
            .sessions
            .insert(s.id, format!("s{slot}.{}", s.generation));
    }

    async fn create_root(&mut self, root: &str) -> Result<i64, String> {
        let create = Request::Create(CreateRequest {
            path: root.to_string(),
            data: None,
            acl: Acl::open_unsafe(),
            flags: 0,
        });
        let mut lines = Vec::new();
        let header = self.call(0, &create, &mut lines).await;
        match header {
            Some(h) if h.err == 0 => Ok(h.zxid),
            _ => Err(format!("creating the root {root} failed: {lines:?}")),
        }
    }

    /// Sends `request` from `slot` and records every frame up to its reply; the reply's header,
    /// if one came.
    async fn call(
        &mut self,
        slot: usize,
        request: &Request,
        lines: &mut Vec<String>,
    ) -> Option<ReplyHeader> {
        self.call_payload(slot, request, lines)
            .await
            .map(|(h, _)| h)
    }

    async fn call_payload(
        &mut self,
        slot: usize,
        request: &Request,
        lines: &mut Vec<String>,
    ) -> Option<(ReplyHeader, Vec<u8>)> {
        let reply_xid = match request {
            Request::Auth(_) => xid::AUTH,
            Request::SetWatches(_) | Request::SetWatches2(_) => xid::SET_WATCHES,
            Request::Ping => xid::PING,
            _ => 0,
        };
        let op = request.op_code();
        let peer = self.slots[slot].peer.as_mut()?;
        let reply_xid = if reply_xid == 0 {
            peer.send(request).await
        } else {
            peer.send_as(reply_xid, request).await;
            reply_xid
        };
        for _ in 0..MAX_FRAMES {
            let peer = self.slots[slot].peer.as_mut()?;
            match read(peer, self.limits.reply).await {
                Read::Frame(payload) => {
                    let header = decode_from_prefix(&payload);
                    if header.as_ref().is_some_and(|h| h.xid == reply_xid) {
                        let header = header?;
                        if op != OpCode::Ping {
                            lines.push(format!("s{slot}: {}", self.ctx.frame(&payload, Some(op))));
                        }
                        if header.zxid > 0 && op != OpCode::Ping && op != OpCode::Auth {
                            let s = &mut self.slots[slot];
                            s.last_zxid = s.last_zxid.max(header.zxid);
                        }
                        return Some((header, payload));
                    }
                    lines.push(format!("s{slot}: {}", self.ctx.frame(&payload, None)));
                }
                Read::Closed => {
                    lines.push(format!("s{slot}: connection closed by the server"));
                    self.lost(slot, lines).await;
                    return None;
                }
                Read::Silent => {
                    lines.push(format!("s{slot}: nothing within {:?}", self.limits.reply));
                    self.lost(slot, lines).await;
                    return None;
                }
            }
        }
        lines.push(format!("s{slot}: no reply among {MAX_FRAMES} frames"));
        self.lost(slot, lines).await;
        None
    }

    /// The slot's connection is gone: resume its session on a new one, or open a new session
    /// if the server refuses it.
    async fn lost(&mut self, slot: usize, lines: &mut Vec<String>) {
        self.slots[slot].peer = None;
        let s = &self.slots[slot];
        let request = s.resume_request(s.passwd.clone());
        match handshake(self.addr, &request, self.limits.reply).await {
            Ok((peer, response)) if !response.is_expired() => {
                lines.push(format!("s{slot}: resumed, {}", self.ctx.connect(&response)));
                self.slots[slot].peer = Some(peer);
            }
            Ok((_, response)) => {
                lines.push(format!(
                    "s{slot}: resume refused, {}",
                    self.ctx.connect(&response)
                ));
                self.renew(slot, lines).await;
            }
            Err(e) => {
                lines.push(format!("s{slot}: resume failed: {e}"));
                self.renew(slot, lines).await;
            }
        }
    }

    /// A new session in `slot`.
    async fn renew(&mut self, slot: usize, lines: &mut Vec<String>) {
        self.slots[slot].generation += 1;
        match self.slots[slot].open(self.addr, self.limits.reply).await {
            Ok(response) => {
                self.label(slot);
                lines.push(format!(
                    "s{slot}: new session, {}",
                    self.ctx.connect(&response)
                ));
            }
            Err(e) => lines.push(format!("s{slot}: no new session: {e}")),
        }
    }

    async fn step(&mut self, step: &Step, lines: &mut Vec<String>) {
        let slot = step.session;
        if slot >= self.slots.len() {
            lines.push(format!("no session s{slot}"));
            return;
        }
        if self.slots[slot].peer.is_none() {
            self.lost(slot, lines).await;
        }
        match &step.action {
            Action::Request(request) => {
                let mut request = request.clone();
                match &mut request {
                    Request::SetWatches(w) => w.relative_zxid += self.ctx.start_zxid,
                    Request::SetWatches2(w) => w.relative_zxid += self.ctx.start_zxid,
                    _ => {}
                }
                self.call(slot, &request, lines).await;
            }
            Action::Reconnect => {
                // Dropping the peer closes the socket; the server sees the connection end.
                self.slots[slot].peer = None;
                self.lost(slot, lines).await;
            }
            Action::BadPasswordReconnect => {
                // The slot's own connection goes first: ZooKeeper closes the live connection of
                // a session on a wrong password, Shepherd deliberately does not
                // (docs/compatibility.md: A wrong password leaves the live connection alone), so
                // only the refusal itself is compared. Then the session resumes.
                self.slots[slot].peer = None;
                let s = &self.slots[slot];
                let wrong: Vec<u8> = s.passwd.iter().map(|b| b ^ 0x5a).collect();
                let request = s.resume_request(if wrong.is_empty() { vec![1; 16] } else { wrong });
                let line = match handshake(self.addr, &request, self.limits.reply).await {
                    Ok((_, response)) => self.ctx.connect(&response),
                    Err(e) => e,
                };
                lines.push(format!("s{slot}: wrong password: {line}"));
                self.lost(slot, lines).await;
            }
            Action::CloseSession => {
                if self
                    .call(slot, &Request::CloseSession, lines)
                    .await
                    .is_some()
                {
                    if let Some(peer) = self.slots[slot].peer.as_mut() {
                        let after = match read(peer, self.limits.reply).await {
                            Read::Closed => "then closed".to_string(),
                            Read::Silent => "then left open".to_string(),
                            Read::Frame(f) => format!("then {}", self.ctx.frame(&f, None)),
                        };
                        lines.push(format!("s{slot}: {after}"));
                    }
                    self.slots[slot].peer = None;
                    self.renew(slot, lines).await;
                }
            }
            Action::AwaitDeleted(path) => self.await_deleted(slot, path, lines).await,
        }
    }

    async fn await_deleted(&mut self, slot: usize, path: &str, lines: &mut Vec<String>) {
        let exists = Request::Exists(PathWatchRequest {
            path: path.to_string(),
            watch: true,
        });
        match self.call(slot, &exists, lines).await {
            Some(h) if h.err == 0 => {}
            _ => return,
        }
        let deadline = tokio::time::Instant::now() + self.limits.reap;
        for _ in 0..MAX_FRAMES {
            let Some(peer) = self.slots[slot].peer.as_mut() else {
                return;
            };
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match read(peer, left).await {
                Read::Frame(payload) => {
                    lines.push(format!("s{slot}: {}", self.ctx.frame(&payload, None)));
                    if is_deletion_of(&payload, path) {
                        return;
                    }
                }
                Read::Closed => {
                    lines.push(format!("s{slot}: connection closed by the server"));
                    self.lost(slot, lines).await;
                    return;
                }
                Read::Silent => {
                    lines.push(format!(
                        "s{slot}: not deleted within {:?}",
                        self.limits.reap
                    ));
                    return;
                }
            }
        }
    }

    /// Pings from `slot` and records what arrives before the answer.
    async fn drain(&mut self, slot: usize, lines: &mut Vec<String>) {
        if self.slots[slot].peer.is_none() {
            self.lost(slot, lines).await;
        }
        self.call(slot, &Request::Ping, lines).await;
    }

    /// Closes every session, then removes the root through a fresh session authenticated as
    /// both digest users. Nothing here is recorded: it is not part of the sequence.
    async fn teardown(&mut self, root: &str) {
        let mut ignored = Vec::new();
        for slot in 0..self.slots.len() {
            if self.slots[slot].peer.is_some() {
                self.call(slot, &Request::CloseSession, &mut ignored).await;
            }
            self.slots[slot].peer = None;
        }
        let mut cleaner = Slot::empty();
        if cleaner.open(self.addr, self.limits.reply).await.is_err() {
            return;
        }
        self.slots = vec![cleaner];
        for user in DIGEST_IDS
            .iter()
            .map(|(user, _)| *user)
            .chain([CLEANUP_SUPER_USER])
        {
            let auth = Request::Auth(AuthPacket {
                auth_type: 0,
                scheme: "digest".into(),
                auth: Some(user.as_bytes().to_vec()),
            });
            self.call(0, &auth, &mut ignored).await;
        }
        // Depth first, children before parents; bounded in nodes visited.
        let mut stack = vec![(root.to_string(), false)];
        let mut visited = 0;
        while let Some((path, expanded)) = stack.pop() {
            visited += 1;
            if visited > MAX_CLEANUP {
                break;
            }
            if expanded {
                let delete = Request::Delete(DeleteRequest { path, version: -1 });
                self.call(0, &delete, &mut ignored).await;
                continue;
            }
            stack.push((path.clone(), true));
            let list = Request::GetChildren(PathWatchRequest {
                path: path.clone(),
                watch: false,
            });
            if let Some((h, payload)) = self.call_payload(0, &list, &mut ignored).await
                && h.err == 0
                && let Some(Response::GetChildren(c)) = body_of(&payload, OpCode::GetChildren)
            {
                for child in c.children {
                    stack.push((format!("{path}/{child}"), false));
                }
            }
            ignored.clear();
        }
        self.call(0, &Request::CloseSession, &mut ignored).await;
    }
}

fn decode_from_prefix(payload: &[u8]) -> Option<ReplyHeader> {
    let mut rest = payload;
    ReplyHeader::decode(&mut rest).ok()
}

fn body_of(payload: &[u8], op: OpCode) -> Option<Response> {
    let mut rest = payload;
    ReplyHeader::decode(&mut rest).ok()?;
    Response::decode(op, &mut rest).ok()
}

/// Whether `payload` is the NodeDeleted event of `path`.
fn is_deletion_of(payload: &[u8], path: &str) -> bool {
    let mut rest = payload;
    match ReplyHeader::decode(&mut rest) {
        Ok(h) if h.xid == xid::NOTIFICATION => decode_from::<WatcherEvent>(rest)
            .is_ok_and(|e| e.event_type == EventType::NodeDeleted && e.path == path),
        _ => false,
    }
}

/// `SESSION_CLOSE_EVENTS`: the events a closeSession's deletions fire come from one
/// transaction, in the order ZooKeeper walks the session's ephemerals (a hash set, so it
/// changes with the paths' names from one run to the next); each run of one session's
/// consecutive event lines is sorted, and nothing else moves.
pub(super) fn session_close_events(lines: &mut [String]) {
    let is_event = |line: &str| {
        line.split_once(": ")
            .is_some_and(|(_, rest)| rest.starts_with("event "))
    };
    let mut start = 0;
    while start < lines.len() {
        if !is_event(&lines[start]) {
            start += 1;
            continue;
        }
        let session = lines[start].split_once(": ").map(|(s, _)| s.to_string());
        let mut end = start + 1;
        while end < lines.len()
            && is_event(&lines[end])
            && lines[end].split_once(": ").map(|(s, _)| s) == session.as_deref()
        {
            end += 1;
        }
        lines[start..end].sort();
        start = end;
    }
}
