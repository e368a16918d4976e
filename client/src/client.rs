//! The [`Client`] handle: connecting, the session's status, auth and close, and the one path
//! by which every operation reaches the connection task.
//!
//! Invariants: a `Client` exists only once a session was established; clones share one
//! session and one connection task; when the last clone is dropped the task closes the session
//! in the background. Paths are chrooted here and in `ops.rs`, never in the task (except event
//! paths, which the watch registry strips).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use shepherd_protocol::{Request, Response};
use tokio::sync::{mpsc, oneshot, watch};

use crate::chroot::Chroot;
use crate::config::{ClientBuilder, Config};
use crate::conn::{Command, Driver, WatchReg};
use crate::connector::{Connector, TcpConnector};
use crate::error::Error;
use crate::session::{SessionState, SessionStatus};
use crate::tls::TlsConnector;

/// Commands queued towards the connection task before callers wait for room.
const COMMAND_QUEUE: usize = 1024;

/// A handle on one ZooKeeper session. Cheap to clone; all clones share the session.
///
/// Every operation is an `async fn` that sends one request (or none, for misuse caught
/// locally) and waits for its reply.
///
/// **Ordering.** Requests are sent in the order they enter the client's queue, and ZooKeeper
/// applies and answers them in that order. A call enters the queue when first polled if the
/// queue has room (1024 commands), else it waits for room in FIFO order: so calls awaited one
/// after another, or polled in order (`join!`, a loop of first polls), are applied in that
/// order, and a call awaited after another sees its effect. A watch event is always delivered before the reply to any later request that
/// reveals the change (docs/protocol.md §9.6): when a call returns, the events that precede its reply have
/// already resolved their watchers.
///
/// **Cancellation.** Dropping an operation's future never corrupts the client, but once the
/// request was handed to the connection task it is sent and may be applied: only the reply is
/// discarded. Treat a cancelled write like [`Error::ConnectionLoss`]: outcome unknown.
///
/// **Errors common to every operation.** [`Error::ConnectionLoss`] when the connection drops
/// while the request is queued or in flight (never retried); [`Error::SessionExpired`],
/// [`Error::Closed`] or [`Error::AuthFailed`] once the session has ended;
/// [`Error::InvalidArgument`] for a relative path; [`Error::Keeper`] with the server's code.
#[derive(Debug, Clone)]
pub struct Client {
    pub(crate) shared: Arc<Shared>,
}

#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) commands: mpsc::Sender<Command>,
    status: watch::Receiver<SessionStatus>,
    pub(crate) chroot: Chroot,
    session_id: i64,
    password: Vec<u8>,
    next_watch_id: AtomicU64,
}

impl Client {
    /// Connects with default options to `host:port,host:port/chroot`.
    ///
    /// # Errors
    /// As [`ClientBuilder::connect`].
    pub async fn connect(connect_string: &str) -> Result<Client, Error> {
        ClientBuilder::default().connect(connect_string).await
    }

    /// A builder for timeouts, credentials, chroot and session resumption.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    pub(crate) async fn start<C: Connector>(config: Config, connector: C) -> Result<Client, Error> {
        let chroot = config.chroot.clone();
        let (commands, rx) = mpsc::channel(COMMAND_QUEUE);
        let (driver, link) = Driver::connect(config, connector, rx).await?;
        let status = driver.subscribe();
        let (session_id, password) = driver.credentials();
        tokio::spawn(driver.run(link));
        Ok(Client {
            shared: Arc::new(Shared {
                commands,
                status,
                chroot,
                session_id,
                password,
                next_watch_id: AtomicU64::new(1),
            }),
        })
    }

    /// The session id.
    pub fn session_id(&self) -> i64 {
        self.shared.session_id
    }

    /// The session password, for resuming the session elsewhere with
    /// [`ClientBuilder::session`].
    pub fn session_password(&self) -> &[u8] {
        &self.shared.password
    }

    /// The chroot every path is relative to, if any.
    pub fn chroot(&self) -> Option<&str> {
        self.shared.chroot.as_str()
    }

    /// The session's status now.
    pub fn status(&self) -> SessionStatus {
        self.shared.status.borrow().clone()
    }

    /// A receiver that sees every change of the session's status. It keeps the last status
    /// (a terminal one) after the client is gone.
    pub fn status_watch(&self) -> watch::Receiver<SessionStatus> {
        self.shared.status.clone()
    }

    /// Adds a credential to the session's connection, and to every later connection.
    ///
    /// # Errors
    /// [`Error::AuthFailed`] if the server refuses the scheme (the session then ends: state
    /// AuthFailed); [`Error::ConnectionLoss`] if the connection dropped first (the credential
    /// is re-sent on reconnect if it had been sent; calling again is harmless).
    ///
    /// # Cancellation
    /// As for operations: once queued, the credential is sent.
    pub async fn add_auth(&self, scheme: &str, auth: &[u8]) -> Result<(), Error> {
        let (reply, rx) = oneshot::channel();
        let cmd = Command::Auth {
            scheme: scheme.to_owned(),
            auth: auth.to_vec(),
            reply,
        };
        self.enqueue(cmd).await?;
        rx.await.unwrap_or_else(|_| Err(self.ended()))
    }

    /// Adds a `digest` credential (`user:password`). See [`Client::add_auth`].
    ///
    /// # Errors
    /// As [`Client::add_auth`]; ZooKeeper accepts any digest (a wrong password just matches no
    /// ACL).
    pub async fn add_digest(&self, user_password: &str) -> Result<(), Error> {
        self.add_auth("digest", user_password.as_bytes()).await
    }

    /// Closes the session: sends closeSession after every request already queued and waits
    /// for its reply. The server deletes the session's ephemerals; every clone of this client
    /// then fails with [`Error::Closed`], watchers resolve with it too.
    ///
    /// Closing an ended session does nothing and succeeds. While disconnected, the session is
    /// abandoned locally and left to expire on the server.
    ///
    /// # Errors
    /// [`Error::ConnectionLoss`] if the connection dropped before the reply: the client is
    /// closed regardless, but the session lingers on the server until it expires.
    ///
    /// # Cancellation
    /// Once queued, the close happens even if this future is dropped.
    pub async fn close(&self) -> Result<(), Error> {
        let (reply, rx) = oneshot::channel();
        if self.enqueue(Command::Close { reply }).await.is_err() {
            return Ok(());
        }
        rx.await.unwrap_or(Ok(()))
    }

    /// Hands a command to the connection task. With room in the queue this happens at the
    /// first poll, without yielding (so calls polled in order are sent in order, whatever
    /// tokio's cooperative budget says); otherwise it waits in FIFO order for room.
    async fn enqueue(&self, cmd: Command) -> Result<(), Error> {
        let cmd = match self.shared.commands.try_send(cmd) {
            Ok(()) => return Ok(()),
            Err(mpsc::error::TrySendError::Full(cmd)) => cmd,
            Err(mpsc::error::TrySendError::Closed(_)) => return Err(self.ended()),
        };
        self.shared
            .commands
            .send(cmd)
            .await
            .map_err(|_| self.ended())
    }

    /// The error for a session that has ended, from its published state.
    pub(crate) fn ended(&self) -> Error {
        match self.shared.status.borrow().state {
            SessionState::Expired => Error::SessionExpired,
            SessionState::AuthFailed => Error::AuthFailed,
            _ => Error::Closed,
        }
    }

    pub(crate) fn next_watch_id(&self) -> u64 {
        self.shared.next_watch_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Sends a request and waits for its reply. `path` is the server path a watch is
    /// registered on.
    pub(crate) async fn call(
        &self,
        request: Request,
        path: String,
        watch: Option<WatchReg>,
    ) -> Result<Response, Error> {
        let (reply, rx) = oneshot::channel();
        let cmd = Command::Request {
            request,
            path,
            watch,
            reply,
        };
        self.enqueue(cmd).await?;
        rx.await.unwrap_or_else(|_| Err(self.ended()))
    }

    /// The server path for a user path.
    pub(crate) fn server_path(&self, path: &str) -> Result<String, Error> {
        self.shared.chroot.prefix(path)
    }

    /// The user path for a server path.
    pub(crate) fn user_path(&self, path: &str) -> String {
        self.shared.chroot.strip(path)
    }
}

// Here rather than in config.rs, beside the options: starting a session is the client's
// business, and the options must not depend on the client they configure.
impl ClientBuilder {
    /// Connects to the first host, in shuffled order, that completes a handshake.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a bad connect string or option; the last attempt's
    /// [`Error::Io`] or [`Error::Protocol`] when every host failed once;
    /// [`Error::SessionExpired`] when resuming a session the server no longer knows;
    /// [`Error::InvalidArgument`] for bad TLS PEM or server name (before any connection);
    /// a failed TLS handshake is that attempt's [`Error::Io`] with rustls' reason in it;
    /// [`Error::AuthFailed`] when the server refused the SASL credentials.
    ///
    /// # Cancellation
    /// Dropping the future abandons the attempt; no session is left behind except one the
    /// server created and will expire.
    pub async fn connect(self, connect_string: &str) -> Result<Client, Error> {
        self.connect_with(connect_string, TcpConnector).await
    }

    /// As [`ClientBuilder::connect`], but every connection (the first and each reconnect) is
    /// opened by `connector` instead of TCP; the hosts of the connect string are what it is
    /// asked for. See [`Connector`] for closures and for its errors, cancellation and ordering.
    ///
    /// # Errors
    /// As [`ClientBuilder::connect`]; a connector's own failure is the attempt's
    /// [`Error::Io`].
    ///
    /// # Cancellation
    /// As [`ClientBuilder::connect`]; the connector's pending future is dropped with it.
    pub async fn connect_with<C: Connector>(
        self,
        connect_string: &str,
        connector: C,
    ) -> Result<Client, Error> {
        let (config, tls) = self.into_config(connect_string)?;
        match tls {
            Some(tls) => Client::start(config, TlsConnector::new(connector, tls)).await,
            None => Client::start(config, connector).await,
        }
    }
}

/// The error for a reply of the wrong kind (a server bug, or a protocol mismatch).
pub(crate) fn unexpected(response: &Response) -> Error {
    Error::Protocol(format!("unexpected reply {:?}", response.op_code()))
}
