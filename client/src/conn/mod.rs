//! The connection task: the one owner of the stream, the session and the watch registry.
//!
//! Callers talk to it only through [`Command`]s on a bounded mpsc channel; it answers through
//! oneshot channels. Invariants:
//! * requests go out in the order their commands were received, with increasing xids, and
//!   their replies must come back in that order; anything else is a protocol error that drops
//!   the connection;
//! * when a connection drops, every request sent on it fails with `ConnectionLoss`; nothing is
//!   re-sent. The task then reconnects with the same session id and password, runs the SASL
//!   exchange when configured (before anything else on the connection, `attempt.rs`), re-sends
//!   the credentials and re-arms the watches (setWatches with the last zxid seen);
//! * refused SASL credentials end the session as AuthFailed, on any connection;
//! * a handshake that says "invalid session" makes the session Expired, for good;
//! * once terminal, the task fails everything queued, closes the command channel and ends.
//!
//! The task is generic over its [`Connector`], asked for a fresh stream on every attempt; the
//! rest of the crate only sees the non-generic [`Command`] channel.

mod attempt;
mod command;
mod link;
mod sasl;
mod watch_registry;

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use shepherd_protocol::{
    AuthPacket, ConnectRequest, ConnectResponse, ErrorCode, Frame, KeeperState, OpCode, Reply,
    Request, WatcherType, decode_reply, xid,
};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tracing::{debug, info, warn};

use crate::config::Config;
use crate::connector::Connector;
use crate::error::Error;
use crate::session::{SessionState, SessionStatus};
use attempt::{Attempt, connect_once, ends_session};
pub(crate) use command::Command;
use link::{Link, PendingKind};
pub(crate) use watch_registry::WatchReg;
use watch_registry::WatchRegistry;

/// Requests in flight on one connection before the task stops taking commands.
const MAX_IN_FLIGHT: usize = 8192;

/// Most commands taken from the queue at one wake-up, so that replies are still read between
/// large bursts of requests.
const MAX_DRAIN: usize = 64;

/// Why `serve` returned.
enum End {
    /// The connection is gone; the session may live on.
    Lost(String),
    /// The session is over.
    Terminal(SessionState),
}

/// The connection task's state, across connections.
pub(crate) struct Driver<C: Connector> {
    config: Config,
    /// Opens the stream of every attempt; shared with the attempt futures so that they do not
    /// borrow the driver while it keeps taking commands.
    connector: Arc<C>,
    commands: mpsc::Receiver<Command>,
    status: watch::Sender<SessionStatus>,
    session_id: i64,
    password: Vec<u8>,
    timeout: Duration,
    last_zxid: i64,
    next_xid: i32,
    next_host: usize,
    auths: Vec<(String, Vec<u8>)>,
    watches: WatchRegistry,
    /// Commands received while disconnected, sent after the next handshake.
    queued: VecDeque<Command>,
    /// Callers of close() waiting for the closeSession reply.
    closers: Vec<oneshot::Sender<Result<(), Error>>>,
}

impl<C: Connector> Driver<C> {
    /// Makes the first connection, trying each host once. On success the driver is ready to
    /// [`Driver::run`] with the returned link.
    pub(crate) async fn connect(
        config: Config,
        connector: C,
        commands: mpsc::Receiver<Command>,
    ) -> Result<(Self, Link<C::Stream>), Error> {
        let (session_id, password) = config.session.clone().unwrap_or((0, vec![0; 16]));
        let status = SessionStatus {
            state: SessionState::Disconnected,
            host: None,
            session_id,
            timeout: config.session_timeout,
            read_only: false,
        };
        let mut driver = Driver {
            auths: config.auths.clone(),
            timeout: config.session_timeout,
            config,
            connector: Arc::new(connector),
            commands,
            status: watch::Sender::new(status),
            session_id,
            password,
            last_zxid: 0,
            next_xid: 1,
            next_host: 0,
            watches: WatchRegistry::default(),
            queued: VecDeque::new(),
            closers: Vec::new(),
        };
        let mut last = Error::InvalidArgument("no host".into());
        for _ in 0..driver.config.hosts.len() {
            let host = driver.pick_host();
            let open = open(&driver.connector, &host);
            match connect_once(driver.attempt(&host), open).await {
                Ok((link, response)) => return driver.on_handshake(link, response),
                // Refused credentials are refused by every server: no other host is tried.
                Err(Error::AuthFailed) => return Err(Error::AuthFailed),
                Err(e) => {
                    debug!(%host, error = %e, "connect attempt failed");
                    last = e;
                }
            }
        }
        Err(last)
    }

    /// A receiver of the session status.
    pub(crate) fn subscribe(&self) -> watch::Receiver<SessionStatus> {
        self.status.subscribe()
    }

    /// The session id and password (fixed once connected).
    pub(crate) fn credentials(&self) -> (i64, Vec<u8>) {
        (self.session_id, self.password.clone())
    }

    /// Serves connections until the session ends.
    pub(crate) async fn run(mut self, mut link: Link<C::Stream>) {
        loop {
            let end = self.serve(&mut link).await;
            match end {
                End::Lost(reason) => {
                    warn!(host = %link.host, %reason, "connection lost");
                    let closing = link.closing;
                    link.fail_in_flight(&Error::ConnectionLoss);
                    if closing {
                        for closer in self.closers.drain(..) {
                            let _ = closer.send(Err(Error::ConnectionLoss));
                        }
                        return self.finish(SessionState::Closed);
                    }
                    self.publish(SessionState::Disconnected, None, false);
                    self.watches
                        .session_event(SessionState::Disconnected.keeper_state());
                    match self.reconnect().await {
                        Ok(next) => link = next,
                        Err(state) => return self.finish(state),
                    }
                }
                End::Terminal(state) => {
                    link.fail_in_flight(&terminal_error(state));
                    return self.finish(state);
                }
            }
        }
    }

    fn pick_host(&mut self) -> String {
        let host = self.config.hosts[self.next_host % self.config.hosts.len()].clone();
        self.next_host = self.next_host.wrapping_add(1);
        host
    }

    fn connect_request(&self) -> ConnectRequest {
        ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: self.last_zxid,
            timeout: i32::try_from(self.config.session_timeout.as_millis()).unwrap_or(i32::MAX),
            session_id: self.session_id,
            passwd: Some(self.password.clone()),
            read_only: Some(self.config.read_only),
        }
    }

    /// The next attempt on `host`: the handshake to send and, with SASL, fresh xids for it.
    fn attempt(&mut self, host: &str) -> Attempt {
        let sasl = self.config.sasl.clone().map(|options| {
            let xids = std::array::from_fn(|_| self.next_xid());
            (options, xids)
        });
        Attempt {
            host: host.to_owned(),
            request: self.connect_request(),
            timeout: self.config.connect_timeout,
            max_frame: self.config.max_frame,
            sasl,
        }
    }

    fn next_xid(&mut self) -> i32 {
        let xid = self.next_xid;
        self.next_xid = if xid == i32::MAX { 1 } else { xid + 1 };
        xid
    }

    fn publish(&self, state: SessionState, host: Option<String>, read_only: bool) {
        self.status.send_replace(SessionStatus {
            state,
            host,
            session_id: self.session_id,
            timeout: self.timeout,
            read_only,
        });
    }

    /// Adopts a successful handshake: re-sends credentials and watches, then reports Connected.
    fn on_handshake(
        mut self,
        link: Link<C::Stream>,
        response: ConnectResponse,
    ) -> Result<(Self, Link<C::Stream>), Error> {
        if ends_session(&response, self.session_id) {
            return Err(Error::SessionExpired);
        }
        let link = self.adopt(link, response);
        Ok((self, link))
    }

    fn adopt(&mut self, mut link: Link<C::Stream>, response: ConnectResponse) -> Link<C::Stream> {
        self.session_id = response.session_id;
        self.password = response.passwd.unwrap_or_default();
        self.timeout = Duration::from_millis(u64::try_from(response.timeout).unwrap_or(0));
        for (scheme, auth) in &self.auths {
            link.send(xid::AUTH, &auth_request(scheme, auth));
            link.auth_pending.push_back(None);
        }
        for request in self.watches.set_watches(self.last_zxid) {
            link.send_pending(xid::SET_WATCHES, &request, PendingKind::Internal);
        }
        info!(host = %link.host, session = format_args!("{:#x}", self.session_id), "connected");
        let read_only = response.read_only.unwrap_or(false);
        self.publish(SessionState::Connected, Some(link.host.clone()), read_only);
        self.watches
            .session_event(SessionState::Connected.keeper_state());
        if self.config.sasl.is_some() {
            // As the Java client's default watcher hears after SyncConnected.
            self.watches.session_event(KeeperState::SaslAuthenticated);
        }
        link
    }

    /// Tries hosts in turn, forever, until a handshake succeeds or the session ends. Commands
    /// received meanwhile wait for the next attempt; a failed attempt fails them.
    async fn reconnect(&mut self) -> Result<Link<C::Stream>, SessionState> {
        let mut backoff = Duration::from_millis(10);
        loop {
            for _ in 0..self.config.hosts.len() {
                let host = self.pick_host();
                let open = open(&self.connector, &host);
                let attempt = connect_once(self.attempt(&host), open);
                match self.while_disconnected(attempt).await? {
                    Ok((_, response)) if ends_session(&response, self.session_id) => {
                        info!(%host, "session expired");
                        return Err(SessionState::Expired);
                    }
                    Ok((link, response)) => return Ok(self.adopt(link, response)),
                    Err(Error::AuthFailed) => {
                        info!(%host, "SASL credentials refused");
                        return Err(SessionState::AuthFailed);
                    }
                    Err(e) => {
                        debug!(%host, error = %e, "reconnect attempt failed");
                        for cmd in self.queued.drain(..) {
                            cmd.fail(&Error::ConnectionLoss);
                        }
                    }
                }
            }
            self.while_disconnected(tokio::time::sleep(backoff)).await?;
            backoff = (backoff * 2).min(Duration::from_secs(1));
        }
    }

    /// Runs `fut` while queueing commands; Close or the last handle going away ends the wait.
    async fn while_disconnected<F: Future>(&mut self, fut: F) -> Result<F::Output, SessionState> {
        tokio::pin!(fut);
        loop {
            tokio::select! {
                out = &mut fut => return Ok(out),
                cmd = self.commands.recv(), if self.queued.len() < MAX_IN_FLIGHT => match cmd {
                    Some(Command::Close { reply }) => {
                        // No connection to send closeSession on: the server expires it.
                        self.closers.push(reply);
                        return Err(SessionState::Closed);
                    }
                    Some(Command::DropPersistent { path, id }) => {
                        self.watches.drop_persistent(&path, id);
                    }
                    Some(cmd) => self.queued.push_back(cmd),
                    None => return Err(SessionState::Closed),
                },
            }
        }
    }

    /// Pumps one connection until it drops or the session ends.
    async fn serve(&mut self, link: &mut Link<C::Stream>) -> End {
        while let Some(cmd) = self.queued.pop_front() {
            self.dispatch(link, cmd);
        }
        let ping_every = self.timeout / 3;
        let read_timeout = self.timeout * 2 / 3;
        // One timer for the connection, moved only when it fires: sends and replies push the
        // ping and read deadlines later, and re-arming it for each would cost a turn of the
        // timer wheel per request. Firing early is harmless; it re-arms at the later deadline.
        let due = |link: &Link<C::Stream>| {
            (link.last_send + ping_every).min(link.last_recv + read_timeout)
        };
        let timer = tokio::time::sleep_until(due(link));
        tokio::pin!(timer);
        loop {
            let accept = !link.closing && link.pending.len() < MAX_IN_FLIGHT;
            let outgoing = link.out.unfinished();
            tokio::select! {
                biased;
                // First, so that a stream of replies or events never holds back a request (or
                // a ping): whatever was sent since the last write leaves in this one.
                written = link.out.write_some(), if outgoing => {
                    if let Err(e) = written {
                        return End::Lost(e.to_string());
                    }
                }
                frame = link.reader.next() => {
                    let payload = match frame {
                        Some(Ok(Frame::Payload(payload))) => payload,
                        Some(Ok(Frame::FourLetterWord(_))) => return End::Lost("bad frame".into()),
                        Some(Err(e)) => return End::Lost(e.to_string()),
                        None => return End::Lost("closed by the server".into()),
                    };
                    link.last_recv = Instant::now();
                    if let Some(end) = self.on_reply(link, &payload) {
                        return end;
                    }
                }
                cmd = self.commands.recv(), if accept => match cmd {
                    Some(cmd) => {
                        self.dispatch(link, cmd);
                        // Whatever else is queued joins the same write, without a turn of the
                        // select for each.
                        for _ in 1..MAX_DRAIN {
                            if link.closing || link.pending.len() >= MAX_IN_FLIGHT {
                                break;
                            }
                            match self.commands.try_recv() {
                                Ok(cmd) => self.dispatch(link, cmd),
                                Err(_) => break,
                            }
                        }
                    }
                    None => self.start_close(link),
                },
                () = &mut timer => {
                    let now = Instant::now();
                    if now >= link.last_recv + read_timeout {
                        return End::Lost(format!("nothing heard for {read_timeout:?}"));
                    }
                    if now >= link.last_send + ping_every {
                        link.send(xid::PING, &Request::Ping);
                    }
                    timer.as_mut().reset(due(link));
                }
            }
        }
    }

    fn dispatch(&mut self, link: &mut Link<C::Stream>, cmd: Command) {
        match cmd {
            Command::Request {
                request,
                path,
                watch,
                reply,
            } => {
                let xid = self.next_xid();
                let kind = PendingKind::User { path, watch, reply };
                link.send_pending(xid, &request, kind);
            }
            Command::Auth {
                scheme,
                auth,
                reply,
            } => {
                link.send(xid::AUTH, &auth_request(&scheme, &auth));
                link.auth_pending.push_back(Some(reply));
                if !self.auths.iter().any(|(s, a)| *s == scheme && *a == auth) {
                    self.auths.push((scheme, auth));
                }
            }
            Command::Close { reply } => {
                self.closers.push(reply);
                self.start_close(link);
            }
            Command::DropPersistent { path, id } => {
                if self.watches.drop_persistent(&path, id) {
                    let request = Request::RemoveWatches(shepherd_protocol::RemoveWatchesRequest {
                        path,
                        watcher_type: WatcherType::Any.into(),
                    });
                    let xid = self.next_xid();
                    link.send_pending(xid, &request, PendingKind::Internal);
                }
            }
        }
    }

    fn start_close(&mut self, link: &mut Link<C::Stream>) {
        if !link.closing {
            link.closing = true;
            let xid = self.next_xid();
            link.send_pending(xid, &Request::CloseSession, PendingKind::Close);
        }
    }

    /// Handles one frame after the handshake.
    fn on_reply(&mut self, link: &mut Link<C::Stream>, payload: &[u8]) -> Option<End> {
        let front = link.pending.front().map(|p| (p.xid, p.op));
        let reply = decode_reply(payload, |x| match x {
            xid::PING => Some(OpCode::Ping),
            xid::AUTH => Some(OpCode::Auth),
            x => front.filter(|(fx, _)| *fx == x).map(|(_, op)| op),
        });
        let (header, body) = match reply {
            Ok(Reply::Event(_, event)) => {
                self.watches.dispatch(&event, &self.config.chroot);
                return None;
            }
            Ok(Reply::Ok(header, body)) => (header, Ok(body)),
            Ok(Reply::Err(header)) => {
                let err = header.err;
                (header, Err(err))
            }
            Err(e) => return Some(End::Lost(format!("undecodable reply: {e}"))),
        };
        match header.xid {
            xid::PING => None,
            xid::AUTH => {
                let waiter = link.auth_pending.pop_front().flatten();
                let failed = header.err == i32::from(ErrorCode::AuthFailed);
                if let Some(waiter) = waiter {
                    let result = body.map(drop).map_err(Error::from_code);
                    let _ = waiter.send(if failed {
                        Err(Error::AuthFailed)
                    } else {
                        result
                    });
                }
                failed.then_some(End::Terminal(SessionState::AuthFailed))
            }
            x if front.map(|(fx, _)| fx) != Some(x) => Some(End::Lost(format!(
                "reply xid {x} out of order (expected {front:?})"
            ))),
            _ => {
                let pending = link.pending.pop_front()?;
                if header.zxid > 0 {
                    self.last_zxid = header.zxid;
                }
                match pending.kind {
                    PendingKind::User { path, watch, reply } => {
                        if let Some(watch) = watch {
                            let no_node =
                                matches!(body, Err(c) if c == i32::from(ErrorCode::NoNode));
                            let chroot = &self.config.chroot;
                            self.watches
                                .register(&path, watch, body.is_ok(), no_node, chroot);
                        }
                        let _ = reply.send(body.map_err(Error::from_code));
                        None
                    }
                    PendingKind::Internal => {
                        if let Err(code) = body {
                            debug!(op = ?pending.op, code, "internal request failed");
                        }
                        None
                    }
                    PendingKind::Close => {
                        for closer in self.closers.drain(..) {
                            let _ = closer.send(Ok(()));
                        }
                        Some(End::Terminal(SessionState::Closed))
                    }
                }
            }
        }
    }

    /// Publishes the terminal state and answers everything still waiting.
    fn finish(mut self, state: SessionState) {
        let err = terminal_error(state);
        info!(
            session = format_args!("{:#x}", self.session_id),
            ?state,
            "session ended"
        );
        self.publish(state, None, false);
        self.watches.end_session(&err, state.keeper_state());
        for cmd in self.queued.drain(..) {
            cmd.fail(&err);
        }
        for closer in self.closers.drain(..) {
            let _ = closer.send(Ok(()));
        }
        self.commands.close();
        while let Ok(cmd) = self.commands.try_recv() {
            cmd.fail(&err);
        }
    }
}

/// The connector's attempt to open a stream to `host`, owning what it needs so that it does not
/// borrow the driver.
fn open<C: Connector>(
    connector: &Arc<C>,
    host: &str,
) -> impl Future<Output = io::Result<C::Stream>> + Send + use<C> {
    let (connector, host) = (Arc::clone(connector), host.to_owned());
    async move { connector.connect(&host).await }
}

fn auth_request(scheme: &str, auth: &[u8]) -> Request {
    Request::Auth(AuthPacket {
        auth_type: 0,
        scheme: scheme.to_owned(),
        auth: Some(auth.to_vec()),
    })
}

fn terminal_error(state: SessionState) -> Error {
    match state {
        SessionState::Expired => Error::SessionExpired,
        SessionState::AuthFailed => Error::AuthFailed,
        _ => Error::Closed,
    }
}
