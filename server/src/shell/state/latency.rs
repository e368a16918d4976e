//! [`LatencySummary`]: ZooKeeper's `readlatency` and `updatelatency` summaries, for mntr and
//! `/metrics`.
//!
//! A summary keeps count, sum, min and max over all samples, and the most recent
//! [`WINDOW`] samples in a ring, from which quantiles are read. ZooKeeper's providers estimate
//! quantiles over a sliding time window (the Prometheus one over the last minutes); a ring of
//! the latest samples is the bounded-memory equivalent by count, without a clock or a lock.
//!
//! Invariants: everything is an atomic updated without a lock, so recording never blocks a
//! connection task; memory is fixed at [`WINDOW`] samples; `min` and `max` are 0 until the first
//! sample. Readings taken while samples are being recorded may mix old and new samples, which
//! is what any scrape of a live server sees anyway.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// How many recent samples quantiles are read from.
pub const WINDOW: usize = 1024;

/// Samples of one latency, in microseconds.
#[derive(Debug)]
pub struct LatencySummary {
    count: AtomicU64,
    sum_us: AtomicU64,
    min_us: AtomicU64,
    max_us: AtomicU64,
    /// The latest samples; slot `n % WINDOW` holds sample number `n`.
    ring: Box<[AtomicU32]>,
}

impl Default for LatencySummary {
    fn default() -> Self {
        LatencySummary {
            count: AtomicU64::new(0),
            sum_us: AtomicU64::new(0),
            min_us: AtomicU64::new(0),
            max_us: AtomicU64::new(0),
            ring: (0..WINDOW).map(|_| AtomicU32::new(0)).collect(),
        }
    }
}

/// What a [`LatencySummary`] holds at one reading, in milliseconds as ZooKeeper reports them.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyReading {
    /// Samples recorded.
    pub count: u64,
    /// Their sum, ms.
    pub sum_ms: f64,
    /// The smallest, whole ms (0 before any sample).
    pub min_ms: u64,
    /// The largest, whole ms (0 before any sample).
    pub max_ms: u64,
    /// The recent samples, ms, sorted ascending (at most [`WINDOW`]).
    pub recent_ms: Vec<f64>,
}

impl LatencyReading {
    /// The mean, ms, rounded to 4 decimals as ZooKeeper prints it (0 before any sample).
    pub fn avg_ms(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        (self.sum_ms / self.count as f64 * 10_000.0).round() / 10_000.0
    }

    /// The `q` quantile (0..=1) of the recent samples by nearest rank, ms (0 before any).
    pub fn quantile_ms(&self, q: f64) -> f64 {
        let n = self.recent_ms.len();
        if n == 0 {
            return 0.0;
        }
        let rank = (q.clamp(0.0, 1.0) * n as f64).ceil() as usize;
        self.recent_ms[rank.clamp(1, n) - 1]
    }
}

impl LatencySummary {
    /// Records one sample.
    pub fn record(&self, us: u64) {
        let n = self.count.fetch_add(1, Relaxed);
        if n == 0 {
            self.min_us.store(us, Relaxed);
        } else {
            self.min_us.fetch_min(us, Relaxed);
        }
        self.max_us.fetch_max(us, Relaxed);
        self.sum_us.fetch_add(us, Relaxed);
        let slot = (n % WINDOW as u64) as usize;
        if let Some(cell) = self.ring.get(slot) {
            cell.store(u32::try_from(us).unwrap_or(u32::MAX), Relaxed);
        }
    }

    /// A reading of everything recorded so far.
    pub fn read(&self) -> LatencyReading {
        let count = self.count.load(Relaxed);
        let filled = usize::try_from(count).unwrap_or(usize::MAX).min(WINDOW);
        let mut recent_ms: Vec<f64> = self.ring[..filled]
            .iter()
            .map(|cell| f64::from(cell.load(Relaxed)) / 1000.0)
            .collect();
        recent_ms.sort_by(f64::total_cmp);
        LatencyReading {
            count,
            sum_ms: self.sum_us.load(Relaxed) as f64 / 1000.0,
            min_ms: self.min_us.load(Relaxed) / 1000,
            max_ms: self.max_us.load(Relaxed) / 1000,
            recent_ms,
        }
    }

    /// Forgets every sample (`srst`).
    pub fn reset(&self) {
        for counter in [&self.count, &self.sum_us, &self.min_us, &self.max_us] {
            counter.store(0, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_counts_and_quantiles() {
        let summary = LatencySummary::default();
        assert_eq!(summary.read().quantile_ms(0.5), 0.0);
        for ms in 1..=100u64 {
            summary.record(ms * 1000);
        }
        let reading = summary.read();
        assert_eq!(reading.count, 100);
        assert_eq!((reading.min_ms, reading.max_ms), (1, 100));
        assert_eq!(reading.sum_ms, 5050.0);
        assert_eq!(reading.avg_ms(), 50.5);
        assert_eq!(reading.quantile_ms(0.5), 50.0);
        assert_eq!(reading.quantile_ms(0.99), 99.0);
        summary.reset();
        assert_eq!(summary.read().count, 0);
    }

    #[test]
    fn ring_keeps_only_the_latest_window() {
        let summary = LatencySummary::default();
        for _ in 0..WINDOW {
            summary.record(1_000_000);
        }
        for _ in 0..WINDOW {
            summary.record(1_000);
        }
        let reading = summary.read();
        assert_eq!(reading.recent_ms.len(), WINDOW);
        assert_eq!(reading.quantile_ms(1.0), 1.0);
        assert_eq!(reading.max_ms, 1000);
    }
}
