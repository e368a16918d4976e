//! Time as the core sees it.
//!
//! The core is I/O-free and is handed a [`Now`] with every call; this is where the shell makes
//! one. Monotonic time is tokio's clock, so that `tokio::time::pause` and `advance` drive
//! session expiry in tests; wall time is read once at start and then advances in step with it,
//! so the two never disagree about how much time has passed.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

use crate::core::Now;

/// Tokio's clock (virtual under `tokio::time::pause`), with the wall clock advancing in step
/// from the moment the server started.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    origin: Instant,
    wall_origin_ms: i64,
}

impl Clock {
    /// A clock whose monotonic zero is now.
    pub(crate) fn new() -> Clock {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        Clock {
            origin: Instant::now(),
            wall_origin_ms: wall,
        }
    }

    /// The current time, in the core's terms.
    pub(crate) fn now(&self) -> Now {
        let mono_ms = self.origin.elapsed().as_millis() as u64;
        Now {
            mono_ms,
            wall_ms: self.wall_origin_ms + mono_ms as i64,
        }
    }

    /// The tokio instant of a core deadline (monotonic ms since start).
    pub(crate) fn instant_at(&self, mono_ms: u64) -> Instant {
        self.origin + Duration::from_millis(mono_ms)
    }
}

/// The first zxid of a server with nothing to recover: the epoch (the high 32 bits) is the
/// wall clock's seconds since the Unix epoch, the counter 0. A later start gets a higher epoch,
/// so its zxids are above anything an earlier run handed out, and clients that saw one are not
/// refused (docs/protocol.md §2.4 step 2). Capped at `i32::MAX` seconds (the year 2038) so that
/// the zxid stays positive.
pub(crate) fn epoch_zxid(wall_ms: i64) -> i64 {
    let seconds = (wall_ms / 1000).clamp(0, i64::from(i32::MAX));
    seconds << 32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_epoch_is_the_clocks_seconds_and_stays_positive() {
        assert_eq!(epoch_zxid(1_700_000_000_999), 1_700_000_000 << 32);
        assert_eq!(epoch_zxid(-5), 0);
        assert!(epoch_zxid(i64::MAX) > 0);
    }
}
