//! [`LockBase`]: what every single-path lock of this crate is made of (a client, the path the
//! lock lives at, the counters it counts into), and [`impl_lock!`], the one [`Lock`] impl of
//! the lock types that acquire through an inherent `contend`.
//!
//! Invariant: a lock's [`Lock::path`] and [`Lock::stats`] are its base's, so a lock's builder
//! (`with_stats`) and the trait cannot disagree about which counters it counts into.
//!
//! [`Lock`]: crate::Lock
//! [`Lock::path`]: crate::Lock::path
//! [`Lock::stats`]: crate::Lock::stats

use std::sync::Arc;

use shepherd_client::Client;

use crate::contend::{Contest, WaitStrategy};
use crate::stats::LockStats;

/// A lock's client, path and counters.
#[derive(Debug, Clone)]
pub(crate) struct LockBase {
    pub(crate) client: Client,
    /// The lock node itself for a fixed-node lock, else the folder its contenders queue in.
    pub(crate) path: String,
    pub(crate) stats: Arc<LockStats>,
}

impl LockBase {
    /// A lock at `path` through `client`, with counters of its own.
    pub(crate) fn new(client: &Client, path: impl Into<String>) -> LockBase {
        LockBase {
            client: client.clone(),
            path: path.into(),
            stats: LockStats::new(),
        }
    }

    /// This lock's folder, contended by `strategy`.
    pub(crate) fn contest(&self, strategy: WaitStrategy) -> Contest<'_> {
        Contest {
            client: &self.client,
            dir: &self.path,
            stats: &self.stats,
            strategy,
        }
    }
}

/// Implements [`Lock`](crate::Lock) for a type with a `base: LockBase` field and an inherent
/// `async fn contend(&self, wait: Wait) -> Result<Option<LockGuard>>`: `acquire_with` is
/// `contend`, `stats` and `path` are the base's.
macro_rules! impl_lock {
    ($lock:ty) => {
        impl $crate::lock::Lock for $lock {
            type Guard = $crate::lock_guard::LockGuard;

            fn acquire_with(
                &self,
                wait: $crate::lock::Wait,
            ) -> impl ::std::future::Future<
                Output = $crate::error::Result<Option<$crate::lock_guard::LockGuard>>,
            > + Send {
                self.contend(wait)
            }

            fn stats(&self) -> &::std::sync::Arc<$crate::stats::LockStats> {
                &self.base.stats
            }

            fn path(&self) -> &str {
                &self.base.path
            }
        }
    };
}

pub(crate) use impl_lock;
