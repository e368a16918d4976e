//! The transaction log's own thread: group commit.
//!
//! With a data directory, every core call's log entries are handed here under the core lock
//! ([`Journal::submit`]), so they arrive in zxid order. A dedicated OS thread (fsync blocks, and
//! must not block tokio's workers) owns the [`TxnLog`]: it takes everything queued at once,
//! appends it, commits it (fsync unless `forceSync=no`), and only then reports the last zxid
//! durable, which releases what the gate held for it (`gate.rs`). While it syncs, new entries
//! queue up and go in the next batch: one fsync covers every write that arrived meanwhile.
//!
//! It also counts what it logs for the snapshot rule of ZooKeeper 3.8's `SyncRequestProcessor`
//! (roll the log, then ask for a snapshot, when more than `snapCount / 2 + r` txns or
//! `snapSizeLimitInKb / 2 + s` log bytes went by since the last; `r` and `s` drawn anew each
//! time).
//!
//! After a batch the thread polls the queue for a short while ([`POLL_AFTER_BATCH`]) before it
//! sleeps. One write at a time, the next write comes about one round trip after the last
//! reply, and waking a sleeping thread costs tens of microseconds on a virtual machine: more
//! than a write's whole share above the disk's sync. The poll yields the processor between
//! looks, so the threads carrying the reply and the next request run first where they share
//! it; it is bounded, and comes only after a batch, so an idle server does not spin.
//!
//! Invariants: a zxid is reported durable only after the commit that covers it returned; after
//! an I/O error nothing more is written or reported (the error is kept, and the server told);
//! stopping writes and fsyncs whatever was queued before the stop, forceSync or not.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use rand::Rng;
use shepherd_protocol::txn::{TxnBody, TxnEntry};

use crate::config::Durability;
use crate::shell::route::backlog::Backlog;
use crate::storage::TxnLog;

/// ZooKeeper's `fsync.warningthresholdms` default: a commit slower than this is logged.
const FSYNC_WARNING: Duration = Duration::from_secs(1);

/// How long the thread polls for more entries after a batch before it sleeps: longer than a
/// reply takes to reach a client and its next call to come back (getData's p50, 20–40 µs on
/// loopback here), so that one client writing one call at a time finds the thread awake
/// (docs/bench/latencies.md, "Where a write's time goes"). Where a processor is idle,
/// `yield_now` returns at once and this is a spin.
const POLL_AFTER_BATCH: Duration = Duration::from_micros(100);

/// What the log thread tells the server.
pub(crate) trait JournalEvents: Send + Sync + 'static {
    /// Everything up to `zxid` is on disk.
    fn durable(&self, zxid: i64);
    /// The log was rolled for a snapshot: take one if none is in progress.
    fn snapshot_due(&self);
    /// The log could not be written; nothing more will be.
    fn failed(&self, error: &io::Error);
}

/// When a snapshot is due: ZooKeeper 3.8 `SyncRequestProcessor.shouldSnapshot`.
#[derive(Debug)]
struct SnapshotRule {
    snap_count: u64,
    /// Log bytes; 0 for no size rule.
    size_limit: u64,
    count: u64,
    bytes: u64,
    rand_roll: u64,
    rand_size: u64,
}

impl SnapshotRule {
    fn new(durability: &Durability) -> SnapshotRule {
        let size_limit = u64::try_from(durability.snap_size_limit_kb)
            .unwrap_or(0)
            .saturating_mul(1024);
        let mut rule = SnapshotRule {
            snap_count: u64::from(durability.snap_count.max(2)),
            size_limit,
            count: 0,
            bytes: 0,
            rand_roll: 0,
            rand_size: 0,
        };
        rule.reset();
        rule
    }

    /// `resetSnapshotStats`: new random offsets, counts back to zero.
    fn reset(&mut self) {
        let mut rng = rand::rng();
        self.rand_roll = rng.random_range(0..self.snap_count / 2);
        self.rand_size = if self.size_limit >= 2 {
            rng.random_range(0..self.size_limit / 2)
        } else {
            0
        };
        self.count = 0;
        self.bytes = 0;
    }

    /// Counts one logged txn of about `bytes`; true when a snapshot is due.
    fn logged(&mut self, bytes: u64) -> bool {
        self.count += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        self.count > self.snap_count / 2 + self.rand_roll
            || (self.size_limit > 0 && self.bytes > self.size_limit / 2 + self.rand_size)
    }
}

#[derive(Debug, Default)]
struct State {
    /// Handed over, not yet taken by the thread.
    queue: Vec<TxnEntry>,
    /// The estimated bytes of `queue`, as counted in the backlog.
    queue_bytes: usize,
    /// The last zxid handed over.
    handed: i64,
    /// The last zxid on disk.
    durable: i64,
    /// Test control: the thread takes nothing while set.
    frozen: bool,
    /// Test control: the next batch fails as a full disk would, before any of it is written.
    fail_next: bool,
    /// The thread should write what is queued and end.
    stop: bool,
    /// Whether a thread is running.
    running: bool,
    /// The I/O error that stopped the log, as text.
    failure: Option<String>,
}

/// The queue in front of the log thread, and the thread's lifecycle. See the module
/// documentation.
#[derive(Debug)]
pub(crate) struct Journal {
    state: Mutex<State>,
    /// Whether entries were handed over since the thread last took the queue: what the
    /// thread polls without taking the lock.
    queued: AtomicBool,
    /// Wakes the thread: entries queued, a thaw, a stop.
    work: Condvar,
    /// Wakes those waiting on durability or on the thread's end.
    progress: Condvar,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Where the entries waiting for the disk are counted, so that readers stop while too many
    /// bytes are.
    backlog: Arc<Backlog>,
}

/// About the bytes an entry keeps in memory until it is written: its data and paths, which
/// are what a large request brings, and a fixed allowance for the rest.
fn entry_bytes(entry: &TxnEntry) -> usize {
    fn body_bytes(body: &TxnBody) -> usize {
        match body {
            TxnBody::Create(t) => t.path.len() + t.data.as_ref().map_or(0, Vec::len),
            TxnBody::CreateContainer(t) => t.path.len() + t.data.as_ref().map_or(0, Vec::len),
            TxnBody::CreateTTL(t) => t.path.len() + t.data.as_ref().map_or(0, Vec::len),
            TxnBody::SetData(t) => t.path.len() + t.data.as_ref().map_or(0, Vec::len),
            TxnBody::Delete(t) => t.path.len(),
            TxnBody::SetACL(t) => t.path.len(),
            TxnBody::CheckVersion(t) => t.path.len(),
            TxnBody::Multi(ops) => ops.iter().map(|(_, op)| body_bytes(op) + 64).sum(),
            TxnBody::CreateSession(_) | TxnBody::CloseSession(_) | TxnBody::Error(_) => 0,
        }
    }
    128 + body_bytes(&entry.body)
}

impl Journal {
    /// A journal whose queued entries count in `backlog`.
    pub(crate) fn new(backlog: Arc<Backlog>) -> Journal {
        Journal {
            state: Mutex::default(),
            queued: AtomicBool::new(false),
            work: Condvar::new(),
            progress: Condvar::new(),
            thread: Mutex::default(),
            backlog,
        }
    }

    /// Starts the log thread on `log`, with everything up to `durable` already on disk and
    /// whatever was still queued from an earlier run dropped.
    ///
    /// # Errors
    /// The OS refused a thread.
    pub(crate) fn start(
        self: &Arc<Self>,
        log: TxnLog,
        durable: i64,
        durability: &Durability,
        events: Arc<dyn JournalEvents>,
    ) -> io::Result<()> {
        {
            let mut state = self.state.lock();
            self.drop_queue(&mut state);
            state.handed = durable;
            state.durable = durable;
            state.stop = false;
            state.running = true;
            state.failure = None;
        }
        let journal = self.clone();
        let rule = SnapshotRule::new(durability);
        let force_sync = durability.force_sync;
        let spawned = std::thread::Builder::new()
            .name("shepherd-txnlog".into())
            .spawn(move || journal.run(log, rule, force_sync, events));
        match spawned {
            Ok(handle) => {
                *self.thread.lock() = Some(handle);
                Ok(())
            }
            Err(error) => {
                self.state.lock().running = false;
                Err(error)
            }
        }
    }

    /// Hands over the entries `take` appends (in zxid order) and returns the last zxid handed
    /// over so far, if this call handed any. Called under the core lock; never blocks on I/O.
    /// After a failure or a stop the entries are dropped: nothing is released for them.
    ///
    /// The log thread is not woken here: the caller calls [`Journal::kick`] once it has
    /// released the core lock, so that the wake-up's system call does not lengthen the lock's
    /// hold while other connections wait for it.
    pub(crate) fn submit(&self, take: impl FnOnce(&mut Vec<TxnEntry>)) -> Option<i64> {
        let mut state = self.state.lock();
        let before = state.queue.len();
        take(&mut state.queue);
        let last = state.queue[before..].last()?.header.zxid;
        if !state.running {
            state.queue.truncate(before);
            return None;
        }
        let bytes = state.queue[before..].iter().map(entry_bytes).sum();
        state.queue_bytes += bytes;
        self.backlog.add(bytes, 0);
        state.handed = last;
        self.queued.store(true, Ordering::Release);
        Some(last)
    }

    /// Wakes the log thread for what [`Journal::submit`] handed over. No wake-up is lost by
    /// calling it after the queue's lock is released: the thread checks the queue under that
    /// lock before it waits.
    pub(crate) fn kick(&self) {
        self.work.notify_one();
    }

    /// Test control: the thread takes nothing more (a batch being written completes) until
    /// [`Journal::thaw`].
    pub(crate) fn freeze(&self) {
        self.state.lock().frozen = true;
    }

    /// Ends a [`Journal::freeze`]. False if the log was not frozen.
    pub(crate) fn thaw(&self) -> bool {
        let mut state = self.state.lock();
        let was = std::mem::replace(&mut state.frozen, false);
        self.work.notify_one();
        was
    }

    /// Test control: the next batch fails with a full-disk error before any of it is written,
    /// which stops the log as a real write error would.
    pub(crate) fn fail_next(&self) {
        self.state.lock().fail_next = true;
    }

    /// The last zxid on disk.
    pub(crate) fn durable(&self) -> i64 {
        self.state.lock().durable
    }

    /// Blocks until every txn up to `zxid` is on disk. False if the log stopped or failed
    /// first. For the snapshot thread: a snapshot must not hold a txn the log does not. A zxid
    /// beyond what was handed over (moved by a test control, with no txn) counts as the last
    /// one handed over.
    pub(crate) fn wait_durable(&self, zxid: i64) -> bool {
        let mut state = self.state.lock();
        loop {
            if state.durable >= zxid.min(state.handed) {
                return true;
            }
            if !state.running || state.failure.is_some() {
                return false;
            }
            self.progress.wait(&mut state);
        }
    }

    /// Writes and fsyncs what is queued (a freeze does not hold it back), ends the thread and
    /// waits for it. Returns the log's failure, if it had one. Blocking: call it off the async
    /// workers (or where a short block is fine, at shutdown).
    pub(crate) fn stop(&self) -> Option<String> {
        {
            let mut state = self.state.lock();
            state.stop = true;
            self.work.notify_one();
        }
        let handle = self.thread.lock().take();
        if let Some(handle) = handle
            && handle.join().is_err()
        {
            tracing::error!("the transaction log thread panicked");
        }
        let mut state = self.state.lock();
        state.running = false;
        self.drop_queue(&mut state);
        state.failure.clone()
    }

    /// Drops what is queued (after a stop or a failure, or before a start), taking its bytes
    /// back from the backlog.
    fn drop_queue(&self, state: &mut State) {
        self.backlog.sub(std::mem::take(&mut state.queue_bytes), 0);
        state.queue.clear();
    }

    /// The thread's body.
    fn run(
        self: Arc<Self>,
        mut log: TxnLog,
        mut rule: SnapshotRule,
        force_sync: bool,
        events: Arc<dyn JournalEvents>,
    ) {
        let mut batch = Vec::new();
        // Whether the last turn wrote a batch: then the queue is polled before sleeping.
        let mut wrote = false;
        loop {
            if wrote {
                self.poll_queue();
            }
            let (stopping, fail, batch_bytes) = {
                let mut state = self.state.lock();
                while !state.stop && (state.queue.is_empty() || state.frozen) {
                    self.work.wait(&mut state);
                }
                std::mem::swap(&mut batch, &mut state.queue);
                self.queued.store(false, Ordering::Relaxed);
                wrote = !batch.is_empty();
                let fail = !batch.is_empty() && std::mem::take(&mut state.fail_next);
                (state.stop, fail, std::mem::take(&mut state.queue_bytes))
            };
            let written = if fail {
                Err(io::Error::new(
                    io::ErrorKind::StorageFull,
                    "no space left on device (injected by Controls::fail_log)",
                ))
            } else {
                // A panic while writing is a failure of the log like any I/O error: the server
                // crash-stops with the reason instead of waiting on a thread that is gone.
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    self.write(
                        &mut log,
                        &batch,
                        &mut rule,
                        force_sync || stopping,
                        &*events,
                    )
                }))
                .unwrap_or_else(|panic| {
                    Err(io::Error::other(format!(
                        "the transaction log thread panicked: {}",
                        panic_text(&*panic)
                    )))
                })
            };
            // Written or failed, the batch no longer waits in memory for the disk.
            self.backlog.sub(batch_bytes, 0);
            match written {
                Ok(()) => {
                    if let Some(last) = batch.last() {
                        let zxid = last.header.zxid;
                        self.state.lock().durable = zxid;
                        self.progress.notify_all();
                        events.durable(zxid);
                    }
                }
                Err(error) => {
                    tracing::error!(
                        %error,
                        "cannot write the transaction log; no write is acknowledged from now on \
                         and every connection is closed (ZooKeeper halts here too)"
                    );
                    {
                        let mut state = self.state.lock();
                        state.failure = Some(error.to_string());
                        state.running = false;
                        self.drop_queue(&mut state);
                    }
                    self.progress.notify_all();
                    events.failed(&error);
                    return;
                }
            }
            batch.clear();
            if stopping {
                let mut state = self.state.lock();
                state.running = false;
                drop(state);
                self.progress.notify_all();
                return;
            }
        }
    }

    /// Polls for entries handed over, for at most [`POLL_AFTER_BATCH`], yielding between looks
    /// (a bare spin held a processor the reply's threads needed: slower on 2 cores); what
    /// comes later wakes the thread through [`Journal::kick`].
    fn poll_queue(&self) {
        let started = Instant::now();
        while !self.queued.load(Ordering::Acquire) && started.elapsed() < POLL_AFTER_BATCH {
            std::thread::yield_now();
        }
    }

    /// Appends and commits one batch, rolling the log (and asking for a snapshot) where the
    /// snapshot rule says.
    fn write(
        &self,
        log: &mut TxnLog,
        batch: &[TxnEntry],
        rule: &mut SnapshotRule,
        fsync: bool,
        events: &dyn JournalEvents,
    ) -> io::Result<()> {
        let started = Instant::now();
        for entry in batch {
            let before = log.position();
            log.append(entry)?;
            let bytes = log.position().saturating_sub(before);
            if rule.logged(bytes) {
                rule.reset();
                // Commit first, so that no entry of the old file becomes durable only after
                // one of the new.
                log.commit(fsync)?;
                log.roll()?;
                events.snapshot_due();
            }
        }
        log.commit(fsync)?;
        let took = started.elapsed();
        if fsync && took > FSYNC_WARNING {
            tracing::warn!(
                ms = took.as_millis() as u64,
                txns = batch.len(),
                "fsync of the transaction log took longer than 1 s: the disk is slow"
            );
        }
        Ok(())
    }
}

/// What a panic said, when it said it with a string.
pub(crate) fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_snapshot_rule_fires_between_half_and_all_of_snap_count() {
        let durability = Durability {
            snap_count: 100,
            snap_size_limit_kb: 0,
            ..Durability::default()
        };
        for _ in 0..20 {
            let mut rule = SnapshotRule::new(&durability);
            let mut n = 0;
            while !rule.logged(10) {
                n += 1;
                assert!(n <= 100, "no snapshot after snapCount txns");
            }
            assert!(n >= 50, "a snapshot after only {n} txns");
        }
    }

    #[test]
    fn the_size_rule_fires_on_bytes() {
        let durability = Durability {
            snap_count: 1_000_000,
            snap_size_limit_kb: 1,
            ..Durability::default()
        };
        let mut rule = SnapshotRule::new(&durability);
        assert!(!rule.logged(100));
        assert!(rule.logged(1024));
    }
}
