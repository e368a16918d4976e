//! The handshake records (docs/protocol.md §2): the first frame in each direction, with no header.
//!
//! The trailing `readOnly` byte is optional. A 45-byte request (every client but go-zookeeper)
//! carries it and must be answered with a 37-byte response that carries it too; a 44-byte
//! request gets a 36-byte response. `read_only: Option<bool>` keeps which form was used, so the
//! server can answer in kind and golden frames re-encode byte for byte.

use crate::codec::{Codec, DecodeError};

/// The first frame a client sends.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConnectRequest {
    /// 0 from every client; ignored.
    pub protocol_version: i32,
    /// The highest zxid the client has seen (0 on first connect).
    pub last_zxid_seen: i64,
    /// Requested session timeout, ms.
    pub timeout: i32,
    /// 0 for a new session, else the session to resume.
    pub session_id: i64,
    /// 16 bytes from real clients; null or empty is tolerated for a new session.
    pub passwd: Option<Vec<u8>>,
    /// The trailing readOnly byte, if the client sent one.
    pub read_only: Option<bool>,
}

impl Codec for ConnectRequest {
    const MIN_SIZE: usize = 4 + 8 + 4 + 8 + 4;
    fn decode(buf: &mut &[u8]) -> Result<Self, DecodeError> {
        Ok(ConnectRequest {
            protocol_version: i32::decode(buf)?,
            last_zxid_seen: i64::decode(buf)?,
            timeout: i32::decode(buf)?,
            session_id: i64::decode(buf)?,
            passwd: Option::<Vec<u8>>::decode(buf)?,
            // Bytes after the readOnly byte are ignored, as ZooKeeper does.
            read_only: decode_trailing_flag(buf)?,
        })
    }
    fn encode(&self, buf: &mut Vec<u8>) {
        self.protocol_version.encode(buf);
        self.last_zxid_seen.encode(buf);
        self.timeout.encode(buf);
        self.session_id.encode(buf);
        self.passwd.encode(buf);
        encode_trailing_flag(self.read_only, buf);
    }
}

/// The first frame the server sends.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConnectResponse {
    /// Always 0; the Rust client rejects anything else.
    pub protocol_version: i32,
    /// Negotiated timeout, ms; 0 means the session is invalid (expired or unknown).
    pub timeout: i32,
    /// The session id; 0 when invalid.
    pub session_id: i64,
    /// The session password; always 16 bytes from a server (zeros when invalid).
    pub passwd: Option<Vec<u8>>,
    /// Present exactly when the request carried it.
    pub read_only: Option<bool>,
}

impl ConnectResponse {
    /// The reply to a reattach with an unknown or expired session, or a wrong password: timeout
    /// 0, session 0 and sixteen zero bytes (never an empty password, which the C and Rust
    /// clients reject).
    pub fn invalid(read_only: Option<bool>) -> ConnectResponse {
        ConnectResponse {
            protocol_version: 0,
            timeout: 0,
            session_id: 0,
            passwd: Some(vec![0; 16]),
            read_only: read_only.map(|_| false),
        }
    }

    /// Whether this response says the session is gone.
    pub fn is_expired(&self) -> bool {
        self.timeout <= 0 || self.session_id == 0
    }
}

impl Codec for ConnectResponse {
    const MIN_SIZE: usize = 4 + 4 + 8 + 4;
    fn decode(buf: &mut &[u8]) -> Result<Self, DecodeError> {
        Ok(ConnectResponse {
            protocol_version: i32::decode(buf)?,
            timeout: i32::decode(buf)?,
            session_id: i64::decode(buf)?,
            passwd: Option::<Vec<u8>>::decode(buf)?,
            read_only: decode_trailing_flag(buf)?,
        })
    }
    fn encode(&self, buf: &mut Vec<u8>) {
        self.protocol_version.encode(buf);
        self.timeout.encode(buf);
        self.session_id.encode(buf);
        self.passwd.encode(buf);
        encode_trailing_flag(self.read_only, buf);
    }
}

/// The optional readOnly byte that ends both handshake records: written only when present.
fn encode_trailing_flag(flag: Option<bool>, buf: &mut Vec<u8>) {
    if let Some(flag) = flag {
        flag.encode(buf);
    }
}

/// The optional readOnly byte that ends both handshake records: absent when nothing is left.
fn decode_trailing_flag(buf: &mut &[u8]) -> Result<Option<bool>, DecodeError> {
    if buf.is_empty() {
        Ok(None)
    } else {
        bool::decode(buf).map(Some)
    }
}

#[cfg(any(test, feature = "arbitrary"))]
mod arbitrary {
    use super::*;
    use proptest::prelude::*;

    impl Arbitrary for ConnectRequest {
        type Parameters = ();
        type Strategy = BoxedStrategy<ConnectRequest>;
        fn arbitrary_with(_: ()) -> Self::Strategy {
            (
                any::<i32>(),
                any::<i64>(),
                any::<i32>(),
                any::<i64>(),
                any::<Option<Vec<u8>>>(),
                any::<Option<bool>>(),
            )
                .prop_map(|(v, z, t, s, p, r)| ConnectRequest {
                    protocol_version: v,
                    last_zxid_seen: z,
                    timeout: t,
                    session_id: s,
                    passwd: p,
                    read_only: r,
                })
                .boxed()
        }
    }

    impl Arbitrary for ConnectResponse {
        type Parameters = ();
        type Strategy = BoxedStrategy<ConnectResponse>;
        fn arbitrary_with(_: ()) -> Self::Strategy {
            (
                any::<i32>(),
                any::<i32>(),
                any::<i64>(),
                any::<Option<Vec<u8>>>(),
                any::<Option<bool>>(),
            )
                .prop_map(|(v, t, s, p, r)| ConnectResponse {
                    protocol_version: v,
                    timeout: t,
                    session_id: s,
                    passwd: p,
                    read_only: r,
                })
                .boxed()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::decode_from;

    #[test]
    fn both_handshake_forms_are_kept() {
        let mut req = ConnectRequest {
            timeout: 30000,
            passwd: Some(vec![0; 16]),
            read_only: Some(false),
            ..Default::default()
        };
        assert_eq!(req.to_bytes().len(), 45);
        req.read_only = None;
        assert_eq!(req.to_bytes().len(), 44);
        assert_eq!(decode_from::<ConnectRequest>(&req.to_bytes()), Ok(req));
        assert_eq!(ConnectResponse::invalid(Some(true)).to_bytes().len(), 37);
        assert_eq!(ConnectResponse::invalid(None).to_bytes().len(), 36);
    }
}
