//! The jute binary archive: one codec trait, one decode error, and the primitive encodings.
//!
//! Invariants kept here, and relied on by every record built on top:
//! * every length or count read from the wire is checked against the bytes that remain in the
//!   frame *before* anything is allocated, so a hostile 4-byte length can never make us reserve
//!   more memory than the frame that carried it;
//! * decoding never panics, whatever the input;
//! * `null` (length -1) and empty (length 0) stay distinct wherever the wire can say either:
//!   `Option<Vec<u8>>` for buffers, `Option<String>` for nullable strings.

use thiserror::Error;

/// Why bytes could not be decoded into a record.
///
/// One error type serves the whole crate: a peer that sends something undecodable is told so
/// (ZooKeeper answers `MarshallingError`, or closes the connection) and nothing else depends on
/// the exact cause, which is kept for logs.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// The frame ended before the record did.
    #[error("unexpected end of frame: needed {needed} more bytes, {remaining} left")]
    UnexpectedEof {
        /// Bytes the next field needs.
        needed: usize,
        /// Bytes left in the frame.
        remaining: usize,
    },
    /// A length or count below -1.
    #[error("negative length {0}")]
    NegativeLength(i32),
    /// A length or count that cannot fit in what is left of the frame.
    #[error("length {len} exceeds the {remaining} bytes left in the frame")]
    LengthOverrun {
        /// The length read from the wire.
        len: i64,
        /// Bytes left in the frame.
        remaining: usize,
    },
    /// A null (-1) where the record does not allow one, such as a path.
    #[error("null {0} where a value is required")]
    UnexpectedNull(&'static str),
    /// A number that is not a member of a wire enum.
    #[error("unknown {kind} value {value}")]
    UnknownValue {
        /// The enum's name.
        kind: &'static str,
        /// The value read.
        value: i64,
    },
    /// A frame length outside `0..=max`.
    #[error("frame length {len} is outside 0..={max}")]
    FrameLength {
        /// The length prefix, as a signed int.
        len: i64,
        /// The configured limit (jute.maxbuffer).
        max: usize,
    },
    /// A multi request or response whose op list is malformed.
    #[error("malformed multi: {0}")]
    Multi(&'static str),
}

/// A jute record or primitive: how it is written, how it is read, and how small it can be.
///
/// Decoding reads from a cursor (`&mut &[u8]`) that is advanced past what was consumed;
/// encoding appends to a `Vec<u8>`. Encoding cannot fail: every value of a Rust type here has a
/// wire form.
pub trait Codec: Sized {
    /// The fewest bytes any value of this type occupies on the wire. Vector counts are bounded
    /// with it, so that `count * MIN_SIZE` never exceeds what the frame still holds.
    const MIN_SIZE: usize;

    /// Reads one value, advancing `buf` past it.
    ///
    /// # Errors
    /// [`DecodeError`] if the bytes do not form a value of this type.
    fn decode(buf: &mut &[u8]) -> Result<Self, DecodeError>;

    /// Appends the wire form of `self` to `buf`.
    fn encode(&self, buf: &mut Vec<u8>);

    /// Encodes into a fresh vector.
    fn to_bytes(&self) -> Vec<u8> {
        let mut buf = Vec::new();
        self.encode(&mut buf);
        buf
    }
}

/// Takes `n` bytes off the front of the cursor.
pub(crate) fn take<'a>(buf: &mut &'a [u8], n: usize) -> Result<&'a [u8], DecodeError> {
    if buf.len() < n {
        return Err(DecodeError::UnexpectedEof {
            needed: n,
            remaining: buf.len(),
        });
    }
    let (head, tail) = buf.split_at(n);
    *buf = tail;
    Ok(head)
}

fn take_array<const N: usize>(buf: &mut &[u8]) -> Result<[u8; N], DecodeError> {
    let mut out = [0u8; N];
    out.copy_from_slice(take(buf, N)?);
    Ok(out)
}

/// Reads a length or count (`-1` is null) and checks that `len * unit` bytes remain.
fn read_len(buf: &mut &[u8], unit: usize) -> Result<Option<usize>, DecodeError> {
    let len = i32::decode(buf)?;
    match len {
        -1 => Ok(None),
        n if n < -1 => Err(DecodeError::NegativeLength(n)),
        n => {
            let n = n as usize;
            // A zero-sized element cannot exist on the wire, but guard the division anyway.
            if n.saturating_mul(unit.max(1)) > buf.len() {
                return Err(DecodeError::LengthOverrun {
                    len: n as i64,
                    remaining: buf.len(),
                });
            }
            Ok(Some(n))
        }
    }
}

/// Writes a length prefix. Lengths beyond `i32::MAX` cannot be represented by jute; frames are
/// limited far below that, so saturating keeps encoding infallible without hiding a real case.
fn write_len(buf: &mut Vec<u8>, len: usize) {
    (i32::try_from(len).unwrap_or(i32::MAX)).encode(buf);
}

impl Codec for i32 {
    const MIN_SIZE: usize = 4;
    fn decode(buf: &mut &[u8]) -> Result<Self, DecodeError> {
        Ok(i32::from_be_bytes(take_array(buf)?))
    }
    fn encode(&self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(&self.to_be_bytes());
    }
}

impl Codec for i64 {
    const MIN_SIZE: usize = 8;
    fn decode(buf: &mut &[u8]) -> Result<Self, DecodeError> {
        Ok(i64::from_be_bytes(take_array(buf)?))
    }
    fn encode(&self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(&self.to_be_bytes());
    }
}

impl Codec for bool {
    const MIN_SIZE: usize = 1;
    /// Any non-zero byte is true, as Java's reader has it.
    fn decode(buf: &mut &[u8]) -> Result<Self, DecodeError> {
        Ok(take(buf, 1)?[0] != 0)
    }
    fn encode(&self, buf: &mut Vec<u8>) {
        buf.push(u8::from(*self));
    }
}

/// A jute `buffer`; `None` is the null buffer (length -1).
impl Codec for Option<Vec<u8>> {
    const MIN_SIZE: usize = 4;
    fn decode(buf: &mut &[u8]) -> Result<Self, DecodeError> {
        match read_len(buf, 1)? {
            None => Ok(None),
            Some(n) => Ok(Some(take(buf, n)?.to_vec())),
        }
    }
    fn encode(&self, buf: &mut Vec<u8>) {
        match self {
            None => (-1i32).encode(buf),
            Some(bytes) => {
                write_len(buf, bytes.len());
                buf.extend_from_slice(bytes);
            }
        }
    }
}

/// A nullable jute `ustring`. Invalid UTF-8 is replaced with U+FFFD, as the Java server's
/// decoder does; ZooKeeper's path rules then reject such a path (U+FFFD is in a banned range).
impl Codec for Option<String> {
    const MIN_SIZE: usize = 4;
    fn decode(buf: &mut &[u8]) -> Result<Self, DecodeError> {
        match read_len(buf, 1)? {
            None => Ok(None),
            Some(n) => {
                let bytes = take(buf, n)?;
                // Validating first is much faster than the lossy decoder's chunk walk, and
                // valid UTF-8 is what every real client sends.
                Ok(Some(match std::str::from_utf8(bytes) {
                    Ok(text) => text.to_owned(),
                    Err(_) => String::from_utf8_lossy(bytes).into_owned(),
                }))
            }
        }
    }
    fn encode(&self, buf: &mut Vec<u8>) {
        match self {
            None => (-1i32).encode(buf),
            Some(s) => {
                write_len(buf, s.len());
                buf.extend_from_slice(s.as_bytes());
            }
        }
    }
}

/// A `ustring` that must not be null (paths, mostly). A null is a decode error, which the
/// server answers with `MarshallingError` as ZooKeeper does.
impl Codec for String {
    const MIN_SIZE: usize = 4;
    fn decode(buf: &mut &[u8]) -> Result<Self, DecodeError> {
        Option::<String>::decode(buf)?.ok_or(DecodeError::UnexpectedNull("string"))
    }
    fn encode(&self, buf: &mut Vec<u8>) {
        write_len(buf, self.len());
        buf.extend_from_slice(self.as_bytes());
    }
}

/// A jute `vector`; `None` is the null vector (count -1).
impl<T: Codec> Codec for Option<Vec<T>> {
    const MIN_SIZE: usize = 4;
    fn decode(buf: &mut &[u8]) -> Result<Self, DecodeError> {
        match read_len(buf, T::MIN_SIZE)? {
            None => Ok(None),
            Some(n) => {
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(T::decode(buf)?);
                }
                Ok(Some(items))
            }
        }
    }
    fn encode(&self, buf: &mut Vec<u8>) {
        match self {
            None => (-1i32).encode(buf),
            Some(items) => items.encode(buf),
        }
    }
}

/// A jute `vector` where null carries no meaning of its own: a null vector decodes as empty.
/// (No client sends a null list where the server would treat it differently from an empty one:
/// an ACL list that is null or empty is `InvalidACL` either way.)
impl<T: Codec> Codec for Vec<T> {
    const MIN_SIZE: usize = 4;
    fn decode(buf: &mut &[u8]) -> Result<Self, DecodeError> {
        Ok(Option::<Vec<T>>::decode(buf)?.unwrap_or_default())
    }
    fn encode(&self, buf: &mut Vec<u8>) {
        write_len(buf, self.len());
        for item in self {
            item.encode(buf);
        }
    }
}

/// Decodes a whole body, rejecting nothing after it: ZooKeeper ignores trailing bytes.
///
/// # Errors
/// [`DecodeError`] if `bytes` does not start with a `T`.
pub fn decode_from<T: Codec>(mut bytes: &[u8]) -> Result<T, DecodeError> {
    T::decode(&mut bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_and_empty_buffers_differ() {
        assert_eq!(None::<Vec<u8>>.to_bytes(), [0xff; 4]);
        assert_eq!(Some(Vec::<u8>::new()).to_bytes(), [0; 4]);
        assert_eq!(decode_from::<Option<Vec<u8>>>(&[0xff; 4]), Ok(None));
        assert_eq!(decode_from::<Option<Vec<u8>>>(&[0; 4]), Ok(Some(vec![])));
    }

    #[test]
    fn lengths_are_bounded_before_allocation() {
        // A vector that claims 2^31-1 strings in an 8-byte frame must fail without allocating.
        let bytes = [0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0];
        assert!(matches!(
            decode_from::<Vec<String>>(&bytes),
            Err(DecodeError::LengthOverrun { .. })
        ));
        assert!(matches!(
            decode_from::<Option<Vec<u8>>>(&[0xff, 0xff, 0xff, 0xfe]),
            Err(DecodeError::NegativeLength(-2))
        ));
    }

    #[test]
    fn null_string_is_rejected_where_required() {
        assert_eq!(
            decode_from::<String>(&[0xff; 4]),
            Err(DecodeError::UnexpectedNull("string"))
        );
        assert_eq!(decode_from::<Option<String>>(&[0xff; 4]), Ok(None));
    }

    #[test]
    fn invalid_utf8_is_replaced_as_java_does() {
        let bytes = [0, 0, 0, 3, b'/', 0xff, b'a'];
        assert_eq!(
            decode_from::<Option<String>>(&bytes),
            Ok(Some("/\u{fffd}a".to_string()))
        );
    }

    #[test]
    fn any_nonzero_byte_is_true() {
        assert_eq!(decode_from::<bool>(&[7]), Ok(true));
        assert_eq!(decode_from::<bool>(&[0]), Ok(false));
    }
}
