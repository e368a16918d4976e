//! The identifiers the core and its shell share: connections and sessions. Their own file, below
//! every other module, so that the tables that key on them need nothing of the core.

/// A connection, as numbered by the shell. Never reused within one server.
pub type ConnId = u64;

/// A session id, as on the wire.
pub type SessionId = i64;
