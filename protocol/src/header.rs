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

impl RequestHeader {
    /// The header at the front of a request payload, read without decoding the body: what a
    /// server counts and matches before the whole request is decoded. `None` for a payload too
    /// short to hold one.
    pub fn peek(payload: &[u8]) -> Option<RequestHeader> {
        let word = |at: usize| -> Option<i32> {
            Some(i32::from_be_bytes(
                payload.get(at..at + 4)?.try_into().ok()?,
            ))
        };
        Some(RequestHeader {
            xid: word(0)?,
            op_type: word(4)?,
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peek_reads_the_header_a_decode_reads_and_nothing_of_a_short_payload() {
        let payload = [0, 0, 0, 7, 0, 0, 0, 4, 0xff];
        let decoded = crate::decode_from::<RequestHeader>(&payload[..8]).unwrap();
        assert_eq!(RequestHeader::peek(&payload), Some(decoded));
        assert_eq!(RequestHeader::peek(&payload[..7]), None);
    }
}
