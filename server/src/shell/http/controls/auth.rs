//! The test controls' token: drawn once per server from the OS random source, and required on
//! every call as `Authorization: Bearer <token>` (docs/test-controls.md).
//!
//! Invariants: the token is 32 random bytes written as 64 lowercase hex digits; a presented
//! token is compared in constant time over its bytes, so that the time of a refusal says
//! nothing about how much of a guess was right (only a wrong length is refused early, and the
//! length is public).

use hyper::HeaderMap;
use hyper::header::AUTHORIZATION;
use rand::TryRngCore;
use subtle::ConstantTimeEq;

/// How many random bytes a token carries.
const TOKEN_BYTES: usize = 32;

/// A fresh token: 32 bytes from the OS random source, as 64 hex digits.
///
/// # Errors
/// The OS random source failed.
pub(crate) fn new_token() -> std::io::Result<String> {
    let mut bytes = [0u8; TOKEN_BYTES];
    rand::rngs::OsRng
        .try_fill_bytes(&mut bytes)
        .map_err(std::io::Error::other)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `headers` carry `Authorization: Bearer <token>` with exactly this token. The scheme
/// is matched case-insensitively, as RFC 9110 §11.1 says auth schemes are.
pub(crate) fn authorized(headers: &HeaderMap, token: &str) -> bool {
    let Some(value) = headers.get(AUTHORIZATION) else {
        return false;
    };
    let value = value.as_bytes();
    let scheme = b"bearer ";
    if value.len() < scheme.len() || !value[..scheme.len()].eq_ignore_ascii_case(scheme) {
        return false;
    }
    let presented = value[scheme.len()..].trim_ascii();
    bool::from(presented.ct_eq(token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use hyper::header::HeaderValue;

    use super::*;

    fn with(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, HeaderValue::from_str(value).expect("header"));
        headers
    }

    #[test]
    fn tokens_are_64_hex_digits_and_differ() {
        let (a, b) = (new_token().expect("token"), new_token().expect("token"));
        assert_eq!(a.len(), 64);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(a, b);
    }

    #[test]
    fn only_the_exact_bearer_token_passes() {
        let token = new_token().expect("token");
        assert!(authorized(&with(&format!("Bearer {token}")), &token));
        assert!(authorized(&with(&format!("bearer {token}")), &token));
        assert!(!authorized(&HeaderMap::new(), &token));
        assert!(!authorized(&with(&format!("Basic {token}")), &token));
        assert!(!authorized(&with("Bearer "), &token));
        assert!(!authorized(
            &with(&format!("Bearer {}", &token[1..])),
            &token
        ));
        let mut wrong = token.clone().into_bytes();
        wrong[63] = if wrong[63] == b'0' { b'1' } else { b'0' };
        let wrong = String::from_utf8(wrong).expect("ascii");
        assert!(!authorized(&with(&format!("Bearer {wrong}")), &token));
    }
}
