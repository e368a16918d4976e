//! Unique paths, so that tests sharing a server (a real ZooKeeper above all, which outlives
//! every run) never meet each other's nodes.
//!
//! Invariant: no two calls in one process return the same path (a counter), and calls in
//! different processes or runs differ too (the pid and the clock).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A path no other test (or earlier run) uses: `/t-<name>-<pid>-<n>-<nanos>`.
pub fn unique(name: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    format!("/t-{name}-{}-{n}-{nanos}", std::process::id())
}
