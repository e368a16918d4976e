//! [`Now`]: the time the shell passes into every call, the core's only clock.

/// The time of a call. `mono_ms` drives expiry and reaping; `wall_ms` is what ctime and mtime
/// record. A shell under virtual time advances both together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Now {
    /// Monotonic milliseconds since an arbitrary origin.
    pub mono_ms: u64,
    /// Milliseconds since the Unix epoch.
    pub wall_ms: i64,
}
