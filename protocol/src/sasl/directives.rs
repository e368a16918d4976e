//! The `name=value` lists that DIGEST-MD5 challenges and responses are made of (RFC 2831 §7.1:
//! `#rule` lists of `token "=" ( token | quoted-string )`, with `\` escapes in quoted strings).
//!
//! Invariants: parsing never panics, touches each input byte once and keeps at most
//! [`MAX_DIRECTIVES`] entries, so a hostile token costs no more than its own length. Names are
//! compared without regard to case (RFC 2831 §7.1); values are kept as raw bytes, because their
//! character set is only known once the `charset` directive has been read.

use super::SaslError;

/// The most directives one message may carry. A full response has eleven; anything far beyond
/// that is not a DIGEST-MD5 peer.
pub(crate) const MAX_DIRECTIVES: usize = 32;

/// One parsed message: its directives in the order they came.
#[derive(Debug, Default)]
pub(crate) struct Directives {
    entries: Vec<(String, Vec<u8>)>,
}

impl Directives {
    /// Parses `input`.
    ///
    /// # Errors
    /// [`SaslError::Malformed`] for a name without `=`, an unterminated quoted string, bytes after
    /// a closing quote other than a separator, an empty name, or more than [`MAX_DIRECTIVES`].
    pub(crate) fn parse(input: &[u8]) -> Result<Directives, SaslError> {
        let mut entries = Vec::new();
        let mut i = 0;
        let n = input.len();
        loop {
            // Skip separators and linear white space between elements (empty elements are allowed
            // by the #rule).
            while i < n && (input[i] == b',' || input[i].is_ascii_whitespace()) {
                i += 1;
            }
            if i >= n {
                break;
            }
            let start = i;
            while i < n && input[i] != b'=' && input[i] != b',' && !input[i].is_ascii_whitespace() {
                i += 1;
            }
            let name = &input[start..i];
            while i < n && input[i].is_ascii_whitespace() {
                i += 1;
            }
            if name.is_empty() || i >= n || input[i] != b'=' {
                return Err(SaslError::Malformed("a directive without a value"));
            }
            i += 1;
            while i < n && input[i].is_ascii_whitespace() {
                i += 1;
            }
            let mut value = Vec::new();
            if i < n && input[i] == b'"' {
                i += 1;
                let mut closed = false;
                while i < n {
                    match input[i] {
                        b'\\' if i + 1 < n => {
                            value.push(input[i + 1]);
                            i += 2;
                        }
                        b'"' => {
                            closed = true;
                            i += 1;
                            break;
                        }
                        byte => {
                            value.push(byte);
                            i += 1;
                        }
                    }
                }
                if !closed {
                    return Err(SaslError::Malformed("an unterminated quoted string"));
                }
                while i < n && input[i].is_ascii_whitespace() {
                    i += 1;
                }
                if i < n && input[i] != b',' {
                    return Err(SaslError::Malformed("bytes after a quoted string"));
                }
            } else {
                let start = i;
                while i < n && input[i] != b',' {
                    i += 1;
                }
                value.extend_from_slice(input[start..i].trim_ascii_end());
            }
            if entries.len() == MAX_DIRECTIVES {
                return Err(SaslError::Malformed("too many directives"));
            }
            let name = String::from_utf8_lossy(name).to_ascii_lowercase();
            entries.push((name, value));
        }
        Ok(Directives { entries })
    }

    /// The value of directive `name` (lower case), if it appears exactly once.
    ///
    /// # Errors
    /// [`SaslError::Malformed`] when it appears more than once (RFC 2831 forbids repeating every
    /// directive but `realm` in a challenge).
    pub(crate) fn single(&self, name: &'static str) -> Result<Option<&[u8]>, SaslError> {
        let mut found = None;
        for (n, v) in &self.entries {
            if n == name {
                if found.is_some() {
                    return Err(SaslError::Repeated(name));
                }
                found = Some(v.as_slice());
            }
        }
        Ok(found)
    }

    /// The value of directive `name`, which must appear exactly once.
    ///
    /// # Errors
    /// [`SaslError::Missing`] or [`SaslError::Repeated`].
    pub(crate) fn required(&self, name: &'static str) -> Result<&[u8], SaslError> {
        self.single(name)?.ok_or(SaslError::Missing(name))
    }

    /// Whether the message agrees on UTF-8: `charset=utf-8` (any case) → `true`, absent →
    /// `false` (ISO-8859-1, RFC 2831 §2.1.1).
    ///
    /// # Errors
    /// [`SaslError::Repeated`] when `charset` appears twice, [`SaslError::Unacceptable`] for any
    /// other value (UTF-8 is the only one RFC 2831 allows).
    pub(crate) fn utf8_charset(&self) -> Result<bool, SaslError> {
        match self.single("charset")? {
            None => Ok(false),
            Some(c) if c.eq_ignore_ascii_case(b"utf-8") => Ok(true),
            Some(_) => Err(SaslError::Unacceptable("charset")),
        }
    }

    /// Every value of directive `name`, in order (for `realm`, which a challenge may repeat).
    pub(crate) fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.entries
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }
}

/// Appends `name="value"` to `out`, escaping `"` and `\` (RFC 2831 §7.2), with a leading comma
/// unless `out` is empty.
pub(crate) fn push_quoted(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    separate(out);
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"=\"");
    for &byte in value {
        if byte == b'"' || byte == b'\\' {
            out.push(b'\\');
        }
        out.push(byte);
    }
    out.push(b'"');
}

/// Appends `name=value` (a token, unquoted) to `out`.
pub(crate) fn push_token(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    separate(out);
    out.extend_from_slice(name.as_bytes());
    out.push(b'=');
    out.extend_from_slice(value);
}

fn separate(out: &mut Vec<u8>) {
    if !out.is_empty() {
        out.push(b',');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_tokens_escapes_and_whitespace() {
        let d = Directives::parse(
            br#" realm="a\"b" , nonce = "n",qop="auth,auth-int",  ,nc=00000001 "#,
        )
        .unwrap();
        assert_eq!(d.required("realm").unwrap(), b"a\"b");
        assert_eq!(d.required("nonce").unwrap(), b"n");
        assert_eq!(d.required("qop").unwrap(), b"auth,auth-int");
        assert_eq!(d.required("nc").unwrap(), b"00000001");
        assert!(d.single("cnonce").unwrap().is_none());
    }

    #[test]
    fn names_ignore_case_and_repeats_are_refused() {
        let d = Directives::parse(b"NONCE=a,nonce=b").unwrap();
        assert_eq!(d.single("nonce"), Err(SaslError::Repeated("nonce")));
    }

    #[test]
    fn malformed_inputs() {
        for bad in [&b"nonce"[..], b"nonce=\"abc", b"=x", b"a=\"b\"c", b"a b=c"] {
            assert!(
                Directives::parse(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let many = "a=b,".repeat(MAX_DIRECTIVES + 1);
        assert!(Directives::parse(many.as_bytes()).is_err());
    }

    #[test]
    fn writing_escapes_what_parsing_unescapes() {
        let mut out = Vec::new();
        push_quoted(&mut out, "username", br#"we"ird\name"#);
        push_token(&mut out, "nc", b"00000001");
        let d = Directives::parse(&out).unwrap();
        assert_eq!(d.required("username").unwrap(), br#"we"ird\name"#);
        assert_eq!(d.required("nc").unwrap(), b"00000001");
    }
}
