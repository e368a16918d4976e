//! The mutex workload in the chaos run ([`chaos`](crate::proof::chaos)): one client contends
//! for its lock kind again and again, and while holding writes the family's resource (a
//! writer) or validates a read of it (a reader), reporting each step to the lock checker. When
//! its session ends it carries on with a new one, as an application would. A recorded worker
//! (a writer the nemesis spares) also records each hold in the history as the mutex workload
//! does: acquire, each guarded write, release, all as one process; a release is recorded ok
//! only when nothing (a `lost()`, a session gone) says the lock may have ended before it.
//!
//! Each iteration is bounded by
//! [`ChaosConfig::hang_bound`](crate::proof::chaos::ChaosConfig::hang_bound): an iteration
//! past it is a hang (and a recorded operation left open is recorded info). A holder told by
//! the nemesis to pause freezes its own session (nothing it sends reaches the server, as for a
//! process stopped by a long GC pause), sleeps past the session timeout without watching
//! `lost()`, thaws, and only then writes: the write of a paused holder that wakes late, which
//! fencing must refuse. Its lock session has usually expired by then, and a client refuses to
//! send anything on an expired session; the write therefore goes through the run's storage
//! session, as a process that wakes up writes to a storage service it has its own connection
//! to: the same guarded multi (an existence check on each lock node, then the write), carrying
//! the same token.

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shepherd_client::{Client, Error as ZkError, ErrorCode, MultiBuilder, WriteResult};
use shepherd_recipes::{AnyGuard, Error, Guard, Lock, LockKind, LostReason};
use tokio::time::{sleep, timeout};

use super::family::{FAMILIES, assign, decode_resource, encode_resource, is_reader};
use crate::proof::chaos::ChaosConfig;
use crate::proof::chaos::ctx::Ctx;
use crate::proof::check::locks::{Holder, Kind};
use crate::proof::history::{F, Pending, Value};
use crate::proof::nemesis::session::FaultKind;
use crate::proof::workload::plan::Process;

/// Runs worker `index` until the run stops; returns its session, still open, so that the
/// orphan check sees the tree before the session's close would tidy it.
pub async fn run(ctx: Arc<Ctx>, index: usize) -> Option<Client> {
    let (kind, family) = assign(index);
    let mut rng =
        StdRng::seed_from_u64(ctx.config.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ index as u64);
    let slot = &ctx.sessions.slots[index];
    let recorded = ChaosConfig::is_recorded(index, !is_reader(kind));
    let mut process = Process::new(index, ctx.config.clients);
    let mut client: Option<Client> = None;
    while !ctx.stopping() {
        let c = match &client {
            Some(c) if !c.status().state.is_terminal() => c.clone(),
            _ => {
                if client.take().is_some() {
                    ctx.counters.sessions_replaced.inc();
                }
                slot.session.store(0, Relaxed);
                slot.step("connect");
                match ctx.connect().await {
                    Ok(c) => {
                        slot.session.store(c.session_id(), Relaxed);
                        client = Some(c.clone());
                        c
                    }
                    // A connect that failed (say, its handshake cut) is retried.
                    Err(_) => continue,
                }
            }
        };
        let work = Work {
            ctx: &ctx,
            client: &c,
            kind,
            family,
            index,
            process: recorded.then_some(process.id()),
        };
        let known = timeout(ctx.config.hang_bound(), work.iteration(&mut rng)).await;
        if !matches!(known, Ok(true)) {
            process.crashed();
        }
        if known.is_err() {
            ctx.checker.violation(
                Kind::Hang,
                format!(
                    "worker {index} ({}) stuck in {} for {:?}",
                    kind.as_str(),
                    slot.current_step(),
                    ctx.config.hang_bound()
                ),
            );
            // Start over with a new session rather than trust this one.
            let _ = timeout(ctx.config.session_timeout, c.close()).await;
        }
        slot.holding.store(false, Relaxed);
    }
    slot.step("done");
    client
}

/// One worker's iteration, with what it needs.
struct Work<'a> {
    ctx: &'a Ctx,
    client: &'a Client,
    kind: LockKind,
    family: usize,
    index: usize,
    /// The process the iteration records as, for a recorded worker.
    process: Option<u64>,
}

/// How a writer's write ended.
enum Written {
    /// The resource took it.
    Accepted,
    /// Refused: the lock was gone, or the token stale.
    Refused,
    /// Not known, or failed otherwise.
    Unknown,
}

impl Work<'_> {
    /// Invokes `f` in the history, for a recorded worker.
    fn invoke(&self, f: F, value: Value) -> Option<Pending> {
        let name = FAMILIES[self.family].name;
        self.process
            .map(|p| self.ctx.recorder.invoke(p, f, Some(name), value))
    }

    /// One acquire, hold and release; whether every recorded outcome is known.
    async fn iteration(&self, rng: &mut StdRng) -> bool {
        let ctx = self.ctx;
        let t = ctx.config.session_timeout;
        let slot = &ctx.sessions.slots[self.index];
        slot.step("acquire");
        ctx.counters.acquire_attempts.inc();
        let lock = self
            .kind
            .build(self.client, FAMILIES[self.family].lock_path());
        let wait = t.mul_f64(rng.random_range(0.0..1.0));
        let acquire = self.invoke(F::Acquire, Value::Nil);
        match lock.acquire_timeout(wait).await {
            Ok(None) => {
                ctx.counters.acquire_timeouts.inc();
                if let Some(acquire) = acquire {
                    acquire.fail(Value::Nil);
                }
                true
            }
            Ok(Some(guard)) => {
                let token = guard.fencing_token().into_iter().max().unwrap_or(0);
                if let Some(acquire) = acquire {
                    acquire.ok(Value::Token(token));
                }
                self.hold(guard, token, rng).await
            }
            Err(e) => {
                if let Some(acquire) = acquire {
                    acquire.info(Value::Nil);
                }
                ctx.counters.acquire_errors.inc();
                if !expected(&e) {
                    ctx.checker.violation(
                        Kind::Unexpected,
                        format!(
                            "worker {} ({}) acquire: {e:?}",
                            self.index,
                            self.kind.as_str()
                        ),
                    );
                }
                false
            }
        }
    }

    /// Holds `guard` (recorded with `recorded_token`), then releases it; whether every
    /// recorded outcome is known.
    async fn hold(&self, guard: AnyGuard, recorded_token: i64, rng: &mut StdRng) -> bool {
        let ctx = self.ctx;
        let t = ctx.config.session_timeout;
        let slot = &ctx.sessions.slots[self.index];
        let mut known = true;
        let token = guard.fencing_token();
        let holder = Holder {
            id: ctx.next_holder(),
            worker: self.index,
            family: self.family,
            reader: is_reader(self.kind),
            nodes: guard
                .paths()
                .into_iter()
                .map(str::to_owned)
                .zip(token.iter().copied())
                .collect(),
            token,
            session: self.client.session_id(),
        };
        ctx.checker.enter(holder.clone());
        ctx.check_exclusion(Some(self.family));
        ctx.counters.acquired[self.family].inc();
        if holder.reader {
            ctx.counters.acquired_read.inc();
        }
        slot.holding.store(true, Relaxed);
        let lost = guard.lost();
        tokio::pin!(lost);
        let mut lost_reason = None;
        for _ in 0..rng.random_range(1..=3) {
            let late = slot.pause.swap(false, Relaxed);
            if late {
                self.pause(rng).await;
            } else {
                slot.step("hold");
                let gap = t.mul_f64(rng.random_range(0.0..0.25));
                tokio::select! {
                    reason = &mut lost => {
                        lost_reason = Some(reason);
                        break;
                    }
                    () = sleep(gap) => {}
                }
            }
            slot.step("write");
            let via = if late {
                Via::Storage
            } else {
                Via::Guard(&guard)
            };
            if holder.reader {
                self.validated_read(via, &holder).await;
            } else {
                // Only the lock's own session's writes are the workload's; a paused holder
                // is never a recorded one.
                let write = match via {
                    Via::Guard(_) => self.invoke(F::Write, Value::Token(recorded_token)),
                    Via::Storage => None,
                };
                let written = self.fenced_write(via, &holder).await;
                if let Some(write) = write {
                    let value = Value::Token(recorded_token);
                    match written {
                        Written::Accepted => write.ok(value),
                        Written::Refused => write.fail(value),
                        Written::Unknown => {
                            write.info(value);
                            known = false;
                        }
                    }
                }
            }
        }
        ctx.checker.leave(self.family, holder.id);
        slot.holding.store(false, Relaxed);
        // A holder whose session ended must be told: lost() resolves within a bound.
        if lost_reason.is_none() && ctx.server().controls().session(holder.session).is_none() {
            slot.step("lost");
            match timeout(t * 3, &mut lost).await {
                Ok(reason) => lost_reason = Some(reason),
                Err(_) => ctx.checker.violation(
                    Kind::LostNotFired,
                    format!(
                        "worker {} ({}) session 0x{:x} ended, lost() silent for {:?}",
                        self.index,
                        self.kind.as_str(),
                        holder.session,
                        t * 3
                    ),
                ),
            }
        }
        if let Some(reason) = lost_reason {
            ctx.counters.lost(reason);
        }
        slot.step("release");
        let release = self.invoke(F::Release, Value::Token(recorded_token));
        let released = guard.release().await;
        if let Some(release) = release {
            // Surely held until now only if nothing says the lock may have gone before: no
            // `lost()`, and the session (whose ephemeral nodes are the lock) still alive.
            let surely = released.is_ok()
                && lost_reason.is_none()
                && ctx.server().controls().session(holder.session).is_some();
            if surely {
                release.ok(Value::Token(recorded_token));
            } else {
                release.info(Value::Token(recorded_token));
                known = false;
            }
        }
        match released {
            Ok(()) => ctx.counters.releases.inc(),
            Err(e) if expected(&e) => ctx.counters.releases.inc(),
            Err(e) => ctx.checker.violation(
                Kind::Unexpected,
                format!(
                    "worker {} ({}) release: {e:?}",
                    self.index,
                    self.kind.as_str()
                ),
            ),
        }
        known
    }

    /// A stop-the-world pause past the session timeout: the session is frozen so nothing of
    /// ours reaches the server meanwhile, and `lost()` is not watched.
    async fn pause(&self, rng: &mut StdRng) {
        let ctx = self.ctx;
        let slot = &ctx.sessions.slots[self.index];
        slot.step("pause");
        let session = self.client.session_id();
        if ctx.server().controls().freeze_session(session).is_err() {
            return;
        }
        ctx.sessions.faults[FaultKind::HolderPause as usize].inc();
        sleep(
            ctx.config
                .session_timeout
                .mul_f64(rng.random_range(1.5..2.5)),
        )
        .await;
        ctx.server().controls().thaw_session(session);
        ctx.counters.late_writes.inc();
    }

    /// A writer's write: the guarded write (applied only while our lock node exists), after a
    /// token compare-and-set where the family needs one.
    async fn fenced_write(&self, via: Via<'_>, holder: &Holder) -> Written {
        let ctx = self.ctx;
        let family = &FAMILIES[self.family];
        let resource = family.resource_path();
        let mut version = None;
        if family.token_cas {
            let Ok((data, stat)) = self.reader(via).get_data(&resource).await else {
                ctx.counters.writes_unknown.inc();
                return Written::Unknown;
            };
            if let Some((stored, by)) = decode_resource(&data) {
                if stored > holder.token || (stored == holder.token && by != holder.id) {
                    ctx.counters.writes_refused_stale.inc();
                    if ctx.is_valid(holder) {
                        ctx.checker.violation(
                            Kind::ValidHolderRefused,
                            format!(
                                "{}: holder {} token {:?} found {stored:?} by holder {by}",
                                family.name, holder.id, holder.token
                            ),
                        );
                    }
                    return Written::Refused;
                }
            }
            version = Some(stat.version);
        }
        let data = encode_resource(&holder.token, holder.id);
        match self
            .guarded(via, holder, |m| m.set_data(&resource, &data, version))
            .await
        {
            Ok(results) => {
                let Some(WriteResult::DataSet(stat)) = results.first() else {
                    ctx.counters.writes_unknown.inc();
                    return Written::Unknown;
                };
                ctx.counters.writes_accepted.inc();
                ctx.checker
                    .accepted_write(self.family, stat.mzxid, &holder.token, holder.id);
                ctx.check_exclusion(Some(self.family));
                Written::Accepted
            }
            Err(Error::LockLost(_)) => {
                ctx.counters.writes_refused_lost.inc();
                Written::Refused
            }
            // Someone wrote between our read and our write: a late holder whose existence
            // check passed on the next holder's re-created node; its token was not larger.
            Err(Error::Client(ZkError::MultiFailed {
                code: ErrorCode::BadVersion,
                ..
            })) => {
                ctx.counters.writes_refused_stale.inc();
                Written::Refused
            }
            Err(_) => {
                ctx.counters.writes_unknown.inc();
                Written::Unknown
            }
        }
    }

    /// A reader's read, validated by a guarded check that the resource did not change: the
    /// value read was current while our lock node existed.
    async fn validated_read(&self, via: Via<'_>, holder: &Holder) {
        let ctx = self.ctx;
        let resource = FAMILIES[self.family].resource_path();
        let Ok((data, stat)) = self.reader(via).get_data(&resource).await else {
            ctx.counters.writes_unknown.inc();
            return;
        };
        match self
            .guarded(via, holder, |m| m.check(&resource, stat.version))
            .await
        {
            Ok(_) => {
                ctx.counters.reads_validated.inc();
                if let Some((writer, _)) = decode_resource(&data) {
                    ctx.checker
                        .validated_read(self.family, &holder.token, &writer, holder.id);
                }
                ctx.check_exclusion(Some(self.family));
            }
            Err(Error::LockLost(_)) => ctx.counters.writes_refused_lost.inc(),
            // Our lock node existed throughout, yet a writer wrote: no writer may be inside
            // while a reader holds.
            Err(Error::Client(ZkError::MultiFailed {
                code: ErrorCode::BadVersion,
                ..
            })) => ctx.checker.violation(
                Kind::ReaderSawLaterWriter,
                format!(
                    "{}: the resource changed under valid reader {} (token {:?})",
                    FAMILIES[self.family].name, holder.id, holder.token
                ),
            ),
            Err(_) => ctx.counters.writes_unknown.inc(),
        }
    }
}

/// Which session a holder's resource operations go through.
#[derive(Clone, Copy)]
enum Via<'a> {
    /// The lock's own session: [`Guard::write`].
    Guard(&'a AnyGuard),
    /// The run's storage session, after a pause: the same checks, built here.
    Storage,
}

impl Work<'_> {
    fn reader(&self, via: Via<'_>) -> &Client {
        match via {
            Via::Guard(_) => self.client,
            Via::Storage => &self.ctx.storage,
        }
    }

    /// `build`'s ops after an existence check on each of the holder's lock nodes, through
    /// `via`; results and errors as [`Guard::write`]'s.
    async fn guarded<F>(
        &self,
        via: Via<'_>,
        holder: &Holder,
        build: F,
    ) -> Result<Vec<WriteResult>, Error>
    where
        F: for<'m> FnOnce(MultiBuilder<'m>) -> MultiBuilder<'m>,
    {
        match via {
            Via::Guard(guard) => guard.write(build).await,
            Via::Storage => {
                let checks = holder.nodes.len();
                let multi = holder
                    .nodes
                    .iter()
                    .fold(self.ctx.storage.multi(), |m, (path, _)| m.check(path, -1));
                match build(multi).commit().await {
                    Ok(mut results) => Ok(results.split_off(checks)),
                    Err(ZkError::MultiFailed { index, .. }) if index < checks => {
                        Err(Error::LockLost(LostReason::NodeDeleted))
                    }
                    Err(ZkError::MultiFailed { index, code }) => {
                        Err(Error::Client(ZkError::MultiFailed {
                            index: index - checks,
                            code,
                        }))
                    }
                    Err(e) => Err(e.into()),
                }
            }
        }
    }
}

/// Whether a recipe error is one the faults explain: the session ended, the connection was
/// lost at an unlucky moment, or our contender node went with the session.
fn expected(e: &Error) -> bool {
    match e {
        Error::LockLost(_) => true,
        Error::Client(e) => e.is_session_ended() || e.is_connection_loss(),
        _ => false,
    }
}
