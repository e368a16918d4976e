//! Framing: a 4-byte big-endian length, then that many bytes (docs/protocol.md §1.1), and, in the server's
//! `FrameCodec` (feature `codec`), the sniffing of a four-letter word in place of the first
//! length (docs/protocol.md §14; the words themselves are [`crate::FourLetterWord`]).
//!
//! The limit is `jute.maxbuffer` (1,048,575 by default) on the payload, not counting the prefix.
//! A length outside `0..=max` is not answered: ZooKeeper closes the connection, and so must any
//! server built on this. The limit applies to what is *read*; what is written is not limited, as
//! in ZooKeeper, whose replies may exceed it (a getData of a near-maximal node).

use crate::codec::DecodeError;

/// ZooKeeper's default `jute.maxbuffer`: 0xfffff bytes.
pub const DEFAULT_MAX_BUFFER: usize = 0xfffff;

/// Checks a length prefix against the limit, returning the payload length.
///
/// # Errors
/// [`DecodeError::FrameLength`] when the length is negative or above `max`.
pub fn frame_len(prefix: [u8; 4], max: usize) -> Result<usize, DecodeError> {
    let len = i32::from_be_bytes(prefix);
    match usize::try_from(len) {
        Ok(n) if n <= max => Ok(n),
        _ => Err(DecodeError::FrameLength {
            len: len.into(),
            max,
        }),
    }
}

/// Wraps a payload built by `body` in its length prefix.
pub fn encode_frame(body: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut buf = vec![0u8; 4];
    body(&mut buf);
    let len = i32::try_from(buf.len() - 4).unwrap_or(i32::MAX);
    buf[..4].copy_from_slice(&len.to_be_bytes());
    buf
}

#[cfg(feature = "codec")]
pub use codec_impl::{Frame, FrameCodec};

#[cfg(feature = "codec")]
mod codec_impl {
    use super::DEFAULT_MAX_BUFFER;
    use crate::four_letter_word::FourLetterWord;
    use bytes::{Bytes, BytesMut};
    use std::io;
    use tokio_util::codec::{Decoder, Encoder, LengthDelimitedCodec};

    /// What a [`FrameCodec`] reads.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum Frame {
        /// A payload, without its length prefix.
        Payload(BytesMut),
        /// A four-letter word in place of the first length (server side only).
        FourLetterWord(FourLetterWord),
    }

    /// Length-prefixed frames for tokio-util's `Framed`.
    ///
    /// Reading enforces the `jute.maxbuffer` limit and fails with `InvalidData` beyond it (the
    /// caller then closes the connection, as ZooKeeper does). Writing is not limited.
    #[derive(Debug)]
    pub struct FrameCodec {
        read: LengthDelimitedCodec,
        write: LengthDelimitedCodec,
        sniff_four_letter_words: bool,
    }

    impl FrameCodec {
        /// A codec for a client: every frame is a payload.
        pub fn client(max_buffer: usize) -> FrameCodec {
            FrameCodec::new(max_buffer, false)
        }

        /// A codec for a server: the first four bytes of the connection may be a four-letter
        /// word instead of a length.
        pub fn server(max_buffer: usize) -> FrameCodec {
            FrameCodec::new(max_buffer, true)
        }

        fn new(max_buffer: usize, sniff_four_letter_words: bool) -> FrameCodec {
            let read = LengthDelimitedCodec::builder()
                .length_field_length(4)
                .max_frame_length(max_buffer)
                .big_endian()
                .new_codec();
            let write = LengthDelimitedCodec::builder()
                .length_field_length(4)
                .max_frame_length(i32::MAX as usize)
                .big_endian()
                .new_codec();
            FrameCodec {
                read,
                write,
                sniff_four_letter_words,
            }
        }
    }

    impl Default for FrameCodec {
        fn default() -> Self {
            FrameCodec::client(DEFAULT_MAX_BUFFER)
        }
    }

    impl Decoder for FrameCodec {
        type Item = Frame;
        type Error = io::Error;

        fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, io::Error> {
            if self.sniff_four_letter_words {
                if src.len() < 4 {
                    return Ok(None);
                }
                // Only the very first four bytes of a connection can be a word.
                self.sniff_four_letter_words = false;
                let first = [src[0], src[1], src[2], src[3]];
                if let Some(word) = FourLetterWord::recognize(first) {
                    let _ = src.split_to(4);
                    return Ok(Some(Frame::FourLetterWord(word)));
                }
            }
            Ok(self.read.decode(src)?.map(Frame::Payload))
        }
    }

    impl Encoder<Bytes> for FrameCodec {
        type Error = io::Error;
        fn encode(&mut self, item: Bytes, dst: &mut BytesMut) -> Result<(), io::Error> {
            self.write.encode(item, dst)
        }
    }

    impl Encoder<Vec<u8>> for FrameCodec {
        type Error = io::Error;
        fn encode(&mut self, item: Vec<u8>, dst: &mut BytesMut) -> Result<(), io::Error> {
            self.write.encode(Bytes::from(item), dst)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FourLetterWord;

    #[test]
    fn frame_length_limits() {
        assert_eq!(
            frame_len([0, 0x0f, 0xff, 0xff], DEFAULT_MAX_BUFFER),
            Ok(0xfffff)
        );
        assert!(frame_len([0, 0x10, 0, 0], DEFAULT_MAX_BUFFER).is_err());
        assert!(frame_len([0xff, 0xff, 0xff, 0xff], DEFAULT_MAX_BUFFER).is_err());
        // "xxxx" is a huge length, closed silently by ZooKeeper.
        assert_eq!(FourLetterWord::recognize(*b"xxxx"), None);
        assert!(frame_len(*b"xxxx", DEFAULT_MAX_BUFFER).is_err());
    }
}
