//! A statistics counter that tasks bump concurrently: relaxed, only ever growing, read for
//! reports and never to decide anything during a run.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// One counter.
#[derive(Debug, Default)]
pub struct Count(AtomicU64);

impl Clone for Count {
    /// A copy of the value now.
    fn clone(&self) -> Count {
        Count(AtomicU64::new(self.get()))
    }
}

impl Count {
    /// Adds one.
    pub fn inc(&self) {
        self.0.fetch_add(1, Relaxed);
    }

    /// The value now.
    pub fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}
