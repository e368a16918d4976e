//! The table of live connections, and the routing of messages onto their queues.
//!
//! Invariants:
//! * routing runs only under the core lock: [`Shared::with_core`](crate::shell::state::shared::Shared::with_core)
//!   hands the router to its closure for that, and every other holder of it (`Shared::router`)
//!   only reads the table, kills a connection, or, the log thread, releases what the gate held;
//!   so every connection's queue receives events and replies in the core's single total order
//!   (docs/protocol.md §9.6);
//! * with a data directory nothing routed reaches a queue before the gate lets it go
//!   (`gate.rs`), and it is charged to its connection's outbound limit from the moment it is
//!   routed (`outbox.rs`);
//! * a message for a connection that is gone is dropped, never queued.
//!
//! Lock order: the core lock, then the gate's, then this table's; never the other way round.
//! The table is read on every routing and changed only when a connection comes or goes: a
//! read-write lock lets the log thread's deliveries and a core call's charging share it.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use parking_lot::RwLock;
use tokio_util::sync::CancellationToken;

use crate::core::{Action, ConnId};
use crate::shell::route::backlog::Backlog;
use crate::shell::route::gate::Gate;
use crate::shell::route::outbound::{Outbound, from_actions};
use crate::shell::route::outbox::Outbox;
use crate::shell::state::stats::ConnStats;

/// A live connection, as the router sees it.
struct ConnEntry {
    tx: Outbox,
    stats: Arc<ConnStats>,
    /// Cancelled to drop the connection at once (a child of the shutdown token).
    kill: CancellationToken,
    /// The ensemble member it came in on (`ensemble/member.rs`).
    member: u64,
}

/// What a new connection may not exceed (0 for no limit).
pub(crate) struct Admission {
    /// `maxCnxns`: connections to the whole server.
    pub(crate) max: usize,
    /// `maxClientCnxns`: connections from one address.
    pub(crate) per_ip: usize,
}

/// The router of one server. See the module documentation.
pub(crate) struct Router {
    conns: RwLock<HashMap<ConnId, ConnEntry>>,
    next_conn: AtomicU64,
    /// With a data directory: what is routed waits here until the writes it may reveal are on
    /// disk.
    gate: Option<Gate>,
}

impl Router {
    /// A router; with a data directory, one whose gate counts what it holds in `backlog`.
    pub(crate) fn new(backlog: Option<Arc<Backlog>>) -> Router {
        Router {
            conns: RwLock::new(HashMap::new()),
            next_conn: AtomicU64::new(1),
            gate: backlog.map(Gate::new),
        }
    }

    /// Pushes the core's actions onto the queues of the connections they are for.
    pub(crate) fn route(&self, actions: Vec<Action>) {
        if !actions.is_empty() {
            self.route_outbound(from_actions(actions));
        }
    }

    /// Pushes messages onto the queues of the connections they are for, in order; those for a
    /// connection that is gone are dropped. With a data directory they go through the gate,
    /// charged to their connections' outbound limits first: what waits for the disk counts
    /// against the limit from the moment it is routed, so that a client's pipelined reads
    /// behind a slow fsync stop its reading rather than pile up unbounded.
    pub(crate) fn route_outbound(&self, routed: impl IntoIterator<Item = (ConnId, Outbound)>) {
        match &self.gate {
            Some(gate) => gate.stage(|staged| {
                let conns = self.conns.read();
                staged.extend(routed.into_iter().filter(|(conn, message)| {
                    conns
                        .get(conn)
                        .is_some_and(|entry| entry.tx.charge(message, &entry.stats))
                }));
            }),
            None => {
                let conns = self.conns.read();
                for (conn, message) in routed {
                    if let Some(entry) = conns.get(&conn) {
                        entry.tx.push(message, &entry.stats);
                    }
                }
            }
        }
    }

    /// Pushes messages the gate let go onto their connections' queues: they were charged when
    /// routed.
    fn deliver(&self, routed: impl IntoIterator<Item = (ConnId, Outbound)>) {
        let conns = self.conns.read();
        for (conn, message) in routed {
            if let Some(entry) = conns.get(&conn) {
                entry.tx.push_charged(message);
            }
        }
    }

    /// Ends a core call with a data directory: tags what it routed with `handed`, the last
    /// zxid handed to the log, and sends or holds it (`gate.rs`). Called under the core lock.
    pub(crate) fn seal(&self, handed: Option<i64>) {
        if let Some(gate) = &self.gate {
            gate.seal(handed, |routed| self.deliver(routed));
        }
    }

    /// The log has everything up to `zxid` on disk: releases what waited for it. Called by the
    /// log thread, through the durable lifecycle.
    pub(crate) fn release(&self, zxid: i64) {
        if let Some(gate) = &self.gate {
            gate.durable(zxid, |routed| self.deliver(routed));
        }
    }

    /// The gate, with a data directory.
    pub(crate) fn gate(&self) -> Option<&Gate> {
        self.gate.as_ref()
    }

    /// What the log and the gate hold for the disk, with a data directory.
    pub(crate) fn backlog(&self) -> Option<&Backlog> {
        self.gate.as_ref().map(Gate::backlog)
    }

    /// Adds a connection to the table, or refuses it (`None`) past `admission`'s limits.
    /// `established_ms` is the wall clock now, for `cons`.
    pub(crate) fn register(
        &self,
        peer: SocketAddr,
        member: u64,
        admission: Admission,
        established_ms: i64,
        tx: Outbox,
        kill: CancellationToken,
    ) -> Option<(ConnId, Arc<ConnStats>)> {
        let mut conns = self.conns.write();
        if admission.max > 0 && conns.len() >= admission.max {
            return None;
        }
        if admission.per_ip > 0 {
            let same_ip = conns
                .values()
                .filter(|c| c.stats.peer.ip() == peer.ip())
                .count();
            if same_ip >= admission.per_ip {
                return None;
            }
        }
        let id = self.next_conn.fetch_add(1, Relaxed);
        let stats = Arc::new(ConnStats::new(peer, established_ms));
        conns.insert(
            id,
            ConnEntry {
                tx,
                stats: stats.clone(),
                kill,
                member,
            },
        );
        Some((id, stats))
    }

    /// Forgets a connection; its outbox goes with it, which tells its writer.
    pub(crate) fn remove(&self, conn: ConnId) {
        self.conns.write().remove(&conn);
    }

    /// Drops a connection's stream at once, without writing anything more to it.
    pub(crate) fn kill(&self, conn: ConnId) {
        if let Some(entry) = self.conns.read().get(&conn) {
            entry.kill.cancel();
        }
    }

    /// Drops at once, as [`Router::kill`] does, every connection whose member `drop` names.
    pub(crate) fn kill_where(&self, drop: impl Fn(u64) -> bool) {
        for entry in self.conns.read().values() {
            if drop(entry.member) {
                entry.kill.cancel();
            }
        }
    }

    /// How many connections are open.
    pub(crate) fn connections(&self) -> usize {
        self.conns.read().len()
    }

    /// Every live connection's counters, by id.
    pub(crate) fn connection_stats(&self) -> Vec<(ConnId, Arc<ConnStats>)> {
        let mut all: Vec<_> = self
            .conns
            .read()
            .iter()
            .map(|(id, c)| (*id, c.stats.clone()))
            .collect();
        all.sort_by_key(|(id, _)| *id);
        all
    }

    /// The ensemble member a connection came in on.
    pub(crate) fn connection_member(&self, conn: ConnId) -> Option<u64> {
        self.conns.read().get(&conn).map(|c| c.member)
    }

    /// Whether any connection of `member` is open.
    pub(crate) fn member_connected(&self, member: u64) -> bool {
        self.conns.read().values().any(|c| c.member == member)
    }
}
