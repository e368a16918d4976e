//! The hashes of RFC 2831 §2.1.2.1: the user's key `H(user:realm:password)`, A1, A2, the
//! `response` value and the server's `rspauth`, for `qop=auth` only. MD5 is RustCrypto's `md-5`.
//!
//! Invariant: every function here is pure; user name and password bytes are hashed exactly as
//! the caller gives them (the caller applies the `charset` rule).

use md5::{Digest, Md5};

/// The 16-byte `H(user:realm:password)`, the only password-derived secret a side keeps.
pub(crate) fn user_key(user: &[u8], realm: &[u8], password: &[u8]) -> [u8; 16] {
    let mut h = Md5::new();
    h.update(user);
    h.update(b":");
    h.update(realm);
    h.update(b":");
    h.update(password);
    h.finalize().into()
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> [u8; 32] {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = [0u8; 32];
    for (i, b) in bytes.iter().take(16).enumerate() {
        out[2 * i] = DIGITS[usize::from(b >> 4)];
        out[2 * i + 1] = DIGITS[usize::from(b & 0x0f)];
    }
    out
}

/// The per-exchange values both sides hash.
pub(crate) struct Exchange<'a> {
    pub key: [u8; 16],
    pub nonce: &'a [u8],
    pub cnonce: &'a [u8],
    pub nc: &'a [u8],
    pub authzid: Option<&'a [u8]>,
    pub digest_uri: &'a [u8],
}

impl Exchange<'_> {
    /// HEX(KD(HEX(H(A1)), nonce:nc:cnonce:auth:HEX(H(A2)))) with A2 = `prefix` + digest-uri:
    /// `AUTHENTICATE:` for the client's `response`, empty for the server's `rspauth`.
    fn kd(&self, a2_prefix: &[u8]) -> [u8; 32] {
        let mut a1 = Md5::new();
        a1.update(self.key);
        a1.update(b":");
        a1.update(self.nonce);
        a1.update(b":");
        a1.update(self.cnonce);
        if let Some(authzid) = self.authzid {
            a1.update(b":");
            a1.update(authzid);
        }
        let ha1 = hex(&a1.finalize());
        let mut a2 = Md5::new();
        a2.update(a2_prefix);
        a2.update(b":");
        a2.update(self.digest_uri);
        let ha2 = hex(&a2.finalize());
        let mut kd = Md5::new();
        kd.update(ha1);
        kd.update(b":");
        kd.update(self.nonce);
        kd.update(b":");
        kd.update(self.nc);
        kd.update(b":");
        kd.update(self.cnonce);
        kd.update(b":auth:");
        kd.update(ha2);
        hex(&kd.finalize())
    }

    /// The client's `response` directive.
    pub(crate) fn response(&self) -> [u8; 32] {
        self.kd(b"AUTHENTICATE")
    }

    /// The server's `rspauth`.
    pub(crate) fn rspauth(&self) -> [u8; 32] {
        self.kd(b"")
    }
}

/// Compares two digests in time independent of where they differ.
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `s` as ISO-8859-1 bytes when every character fits, else as UTF-8: the bytes a Java peer
/// hashes for a user name or password when `charset=utf-8` was not agreed (RFC 2831 §2.1.2.1).
pub(crate) fn latin1_or_utf8(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        match u8::try_from(u32::from(c)) {
            Ok(b) => out.push(b),
            Err(_) => return s.as_bytes().to_vec(),
        }
    }
    out
}
