//! The state every task of one server shares: the core behind its lock, and the write path
//! (`route/`) that carries what the core produces to the connections.
//!
//! [`Shared`] is a handle with synchronous methods: a lock is taken, the core is called, the
//! actions it returns are handed to the router, the call's log entries to the log, and the lock
//! is released, never across an `.await`. Each connection's task drains its own queue.
//!
//! Ordering invariant: actions are routed while the core lock is held, so every connection's
//! queue receives events and replies in the core's single total order (docs/protocol.md §9.6).
//!
//! Lock order: the core lock, then the write path's (`route/`); never the other way round.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::core::{Action, ConnId, Core, Now};
use crate::shell::controls::faults::FaultRules;
use crate::shell::controls::freeze::FrozenSessions;
use crate::shell::durable::store::Durable;
use crate::shell::ensemble::member::Members;
use crate::shell::net::tls::accept::Secure;
use crate::shell::route::outbox::Outbox;
use crate::shell::route::router::{Admission, Router};
use crate::shell::state::clock::Clock;
use crate::shell::state::stats::{ConnStats, ServerStats};

/// State shared by every task of one server.
///
/// The core is behind a private lock: [`Shared::with_core`] for changes, whose actions are
/// routed before the lock is released, and [`Shared::query`] for reads. Nothing else touches
/// the lock, and neither method can hold it across an `.await` (their closures are
/// synchronous).
pub(crate) struct Shared {
    core: Mutex<Core>,
    router: Router,
    pub(crate) config: Config,
    pub(crate) stats: ServerStats,
    pub(crate) clock: Clock,
    /// Wakes the ticker when a deadline may have moved earlier.
    pub(crate) ticker: Notify,
    /// Wakes the sweep loop when gone connections left watches to remove (`sweeper.rs`).
    pub(crate) sweeper: Notify,
    /// One answer that lists state (`wchc`, `dump`, the AdminServer's twins) is built at a
    /// time (`observe/admin.rs`).
    pub(crate) walks: Arc<tokio::sync::Semaphore>,
    started: Instant,
    /// Fault rules matched per request.
    pub(crate) faults: FaultRules,
    /// Frozen sessions, whose connections neither read nor write.
    pub(crate) frozen: FrozenSessions,
    /// Notified (all waiters) after every change of the core, when anyone waits for one.
    core_changed: Notify,
    /// How many wait on `core_changed` ([`Shared::wait_until`]): with none, which is always
    /// outside tests and shutdown, a core call skips the notify and the lock it takes.
    core_watchers: AtomicUsize,
    /// With a data directory: the log thread, snapshots and what they need.
    pub(crate) durable: Option<Durable>,
    /// The listener's and the connections' token: cancelled to drop them all (a restart, a
    /// failed log), then replaced. A child of the shutdown token.
    pub(crate) generation: Mutex<CancellationToken>,
    /// The client endpoints (one per ensemble member; one for a single server).
    pub(crate) members: Members,
    /// The TLS acceptor built at start from the configuration's key material; `None` when TLS
    /// is off.
    pub(crate) secure: Option<Arc<Secure>>,
}

impl Shared {
    /// The shared state of a server whose core starts as `core`.
    pub(crate) fn new(
        config: Config,
        core: Core,
        clock: Clock,
        durable: Option<Durable>,
        generation: CancellationToken,
        members: Members,
        secure: Option<Arc<Secure>>,
    ) -> Shared {
        Shared {
            core: Mutex::new(core),
            router: Router::new(durable.as_ref().map(Durable::backlog)),
            config,
            stats: ServerStats::default(),
            clock,
            ticker: Notify::new(),
            sweeper: Notify::new(),
            walks: Arc::new(tokio::sync::Semaphore::new(1)),
            started: Instant::now(),
            faults: FaultRules::new(),
            frozen: FrozenSessions::new(),
            core_changed: Notify::new(),
            core_watchers: AtomicUsize::new(0),
            durable,
            generation: Mutex::new(generation),
            members,
            secure,
        }
    }

    /// Runs `f` on the core under its lock, with the router to route what it produces while
    /// the lock is still held; then wakes the ticker if the core's next deadline moved earlier
    /// (a new session, a first container or TTL node), and everything waiting on a change of
    /// the core.
    pub(crate) fn with_core<T>(&self, f: impl FnOnce(&mut Core, &Router) -> T) -> T {
        let mut core = self.core.lock();
        let before = core.next_deadline();
        let out = f(&mut core, &self.router);
        // Still under the core lock, so entries reach the log in zxid order and every message
        // is tagged with the writes it may reveal; the log thread is woken once it is released.
        let handed_to = self.durable.as_ref().and_then(|durable| {
            let handed = durable.hand_over(&mut core);
            self.router.seal(handed);
            handed.map(|_| durable)
        });
        let after = core.next_deadline();
        let sweep = core.sweep_pending();
        drop(core);
        if let Some(durable) = handed_to {
            durable.wake_log();
        }
        if sweep {
            self.sweeper.notify_one();
        }
        // The ticker sleeps until `before` (or forever); every move earlier wakes it, so it
        // never sleeps past a deadline, whichever task made it.
        if after.is_some_and(|at| before.is_none_or(|was| at < was)) {
            self.wake_ticker();
        }
        self.core_changed();
        out
    }

    /// Calls the core with the current time and routes the actions it returns, under the lock.
    pub(crate) fn apply(&self, f: impl FnOnce(&mut Core, Now) -> Vec<Action>) {
        self.with_core(|core, router| router.route(f(core, self.clock.now())));
    }

    /// One slice of the sweep (`sweeper.rs`): removes up to `max` registrations gone
    /// connections left, then hands the lock to a waiting task, if any, and only then frees
    /// what the slice took out of the core. Returns whether more remain.
    pub(crate) fn sweep_slice(&self, max: usize) -> bool {
        let mut core = self.core.lock();
        let swept = core.sweep(max);
        parking_lot::MutexGuard::unlock_fair(core);
        swept.more
    }

    /// Reads the core under its lock.
    pub(crate) fn query<T>(&self, f: impl FnOnce(&Core) -> T) -> T {
        f(&self.core.lock())
    }

    /// Replaces the core (a restart's recovery) and, with a data directory, restarts the gate
    /// from `durable`, under the core lock: what the old core routed and never released is
    /// dropped with it.
    pub(crate) fn replace_core(&self, core: Core, durable: i64) {
        let mut locked = self.core.lock();
        let old = std::mem::replace(&mut *locked, core);
        if let Some(gate) = self.router.gate() {
            gate.reset(durable);
        }
        drop(locked);
        // Freeing a large tree takes time: not under the lock.
        drop(old);
        self.wake_ticker();
        self.core_changed();
    }

    /// Holds `view`, computed from the core, until everything handed to the log when it was
    /// computed is on disk: a window on the core (a four-letter word, the AdminServer,
    /// `/metrics`) shows only durable state, as the replies do (`route/gate.rs`). `None` when
    /// the log has failed: the view must not be shown. In memory, `view` at once. The last zxid
    /// handed is read after `view` was computed, so it covers everything `view` can show.
    /// Cancellation safe.
    pub(crate) async fn durable_view<T>(&self, view: T) -> Option<T> {
        let Some(gate) = self.router.gate() else {
            return Some(view);
        };
        let handed = gate.handed();
        gate.until_durable(handed).await.then_some(view)
    }

    /// The write path: the connection table, the gate and what it holds.
    pub(crate) fn router(&self) -> &Router {
        &self.router
    }

    /// Wakes every [`Shared::wait_until`], if any. Called after the core lock is released.
    fn core_changed(&self) {
        if self.core_watchers.load(SeqCst) > 0 {
            self.core_changed.notify_waiters();
        }
    }

    /// Resolves once `done` holds: checked now, then after every change of the core
    /// ([`Shared::with_core`], [`Shared::replace_core`]). `done` must read what it checks under
    /// a lock the change also takes (the core's or the connection table's), so that a change
    /// made between the check and the wait is never missed. Cancellation safe.
    pub(crate) async fn wait_until(&self, mut done: impl FnMut(&Shared) -> bool) {
        /// Counts the waiter in for as long as it waits, however the wait ends.
        struct Watching<'a>(&'a AtomicUsize);
        impl Drop for Watching<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, SeqCst);
            }
        }
        self.core_watchers.fetch_add(1, SeqCst);
        let _watching = Watching(&self.core_watchers);
        loop {
            let changed = self.core_changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if done(self) {
                return;
            }
            changed.await;
        }
    }

    /// Resolves once no connection is registered (each leaves through `unregister`, a change
    /// of the core). Cancellation safe.
    pub(crate) async fn wait_no_connections(&self) {
        self.wait_until(|shared| shared.router.connections() == 0)
            .await;
    }

    /// Registers a new connection, or refuses it when `per_ip_limit` (0 for none) connections
    /// from the same address, or `maxCnxns` in all, are already open.
    pub(crate) fn register(
        &self,
        peer: SocketAddr,
        member: u64,
        per_ip_limit: usize,
        tx: Outbox,
        kill: CancellationToken,
    ) -> Option<(ConnId, Arc<ConnStats>)> {
        let admission = Admission {
            max: self.config.max_cnxns,
            per_ip: per_ip_limit,
        };
        let now = self.clock.now().wall_ms;
        self.router.register(peer, member, admission, now, tx, kill)
    }

    /// Forgets a connection whose task has ended, in the core and in the table.
    pub(crate) fn unregister(&self, conn: ConnId) {
        self.with_core(|core, router| {
            core.close_connection(conn);
            router.remove(conn);
        });
    }

    /// Resolves once no connection of `member` is registered. Cancellation safe.
    pub(crate) async fn wait_member_gone(&self, member: u64) {
        self.wait_until(|shared| !shared.router.member_connected(member))
            .await;
    }

    /// How long the server has been running.
    pub(crate) fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    /// Tells the ticker that the core's next deadline may have moved earlier.
    pub(crate) fn wake_ticker(&self) {
        self.ticker.notify_one();
    }
}
