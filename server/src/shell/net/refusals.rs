//! The rate limit of refusal lines, kept by the accept loop (`maxClientCnxns`) and by TLS (not
//! TLS, a failed handshake, too many handshakes).
//!
//! A refused connection is logged at most once per address per [`REFUSAL_LOG_INTERVAL`], the
//! line counting the refusals not logged since: a client retrying in a tight loop must not
//! flood the log. The table behind this forgets addresses quiet for an interval, and never
//! holds more than [`REFUSAL_LOG_ADDRESSES`].

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

use tokio::time::Instant;

/// How often one address's refusals are logged at most.
pub(crate) const REFUSAL_LOG_INTERVAL: Duration = Duration::from_secs(10);

/// The most addresses whose last refusal line is remembered; past it, the table is swept of
/// addresses quiet for an interval, and if all are recent, cleared (a burst from that many
/// addresses then logs one line each again, still a bounded number).
pub(crate) const REFUSAL_LOG_ADDRESSES: usize = 4096;

/// When each refused address was last logged, and how many refusals were not logged since.
/// The one rate limit of refusal lines: the accept loop's (`maxClientCnxns`) and TLS's
/// (`tls/accept.rs`: not TLS, a failed handshake, too many handshakes) each keep one.
#[derive(Debug, Default)]
pub(crate) struct RefusalLog {
    by_addr: HashMap<IpAddr, (Instant, u64)>,
}

impl RefusalLog {
    /// Records a refusal at `now`: `Some(suppressed)` when it is to be logged, with the number
    /// of refusals from the address left unlogged since its last line; `None` to stay quiet.
    pub(crate) fn refused(&mut self, addr: IpAddr, now: Instant) -> Option<u64> {
        if let Some((logged, suppressed)) = self.by_addr.get_mut(&addr) {
            if now.duration_since(*logged) < REFUSAL_LOG_INTERVAL {
                *suppressed += 1;
                return None;
            }
            let count = *suppressed;
            *logged = now;
            *suppressed = 0;
            return Some(count);
        }
        if self.by_addr.len() >= REFUSAL_LOG_ADDRESSES {
            self.by_addr
                .retain(|_, (logged, _)| now.duration_since(*logged) < REFUSAL_LOG_INTERVAL);
            if self.by_addr.len() >= REFUSAL_LOG_ADDRESSES {
                self.by_addr.clear();
            }
        }
        self.by_addr.insert(addr, (now, 0));
        Some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_address_per_interval_with_the_count_it_left_out() {
        let mut log = RefusalLog::default();
        let start = Instant::now();
        let a: IpAddr = "10.0.0.1".parse().expect("an address");
        let b: IpAddr = "10.0.0.2".parse().expect("an address");
        assert_eq!(log.refused(a, start), Some(0));
        let lines = (1..=1000)
            .filter(|i| log.refused(a, start + Duration::from_millis(*i)).is_some())
            .count();
        assert_eq!(
            lines, 0,
            "a tight loop logs nothing more within the interval"
        );
        assert_eq!(log.refused(b, start), Some(0), "another address is its own");
        let later = start + REFUSAL_LOG_INTERVAL;
        assert_eq!(log.refused(a, later), Some(1000));
        assert_eq!(log.refused(a, later), None);
    }

    #[test]
    fn the_table_stays_bounded() {
        let mut log = RefusalLog::default();
        let now = Instant::now();
        for i in 0..3 * REFUSAL_LOG_ADDRESSES as u32 {
            log.refused(IpAddr::from(i.to_be_bytes()), now);
            assert!(log.by_addr.len() <= REFUSAL_LOG_ADDRESSES);
        }
        let later = now + REFUSAL_LOG_INTERVAL;
        log.refused("10.9.9.9".parse().expect("an address"), later);
        assert!(log.by_addr.len() <= REFUSAL_LOG_ADDRESSES);
    }
}
