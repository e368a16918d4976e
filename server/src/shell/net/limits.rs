//! The time and queue limits of a client connection, shared by the connection's task and the
//! TLS handshake before it.

use std::time::Duration;

/// How long a connection may stay silent before its handshake, and how long a write may make
/// no progress before it (ZooKeeper: `zookeeper.nio.sessionlessCnxnTimeout`, 10 s).
pub(crate) const HANDSHAKE_IDLE: Duration = Duration::from_secs(10);

/// The longest a four-letter word's answer may take to write, however slowly the peer reads.
pub(crate) const FOUR_LETTER_DEADLINE: Duration = Duration::from_secs(30);

/// After bad input (a frame length outside the limit), how long the connection goes on reading
/// and dropping what the peer sends while its replies are flushed and after its write side is
/// shut down, and how much it drops at most: closing a socket with unread bytes resets it, and
/// a reset can destroy replies the peer has not yet read.
pub(crate) const BAD_INPUT_LINGER: Duration = Duration::from_secs(2);

/// See [`BAD_INPUT_LINGER`].
pub(crate) const BAD_INPUT_LINGER_BYTES: usize = 2 << 20;

/// Requests are read from a connection only while fewer frames than this wait to be written
/// to it. ZooKeeper stops reading at 1 000 outstanding requests (`globalOutstandingLimit`);
/// here the bound is per connection and counts what the connection has not yet taken.
pub(crate) const MAX_QUEUED_FRAMES: u64 = 1000;
