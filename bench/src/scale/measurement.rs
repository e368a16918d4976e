//! [`Measurement`]: what one memory reading of `scale` found, nodes or sessions alike. Its own
//! file so that the two measurements ([`super::nodes`], [`super::sessions`]) and the report
//! in `mod.rs` share it without depending on each other.

use crate::rss::Growth;

/// One measurement.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// `nodes` or `sessions`.
    pub what: &'static str,
    /// How many.
    pub count: usize,
    /// The nodes' value size.
    pub value_size: Option<usize>,
    /// The server's RSS before and after.
    pub rss: Growth,
    /// Time to create the nodes or open the sessions.
    pub seconds: f64,
    /// Sessions lost during the hold (always 0 for nodes).
    pub lost: usize,
}

impl Measurement {
    /// Bytes of RSS per node or session.
    pub fn bytes_per_item(&self) -> f64 {
        self.rss.per(self.count)
    }
}
