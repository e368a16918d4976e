//! Feeds arbitrary bytes to `TxnBody::decode` under every transaction type: the first four
//! bytes choose the type (any `i32`, so unknown and body-less types are reached too), the rest
//! is the body. A multi (14) reaches every sub-record type through its own sub-op types.
//!
//! Nothing may panic; a body that decodes must re-encode to bytes that decode to the same body
//! and consume them whole (a fixed point of encode → decode after the first, normalizing,
//! decoding).

#![no_main]

use libfuzzer_sys::fuzz_target;
use shepherd_protocol::txn::TxnBody;

fuzz_target!(|data: &[u8]| {
    let Some((op_type, body)) = data.split_first_chunk::<4>() else {
        return;
    };
    let op_type = i32::from_be_bytes(*op_type);
    let mut cursor = body;
    let Ok(decoded) = TxnBody::decode(op_type, &mut cursor) else {
        return;
    };
    assert!(cursor.len() <= body.len());
    let mut bytes = Vec::new();
    decoded.encode(&mut bytes);
    let mut again_cursor = bytes.as_slice();
    let again = TxnBody::decode(op_type, &mut again_cursor).expect("re-encoded body decodes");
    assert_eq!(again, decoded, "body round trip for type {op_type}");
    assert!(again_cursor.is_empty(), "re-encoded body has trailing bytes");
});
