//! The commands callers send to the connection task, and how one is answered without being
//! run.
//!
//! Invariants: every command that carries a reply channel is answered exactly once, by the task
//! running it or by [`Command::fail`]; a dropped [`crate::PersistentWatcher`] becomes a
//! `DropPersistent` command through the [`Unwatch`] implementation here, which is how the
//! watch handles reach the task without depending on it.

use shepherd_protocol::{Request, Response};
use tokio::sync::{mpsc, oneshot};

use super::watch_registry::WatchReg;
use crate::error::Error;
use crate::watch::Unwatch;

/// What callers ask the connection task to do.
#[derive(Debug)]
pub(crate) enum Command {
    /// Send a request; `path` is the server path a watch would be registered on.
    Request {
        request: Request,
        path: String,
        watch: Option<WatchReg>,
        reply: oneshot::Sender<Result<Response, Error>>,
    },
    /// Add a credential to the connection (and to every later one).
    Auth {
        scheme: String,
        auth: Vec<u8>,
        reply: oneshot::Sender<Result<(), Error>>,
    },
    /// Close the session.
    Close {
        reply: oneshot::Sender<Result<(), Error>>,
    },
    /// A persistent watcher handle was dropped.
    DropPersistent { path: String, id: u64 },
}

impl Command {
    /// Answers the command without running it.
    pub(crate) fn fail(self, err: &Error) {
        match self {
            Command::Request { reply, .. } => drop(reply.send(Err(err.for_waiter()))),
            Command::Auth { reply, .. } => drop(reply.send(Err(err.for_waiter()))),
            Command::Close { reply } => drop(reply.send(Ok(()))),
            Command::DropPersistent { .. } => {}
        }
    }
}

impl Unwatch for mpsc::WeakSender<Command> {
    fn unwatch(&self, path: String, id: u64) {
        if let Some(commands) = self.upgrade() {
            // Best effort: with a full queue the entry is pruned at the next event instead.
            let _ = commands.try_send(Command::DropPersistent { path, id });
        }
    }
}
