//! Curator's lock family, node for node: [`Mutex`] (`InterProcessMutex`),
//! [`SemaphoreMutex`] (`InterProcessSemaphoreMutex`), [`ReadWriteLock`]
//! (`InterProcessReadWriteLock`) and [`MultiLock`] (`InterProcessMultiLock`).
//!
//! Curator's names are "protected": `_c_<uuid>-<lock name><seq>`, a fresh random uuid per
//! acquisition, so that after a connection loss during the create the node is found among the
//! children by its prefix. Curator's reentrancy is per thread; here it is per lock *value*
//! (the owner): acquiring again through the same value while it holds the lock returns another
//! guard on the same node and counts one more hold. Tasks that must exclude each other use
//! separate values (which are cheap); tasks that may re-enter share one.
//!
//! The reentrancy bookkeeping is `reentrant.rs`'s, shared by [`Mutex`] and both halves of
//! [`ReadWriteLock`].

mod multi_guard;
mod multi_lock;
mod mutex;
mod read_write_lock;
mod reentrant;
mod semaphore_mutex;

pub use multi_guard::MultiGuard;
pub use multi_lock::MultiLock;
pub use mutex::Mutex;
pub use read_write_lock::ReadWriteLock;
pub use semaphore_mutex::SemaphoreMutex;

pub(crate) use reentrant::Reentrant;
