//! Distributed locks over ZooKeeper, speaking only the public [`shepherd_client`] API, so they
//! work unchanged against Apache ZooKeeper and against Shepherd.
//!
//! | Type | Origin | Node layout | Waiting |
//! |---|---|---|---|
//! | [`EphemeralLock`] | seed 001 | `<path>` (ephemeral, data = owner id) | exists watch (herd) |
//! | [`SequentialLock`] | seeds 002, 004 | `<dir>/<uuid>-lock-<seq>` | [`WaitStrategy`] |
//! | [`WriteLock`] | ZooKeeper's `WriteLock` (seed 000) | `<dir>/x-<session>-<nonce>-<seq>` | predecessor |
//! | [`SharedLock`] | seed 003 | `<dir>/<uuid>-read-<seq>`, `<uuid>-write-<seq>` | [`WaitStrategy`] |
//! | [`Mutex`] | Curator `InterProcessMutex` | `<path>/_c_<uuid>-lock-<seq>` | predecessor |
//! | [`SemaphoreMutex`] | Curator `InterProcessSemaphoreMutex` | `<path>/locks/…`, `<path>/leases/_c_<uuid>-lease-<seq>` | leases child watch |
//! | [`ReadWriteLock`] | Curator `InterProcessReadWriteLock` | `<path>/_c_<uuid>-__READ__<seq>`, `…-__WRIT__<seq>` | predecessor |
//! | [`MultiLock`] | Curator `InterProcessMultiLock` | that of each [`Mutex`] | per mutex |
//!
//! Every acquisition yields a [`LockGuard`] (a [`MultiGuard`] for [`MultiLock`]) with a
//! fencing token, a [`lost`](LockGuard::lost) future, guarded writes and release, explicit or
//! on drop. Lock folders and their ancestors are created as container nodes (persistent on
//! servers without containers), so the server removes them once empty.
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
//! [`EphemeralLock`] is not fair.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use shepherd_client::Client;
//! use shepherd_recipes::Mutex;
//! let client = Client::connect("127.0.0.1:2181").await?;
//! let mutex = Mutex::new(&client, "/app/locks/job");
//! let guard = mutex.acquire().await?;
//! tokio::select! {
//!     reason = guard.lost() => eprintln!("lock lost: {reason:?}"),
//!     _ = async { /* work, fenced by guard.fencing_token() */ } => {}
//! }
//! guard.release().await?;
//! # Ok(()) }
//! ```

mod contend;
pub mod curator;
mod ephemeral;
mod error;
mod guard;
mod names;
mod node;
mod sequential;
mod shared;
mod stats;
mod write_lock;

pub use contend::WaitStrategy;
pub use curator::{MultiGuard, MultiLock, Mutex, ReadWriteLock, SemaphoreMutex};
pub use ephemeral::EphemeralLock;
pub use error::{Error, Result};
pub use guard::{LockGuard, LostReason};
pub use sequential::SequentialLock;
pub use shared::SharedLock;
pub use stats::{LockStats, StatsSnapshot};
pub use write_lock::WriteLock;
