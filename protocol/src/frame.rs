//! Framing: a 4-byte big-endian length, then that many bytes (§1.1), and the four-letter words
//! that may stand in place of the first length (§14).
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

/// The admin commands a connection may send instead of a ConnectRequest (§14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FourLetterWord {
    /// `ruok`: answers `imok`.
    Ruok,
    /// `stat`: version, clients, and server stats.
    Stat,
    /// `srvr`: server stats.
    Srvr,
    /// `mntr`: metrics as `zk_<key>\t<value>` lines.
    Mntr,
    /// `cons`: connection details.
    Cons,
    /// `crst`: reset connection stats.
    Crst,
    /// `srst`: reset server stats.
    Srst,
    /// `dump`: sessions and ephemerals.
    Dump,
    /// `conf`: configuration.
    Conf,
    /// `envi`: environment.
    Envi,
    /// `wchs`: watch summary.
    Wchs,
    /// `wchc`: watches by connection.
    Wchc,
    /// `wchp`: watches by path.
    Wchp,
    /// `isro`: `rw` or `ro`.
    Isro,
    /// `dirs`: data directory sizes.
    Dirs,
    /// `gtmk`: the trace mask.
    Gtmk,
    /// `stmk`: set the trace mask (8 more bytes follow).
    Stmk,
    /// `hash`: digests by zxid.
    Hash,
    /// The telnet "interrupt process" sequence, which closes the connection.
    TelnetClose,
}

impl FourLetterWord {
    /// Every word.
    pub const ALL: &'static [FourLetterWord] = &[
        FourLetterWord::Ruok,
        FourLetterWord::Stat,
        FourLetterWord::Srvr,
        FourLetterWord::Mntr,
        FourLetterWord::Cons,
        FourLetterWord::Crst,
        FourLetterWord::Srst,
        FourLetterWord::Dump,
        FourLetterWord::Conf,
        FourLetterWord::Envi,
        FourLetterWord::Wchs,
        FourLetterWord::Wchc,
        FourLetterWord::Wchp,
        FourLetterWord::Isro,
        FourLetterWord::Dirs,
        FourLetterWord::Gtmk,
        FourLetterWord::Stmk,
        FourLetterWord::Hash,
        FourLetterWord::TelnetClose,
    ];

    /// The four bytes that spell the word.
    pub const fn bytes(self) -> [u8; 4] {
        match self {
            FourLetterWord::Ruok => *b"ruok",
            FourLetterWord::Stat => *b"stat",
            FourLetterWord::Srvr => *b"srvr",
            FourLetterWord::Mntr => *b"mntr",
            FourLetterWord::Cons => *b"cons",
            FourLetterWord::Crst => *b"crst",
            FourLetterWord::Srst => *b"srst",
            FourLetterWord::Dump => *b"dump",
            FourLetterWord::Conf => *b"conf",
            FourLetterWord::Envi => *b"envi",
            FourLetterWord::Wchs => *b"wchs",
            FourLetterWord::Wchc => *b"wchc",
            FourLetterWord::Wchp => *b"wchp",
            FourLetterWord::Isro => *b"isro",
            FourLetterWord::Dirs => *b"dirs",
            FourLetterWord::Gtmk => *b"gtmk",
            FourLetterWord::Stmk => *b"stmk",
            FourLetterWord::Hash => *b"hash",
            FourLetterWord::TelnetClose => [0xff, 0xf4, 0xff, 0xfd],
        }
    }

    /// The name used in the whitelist (`4lw.commands.whitelist`).
    pub const fn name(self) -> &'static str {
        match self {
            FourLetterWord::Ruok => "ruok",
            FourLetterWord::Stat => "stat",
            FourLetterWord::Srvr => "srvr",
            FourLetterWord::Mntr => "mntr",
            FourLetterWord::Cons => "cons",
            FourLetterWord::Crst => "crst",
            FourLetterWord::Srst => "srst",
            FourLetterWord::Dump => "dump",
            FourLetterWord::Conf => "conf",
            FourLetterWord::Envi => "envi",
            FourLetterWord::Wchs => "wchs",
            FourLetterWord::Wchc => "wchc",
            FourLetterWord::Wchp => "wchp",
            FourLetterWord::Isro => "isro",
            FourLetterWord::Dirs => "dirs",
            FourLetterWord::Gtmk => "gtmk",
            FourLetterWord::Stmk => "stmk",
            FourLetterWord::Hash => "hash",
            FourLetterWord::TelnetClose => "telnet close",
        }
    }

    /// Recognizes a word from the first four bytes of a connection. Anything else is a frame
    /// length.
    pub fn recognize(first: [u8; 4]) -> Option<FourLetterWord> {
        FourLetterWord::ALL
            .iter()
            .copied()
            .find(|w| w.bytes() == first)
    }

    /// Recognizes a word by name, for whitelists and admin tooling.
    pub fn from_name(name: &str) -> Option<FourLetterWord> {
        FourLetterWord::ALL
            .iter()
            .copied()
            .find(|w| w.name() == name)
    }
}

#[cfg(feature = "codec")]
pub use codec_impl::{Frame, FrameCodec};

#[cfg(feature = "codec")]
mod codec_impl {
    use super::{DEFAULT_MAX_BUFFER, FourLetterWord};
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

    #[test]
    fn words_are_recognized_by_bytes_and_name() {
        for &w in FourLetterWord::ALL {
            assert_eq!(FourLetterWord::recognize(w.bytes()), Some(w));
            assert_eq!(FourLetterWord::from_name(w.name()), Some(w));
        }
    }
}
