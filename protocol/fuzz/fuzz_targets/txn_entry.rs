//! Feeds arbitrary bytes to the decoders of the transaction log and snapshot records
//! (`shepherd_protocol::txn`): one log entry's payload (`TxnEntry::decode`: header, the body its
//! type selects, the optional digest), and the fixed records the storage reads around it
//! (`FileHeader`, `StatPersisted`, `TxnDigest`).
//!
//! Nothing may panic, whatever a corrupt or hostile data directory holds, and whatever decodes
//! must be a fixed point of encode → decode: the first decoding may normalize (a null multi
//! sub-buffer becomes empty, bytes after a multi sub-record or after the digest are dropped,
//! invalid UTF-8 becomes U+FFFD, a non-zero bool byte becomes 1), the second may not.

#![no_main]

use std::fmt::Debug;

use libfuzzer_sys::fuzz_target;
use shepherd_protocol::txn::{FileHeader, StatPersisted, TxnDigest, TxnEntry};
use shepherd_protocol::{Codec, decode_from};

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

fuzz_target!(|data: &[u8]| {
    if let Ok(entry) = TxnEntry::decode(data) {
        let mut bytes = Vec::new();
        entry.encode(&mut bytes);
        let again = TxnEntry::decode(&bytes).expect("re-encoded entry decodes");
        assert_eq!(again, entry, "entry round trip");
        let mut twice = Vec::new();
        again.encode(&mut twice);
        assert_eq!(twice, bytes, "entry encoding is stable");
    }
    record_round_trip::<FileHeader>(data);
    record_round_trip::<StatPersisted>(data);
    record_round_trip::<TxnDigest>(data);
});
