//! What the proxy and its connections share: the upstream address, the connections' controls,
//! and the switches and counts every connection task reads.
//!
//! Invariant: its std mutexes are never held across an await.

use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use tokio::task::AbortHandle;

use super::cut::CutAfter;

/// One accepted connection's controls.
pub(super) struct Conn {
    /// Aborting the connection's task drops both sockets: that is the cut.
    pub(super) task: AbortHandle,
    pub(super) blackhole: Arc<AtomicBool>,
}

/// What the proxy and its connections share.
pub(super) struct Shared {
    pub(super) upstream: String,
    pub(super) conns: Mutex<Vec<Conn>>,
    /// True: connections accepted from now on wait before being connected upstream.
    pub(super) held: watch::Sender<bool>,
    /// True: no connection forwards anything (what it has read waits).
    pub(super) paused: watch::Sender<bool>,
    /// The armed request to cut after, if any.
    pub(super) armed: Mutex<Option<CutAfter>>,
    /// Connections cut after an armed request so far.
    pub(super) cuts: watch::Sender<usize>,
    /// Bytes blackholed so far, both ways.
    pub(super) swallowed: watch::Sender<usize>,
    pub(super) accepted: AtomicUsize,
}
