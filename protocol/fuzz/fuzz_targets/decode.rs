//! Feeds arbitrary bytes to every decoder of `shepherd-protocol`.
//!
//! Nothing may panic (the crate's invariant), and whatever decodes must survive
//! encode → decode unchanged: the first decoding may normalize (a null vector becomes empty,
//! invalid UTF-8 becomes U+FFFD, any non-zero bool byte becomes 1), but a value that came out of
//! the decoder must be a fixed point of the round trip.

#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use shepherd_protocol::{
    Codec, ConnectRequest, ConnectResponse, DEFAULT_MAX_BUFFER, FourLetterWord, Frame, FrameCodec,
    MultiRequest, MultiResponse, OpCode, Reply, decode_from, decode_reply, decode_request,
    encode_reply, encode_request, frame_len,
};
use std::fmt::Debug;
use tokio_util::codec::Decoder;

/// Decodes `T` from `data`; if that works, checks that encoding and decoding again is stable.
fn record_round_trip<T: Codec + PartialEq + Debug>(data: &[u8]) {
    if let Ok(value) = decode_from::<T>(data) {
        let bytes = value.to_bytes();
        let mut cursor = bytes.as_slice();
        let again = T::decode(&mut cursor).expect("re-encoded record decodes");
        assert_eq!(again, value, "record round trip");
        assert!(cursor.is_empty(), "re-encoded record has trailing bytes");
    }
}

/// A request payload: header and body; a decoded request must re-encode to the same request.
fn request(payload: &[u8]) {
    let Ok((header, body)) = decode_request(payload) else {
        return;
    };
    let Ok(request) = body else {
        return;
    };
    assert_eq!(i32::from(request.op_code()), header.op_type);
    let mut bytes = Vec::new();
    encode_request(header.xid, &request, &mut bytes);
    let (header2, body2) = decode_request(&bytes).expect("re-encoded header decodes");
    assert_eq!(header2, header, "request header round trip");
    assert_eq!(body2, Ok(request), "request body round trip");
}

/// A reply payload decoded as the answer to every opcode in turn.
fn reply(payload: &[u8]) {
    for &op in OpCode::ALL {
        let Ok(decoded) = decode_reply(payload, |_| Some(op)) else {
            continue;
        };
        let mut bytes = Vec::new();
        match &decoded {
            Reply::Ok(header, body) => {
                assert_eq!(body.op_code(), op);
                encode_reply(header, Some(body), &mut bytes);
            }
            Reply::Err(header) => encode_reply(header, None, &mut bytes),
            // `encode_event` always writes err 0; a notification keeps whatever err it had, so
            // the header is written as decoded.
            Reply::Event(header, event) => {
                header.encode(&mut bytes);
                event.encode(&mut bytes);
            }
        }
        let again = decode_reply(&bytes, |_| Some(op)).expect("re-encoded reply decodes");
        assert_eq!(again, decoded, "reply round trip for {op:?}");
    }
}

/// The server-side frame codec: four-letter word sniffing, then length-prefixed payloads, each
/// of which is also tried as a request. The client codec gets a small limit to hit it often.
fn frame_codecs(data: &[u8]) {
    for mut codec in [
        FrameCodec::server(DEFAULT_MAX_BUFFER),
        FrameCodec::client(64),
    ] {
        let mut buf = BytesMut::from(data);
        // Every frame consumes at least four bytes, so this ends.
        while let Ok(Some(frame)) = codec.decode(&mut buf) {
            match frame {
                Frame::Payload(payload) => request(&payload),
                Frame::FourLetterWord(word) => assert!(data.starts_with(&word.bytes())),
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    request(data);
    reply(data);

    record_round_trip::<ConnectRequest>(data);
    record_round_trip::<ConnectResponse>(data);
    record_round_trip::<MultiRequest>(data);
    record_round_trip::<MultiResponse>(data);

    if let Some(first) = data.first_chunk::<4>() {
        if let Some(word) = FourLetterWord::recognize(*first) {
            assert_eq!(word.bytes(), *first);
        }
        // The limit comes from the input too, so both sides of it are reached.
        let max = data.get(4..8).map_or(DEFAULT_MAX_BUFFER, |m| {
            u32::from_be_bytes(m.try_into().unwrap()) as usize
        });
        if let Ok(len) = frame_len(*first, max) {
            assert!(len <= max);
            assert_eq!(i32::try_from(len).ok(), Some(i32::from_be_bytes(*first)));
        }
    }

    frame_codecs(data);
});
