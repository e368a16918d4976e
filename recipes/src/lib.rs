//! Distributed locks over ZooKeeper, speaking only the public [`shepherd_client`] API, so they
//! work unchanged against Apache ZooKeeper and against Shepherd.
//!
//! | Type | Origin | Node layout | Waiting | Tests (in `recipes/tests/`) |
//! |---|---|---|---|---|
//! | [`EphemeralLock`] | the simplest lock: one fixed ephemeral node, read back after a connection loss | `<path>` (ephemeral, data = owner id) | exists watch on the node (herd) | `exclusion::ephemeral_lock_excludes`, `waiting::herd_wakes_everyone_predecessor_wakes_one`, `lost::expiry_while_holding_fires_lost`, `lifecycle::cancelled_acquisitions_leave_no_node` |
//! | [`SequentialLock`] | the exclusive lock of ZooKeeper's recipes page (`guid-lock-` nodes), in its first (herd) and its predecessor-watch form | `<dir>/<uuid>-lock-<seq>` | [`WaitStrategy`]: herd (children watch) or predecessor (exists watch) | `exclusion::sequential_lock_excludes_both_strategies`, `waiting::herd_wakes_everyone_predecessor_wakes_one`, `lost::disconnected_past_session_timeout_fires_lost`, `lifecycle::cancelled_acquisitions_leave_no_node` |
//! | [`WriteLock`] | ZooKeeper's own `WriteLock` (`zookeeper-recipes-lock`) | `<dir>/x-<session>-<nonce>-<seq>` | predecessor | `exclusion::write_lock_excludes`, `waiting::herd_wakes_everyone_predecessor_wakes_one` |
//! | [`SharedLock`] | the shared lock of ZooKeeper's recipes page (`read-`/`write-` nodes), in its first (herd) and its predecessor-watch form | `<dir>/<uuid>-read-<seq>`, `<uuid>-write-<seq>` | [`WaitStrategy`]: herd, or predecessor (a reader watches the last lower writer) | `waiting::read_write_locks_follow_seed_003`, `exclusion::shared_lock_writers_exclude`, `exclusion::shared_lock_readers_share_writers_exclude`, `waiting::herd_wakes_everyone_predecessor_wakes_one`, `kazoo::shepherd_and_kazoo_read_write_locks_interoperate` |
//! | [`Mutex`] | Curator `InterProcessMutex` | `<path>/_c_<uuid>-lock-<seq>` | predecessor | `exclusion::curator_mutex_excludes`, `lifecycle::mutex_is_reentrant_per_owner`, `waiting::herd_wakes_everyone_predecessor_wakes_one`, `lost::expiry_while_holding_fires_lost`, `kazoo::shepherd_mutex_and_kazoo_lock_exclude_each_other` |
//! | [`SemaphoreMutex`] | Curator `InterProcessSemaphoreMutex` | `<path>/locks/_c_<uuid>-lock-<seq>`, `<path>/leases/_c_<uuid>-lease-<seq>` | predecessor in `locks`, then the one taker inside watches `leases`' children | `exclusion::semaphore_mutex_excludes`, `waiting::herd_wakes_everyone_predecessor_wakes_one` |
//! | [`ReadWriteLock`] | Curator `InterProcessReadWriteLock` | `<path>/_c_<uuid>-__READ__<seq>`, `…-__WRIT__<seq>` | predecessor (a reader watches the last lower writer) | `waiting::read_write_locks_follow_seed_003`, `exclusion::read_write_lock_writers_exclude`, `lifecycle::read_write_lock_reentrancy_downgrade_no_upgrade`, `waiting::herd_wakes_everyone_predecessor_wakes_one`, `kazoo::shepherd_and_kazoo_read_write_locks_interoperate` |
//! | [`MultiLock`] | Curator `InterProcessMultiLock` | that of each [`Mutex`] | per mutex (predecessor) | `exclusion::multi_lock_excludes`, `waiting::herd_wakes_everyone_predecessor_wakes_one` |
//!
//! Every type (each strategy, each half of the read/write locks) is also covered by
//! `expiry::expiry_while_waiting_fails_and_leaves_no_node` (the acquisition fails with
//! `SessionExpired`, no node is left, the lock is not wedged),
//! `expiry::expiry_while_holding_fires_lost_for_every_type` (`lost()` fires, the node is
//! gone, the next contender gets a larger token), `lost::connection_loss_during_create_and_delete_leaves_no_orphan`
//! (create and delete replies cut: exactly one node, then none), `lifecycle::timeouts_leave_no_node`
//! and (all but [`MultiLock`]) `lost::deleted_lock_node_fails_guarded_writes`. Every test runs
//! against the embedded Shepherd server, and against real ZooKeeper too when
//! `SHEPHERD_REAL_ZK` names one; the `expiry` tests end the session with
//! `Controls::expire_session` on the embedded server, and on ZooKeeper by taking the
//! session over from a second client and closing it while our client's reconnects are held.
//! The `kazoo` tests need `python3` with kazoo, and print a note and pass without it.
//!
//! **kazoo.** kazoo's `Lock`, `ReadLock` and `WriteLock` name their contenders
//! `<hex>__lock__<seq>` (exclusive) and `<hex>__rlock__<seq>` (shared); this crate reads them
//! as such with no configuration. kazoo only counts children matching
//! `(?:<names>)(-?\d{10})$`, where `<names>` is its own plus its `extra_lock_patterns`, so it
//! must be told our names: `Lock(…, extra_lock_patterns=["-lock-"])` against a [`Mutex`] (or a
//! [`SequentialLock`]); against a [`ReadWriteLock`], `ReadLock(…, extra_lock_patterns=["__WRIT__"])`
//! and `WriteLock(…, extra_lock_patterns=["__WRIT__", "__READ__"])`; against a [`SharedLock`],
//! `["-write-"]` and `["-write-", "-read-"]`. Without them kazoo ignores our nodes and takes
//! the lock alongside us (the `kazoo` tests check both directions with the patterns).
//! [`WriteLock`]'s `x-<session>-<nonce>-<seq>` has no fixed text before the sequence, so kazoo
//! cannot be told about it; an [`EphemeralLock`] has no sequence at all.
//!
//! **One acquire API.** Every lock implements [`Lock`]: [`try_acquire`](Lock::try_acquire)
//! (no waiting: `Ok(None)` if taken), [`acquire`](Lock::acquire) (waits as long as it takes),
//! [`acquire_timeout`](Lock::acquire_timeout) and [`acquire_until`](Lock::acquire_until)
//! (`Ok(None)` if the turn did not come in time), all made of
//! [`acquire_with`](Lock::acquire_with) and a [`Wait`]. The read/write locks are taken through
//! their halves, [`read_lock`](SharedLock::read_lock) and [`write_lock`](SharedLock::write_lock)
//! (Curator's `readLock()`/`writeLock()`), each a [`Lock`]. Every guard implements [`Guard`]:
//! a fencing token, a [`lost`](Guard::lost) future, guarded [`write`](Guard::write)s and
//! [`release`](Guard::release), explicit or on drop. [`LockKind`] names every lock, strategy
//! and half, and builds any of them as an [`AnyLock`] (guard: [`AnyGuard`]), for code that
//! runs one scenario on all of them.
//!
//! | Lock | Acquire | Guard (fencing token) | `lost()` fires on | Guarded `write` checks | Reentrant | Fair | Own features |
//! |---|---|---|---|---|---|---|---|
//! | [`EphemeralLock`] | every form | [`LockGuard`] (`i64`) | expiry, close, long disconnection, node deleted | the node (a node re-created by another client passes: watch `lost()` too) | no | no | — |
//! | [`SequentialLock`] | every form | [`LockGuard`] (`i64`) | as above | our node | no | yes | `with_strategy` |
//! | [`WriteLock`] | every form | [`LockGuard`] (`i64`) | as above | our node | no | yes | — |
//! | [`SharedLock`] halves | every form, per half | [`LockGuard`] (`i64`) | as above | our node | no | yes (readers together) | `with_strategy` |
//! | [`Mutex`] | every form | [`LockGuard`] (`i64`) | as above | our node | per value | yes | `is_held`, `hold_count` |
//! | [`SemaphoreMutex`] | every form; one bound covers the inner mutex and the lease | [`LockGuard`] (`i64`, the lease's) | as above | the lease node | no (waits for itself) | yes | the guard may be released by any task |
//! | [`ReadWriteLock`] halves | every form, per half | [`LockGuard`] (`i64`) | as above | our node | per value and half; the writer may take the read half (downgrade), the reader alone may not take the write half ([`Error::UpgradeNotSupported`]) | yes (readers together) | `read_hold_count`, `write_hold_count` |
//! | [`MultiLock`] | every form; one bound covers all, all or nothing | [`MultiGuard`] (`Vec<i64>`, one per mutex) | any mutex's | every mutex's node | per mutex | yes | released in reverse order |
//! | [`AnyLock`] | every form | [`AnyGuard`] (`Vec<i64>`) | that of its kind | that of its kind | that of its kind | that of its kind | [`LockKind`] |
//!
//! Lock folders and their ancestors are created as container nodes (persistent on servers
//! without containers), so the server removes them once empty.
//!
//! **Common guarantees.** No acquisition leaves an orphan node: not after a timeout (the node
//! is deleted before returning), nor a dropped acquire future (deleted in the background),
//! nor a connection loss during the create (our node is found by its unique name prefix or
//! data before anything is retried), nor a connection loss during release (re-read, then
//! deleted if still ours). Sequential contenders are ordered by their sequence suffix only,
//! whatever their prefix, so Curator's, kazoo's and ZooKeeper's own recipes on the same folder
//! take part in the same queue.
//!
//! **Ordering.** Sequential locks are fair: granted in creation order (readers of a
//! [`SharedLock`] or [`ReadWriteLock`] together when no earlier writer waits).
//! [`EphemeralLock`] is not fair: on a release every waiter races to create the node again.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let server = shepherd_server::Server::builder().start().await?;
//! # let addr = server.connect_string();
//! use shepherd_client::{Client, CreateOptions};
//! use shepherd_recipes::{Guard, Lock, Mutex};
//! let client = Client::connect(&addr).await?;
//! client.create("/app-state", b"", &CreateOptions::persistent()).await?;
//! let mutex = Mutex::new(&client, "/app/locks/job");
//! let guard = mutex.acquire().await?;
//! let token = guard.fencing_token(); // grows with every later holder
//! tokio::select! {
//!     reason = guard.lost() => eprintln!("lock lost: {reason:?}"),
//!     written = guard.write(|m| m.set_data("/app-state", token.to_string().as_bytes(), None)) => {
//!         written?; // applied only if our lock node still existed
//!     }
//! }
//! guard.release().await?;
//! # server.shutdown().await;
//! # Ok(()) }
//! ```

mod any_lock;
mod contend;
pub mod curator;
mod ephemeral_lock;
mod error;
mod guard;
mod half;
mod lock;
mod lock_base;
mod lock_guard;
mod lock_queue;
mod lost;
mod names;
mod node;
mod sequential_lock;
mod shared_lock;
mod stats;
mod write_lock;

pub use any_lock::{AnyGuard, AnyLock, LockKind};
pub use contend::WaitStrategy;
pub use curator::{MultiGuard, MultiLock, Mutex, ReadWriteLock, SemaphoreMutex};
pub use ephemeral_lock::EphemeralLock;
pub use error::{Error, Result};
pub use guard::Guard;
pub use half::{ReadHalf, WriteHalf};
pub use lock::{Lock, Wait};
pub use lock_guard::LockGuard;
pub use lock_queue::{Contender, lock_queue};
pub use lost::LostReason;
pub use sequential_lock::SequentialLock;
pub use shared_lock::SharedLock;
pub use stats::{LockStats, StatsSnapshot};
pub use write_lock::WriteLock;
