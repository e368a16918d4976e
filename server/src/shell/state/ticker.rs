//! The tick loop: one task that calls the core's `tick` at its next deadline, so that
//! sessions expire and containers and TTL nodes are reaped without any request arriving.
//!
//! The deadline is read from the core each turn; any change of the core that moves it earlier
//! (a new session, a first container or TTL node, whichever task made it) wakes the loop
//! through [`Shared::wake_ticker`] (see [`Shared::with_core`]), and it reads the deadline again.
//! A wake-up that comes between the read and the wait is kept by the `Notify`, not lost.
//! The sleep is on tokio's clock, so virtual time drives expiry in tests. While an ensemble is
//! LOOKING nothing ticks: no session expires without a leader, as in ZooKeeper, and the
//! election's end (which restarts every session's timeout) wakes the loop.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::shell::state::shared::Shared;

/// Calls the core's `tick` at its next deadline: session expiry and container/TTL reaping.
pub(crate) async fn tick_loop(shared: Arc<Shared>, shutdown: CancellationToken) {
    loop {
        if !shared.members.serving() {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = shared.ticker.notified() => continue,
            }
        }
        let deadline = shared.query(|core| core.next_deadline());
        let sleep = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(shared.clock.instant_at(at)).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = shared.ticker.notified() => continue,
            _ = sleep => {
                if shared.members.serving() {
                    shared.apply(|core, now| core.tick(now));
                }
            }
        }
    }
}
