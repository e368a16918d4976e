//! The sweep loop: one task that removes, a slice at a time, the watch registrations that gone
//! connections left in the core ([`Core::sweep`](crate::core::Core::sweep)).
//!
//! A client that sets three million watches and closes its connection made work proportional
//! to its own state. Done in one hold of the core lock, it stalled every other client for
//! seconds, long enough for their sessions to expire. The core instead retires such a
//! connection at once (nothing sees its watches from then on) and leaves the removal to this
//! loop.
//!
//! Invariants: one hold of the core lock removes at most [`SLICE`] registrations; after each
//! the lock goes to a task already waiting for it (a fair unlock) and the loop yields to the
//! runtime, so other clients wait for one slice, not for the whole sweep; what a slice frees
//! (its paths and watcher maps, and at the end the walked id sets and the tables' spare
//! capacity) is freed after the lock is released. (Run on a blocking thread instead, the sweep
//! measured worse: 0.08–0.17 s worst bystander waits at a million against 0.01–0.06 s here.) The loop is woken by
//! [`Shared::with_core`] whenever a change leaves a sweep pending, and a wake-up that comes
//! while it sweeps is kept by the `Notify`, not lost.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::shell::state::shared::Shared;

/// Registrations removed per hold of the core lock: about a hundred microseconds of map
/// removals, so a sweep of three million takes some 3 000 short holds.
pub(crate) const SLICE: usize = 1024;

/// Sweeps whenever the core has registrations of gone connections left, until `shutdown`.
pub(crate) async fn sweep_loop(shared: Arc<Shared>, shutdown: CancellationToken) {
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = shared.sweeper.notified() => {}
        }
        let started = Instant::now();
        let (mut slices, mut longest) = (0u64, Duration::ZERO);
        loop {
            let slice = Instant::now();
            let more = shared.sweep_slice(SLICE);
            longest = longest.max(slice.elapsed());
            slices += 1;
            if !more || shutdown.is_cancelled() {
                break;
            }
            tokio::task::yield_now().await;
        }
        tracing::debug!(
            slices,
            longest_us = longest.as_micros() as u64,
            ms = started.elapsed().as_millis() as u64,
            "swept the watches of closed connections"
        );
    }
}
