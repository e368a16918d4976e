//! The headers in front of every frame after the handshake, and the reserved xids ([`xid`]).
//!
//! Invariant: the opcode of a request header and the error code of a reply header stay raw
//! `i32`s, because an unknown value must still be answered (`Unimplemented`) or reported, not
//! dropped by the decoder.

use crate::record::record;

record! {
    /// Header of every request after the handshake.
    pub struct RequestHeader {
        /// Echoed in the reply.
        pub xid: i32,
        /// The opcode, raw: an unknown one must still be answered (`Unimplemented`).
        pub op_type: i32,
    }
}

record! {
    /// Header of every reply and notification.
    pub struct ReplyHeader {
        /// The request's xid, or a reserved one (see [`crate::xid`]).
        pub xid: i32,
        /// The last zxid at reply time (docs/protocol.md §3.3).
        pub zxid: i64,
        /// A [`crate::ErrorCode`], raw: a body follows only when it is 0.
        pub err: i32,
    }
}

/// Reserved xids (docs/protocol.md §3.2).
pub mod xid {
    /// A watch notification.
    pub const NOTIFICATION: i32 = -1;
    /// A ping; its reply always carries -2.
    pub const PING: i32 = -2;
    /// The auth packet, by client convention.
    pub const AUTH: i32 = -4;
    /// setWatches and setWatches2, by the convention of the Java, C and Rust clients.
    pub const SET_WATCHES: i32 = -8;
}
