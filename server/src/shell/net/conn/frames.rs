//! A connection's inbound frames, read so that an idle connection holds no read buffer.
//!
//! A codec's usual reader keeps a buffer of several kilobytes per connection for as long as the
//! connection lives, though an idle session sends a 12-byte ping every few seconds. Here a
//! connection owns only the bytes it has read and not yet handed on: a read that finds no frame
//! in progress goes into a scratch buffer of the worker thread (one per thread, not per
//! connection), and only what arrived is copied into the connection's own buffer, sized to it.
//! Frames are cut from that buffer without copying, and once it is empty its allocation is
//! released (it lives on only as long as the last frame cut from it). A frame larger than what
//! has arrived has its whole length reserved by the decoder (bounded by `jute.maxbuffer`, which
//! the decoder checks first), and the rest of it is read straight into that space.
//!
//! Invariants: the bytes held never exceed one frame under the limit plus one read
//! ([`SCRATCH`] bytes); a length outside `0..=jute.maxbuffer` fails the stream before anything
//! is reserved for it. Cancellation: [`Frames::next`] is cancellation safe: bytes read are in the
//! connection's buffer before the call returns or yields, so dropping the call loses nothing.

use std::cell::RefCell;
use std::future::poll_fn;
use std::io;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, ready};

use bytes::BytesMut;
use shepherd_protocol::{Frame, FrameCodec};
use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};
use tokio::time::Instant;
use tokio_util::codec::Decoder;

use crate::shell::net::limits::{BAD_INPUT_LINGER, BAD_INPUT_LINGER_BYTES};

/// The most one read takes from the stream (and the size of each worker thread's scratch
/// buffer): enough for hundreds of pipelined small requests per system call.
pub(crate) const SCRATCH: usize = 64 * 1024;

/// Free space in the connection's buffer at or above which a read goes straight into it (the
/// rest of a large frame, reserved by the decoder) rather than through the scratch buffer.
const DIRECT: usize = 4096;

thread_local! {
    /// The worker thread's read buffer, allocated on its first read.
    static SCRATCH_BUF: RefCell<Box<[u8]>> = RefCell::new(Box::default());
}

/// Frames read from `R`.
pub(crate) struct Frames<R> {
    io: R,
    codec: FrameCodec,
    /// Bytes read and not yet cut into a frame; no allocation when empty.
    buf: BytesMut,
    /// The stream has ended.
    eof: bool,
    /// After bad input: what is left of the time and bytes [`Frames::drain`] may spend; boxed,
    /// as it is rare and every connection holds this struct.
    draining: Option<Box<Draining>>,
}

/// The budget of a stream being drained after bad input.
struct Draining {
    until: Instant,
    left: usize,
}

impl<R: AsyncRead + Unpin> Frames<R> {
    pub(crate) fn new(io: R, codec: FrameCodec) -> Frames<R> {
        Frames {
            io,
            codec,
            buf: BytesMut::new(),
            eof: false,
            draining: None,
        }
    }

    /// Reads and drops what the peer sends after bad input, until the end of its stream or
    /// until [`BAD_INPUT_LINGER`] after the first call, or [`BAD_INPUT_LINGER_BYTES`] in all,
    /// across calls. The connection then closes with nothing unread (a FIN, not a reset)
    /// unless the peer sent more than that. No frame is read after it.
    pub(crate) async fn drain(&mut self) {
        let draining = self.draining.get_or_insert_with(|| {
            Box::new(Draining {
                until: Instant::now() + BAD_INPUT_LINGER,
                left: BAD_INPUT_LINGER_BYTES,
            })
        });
        self.buf = BytesMut::new();
        let mut sink = vec![0; SCRATCH.min(draining.left)];
        while draining.left > 0 && !self.eof {
            let room = sink.len().min(draining.left);
            match tokio::time::timeout_at(draining.until, self.io.read(&mut sink[..room])).await {
                Ok(Ok(0)) | Ok(Err(_)) => self.eof = true,
                Ok(Ok(n)) => draining.left -= n,
                Err(_) => draining.left = 0,
            }
        }
    }

    /// The next frame; `None` at the end of the stream.
    ///
    /// # Errors
    /// A length outside the limit (`InvalidData`), the stream ending inside a frame
    /// (`UnexpectedEof`), or the stream's own error. The stream is not to be read after one.
    ///
    /// Cancellation safe (see the module's documentation).
    pub(crate) async fn next(&mut self) -> Option<io::Result<Frame>> {
        poll_fn(|cx| self.poll_next(cx)).await
    }

    /// The next frame if it has already arrived whole, without reading: what the last read
    /// brought beyond the frame [`Frames::next`] returned. `None` when no whole frame is
    /// buffered (the end of the stream included: [`Frames::next`] reports that).
    ///
    /// # Errors
    /// As [`Frames::next`], for the buffered bytes.
    pub(crate) fn buffered(&mut self) -> Option<io::Result<Frame>> {
        match self.codec.decode(&mut self.buf) {
            Ok(Some(frame)) => {
                self.release_if_empty();
                Some(Ok(frame))
            }
            Ok(None) => None,
            Err(error) => Some(Err(error)),
        }
    }

    /// Once every byte is cut into frames, the frames keep what they need of the allocation;
    /// drop our share.
    fn release_if_empty(&mut self) {
        if self.buf.is_empty() {
            self.buf = BytesMut::new();
        }
    }

    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<Frame>>> {
        loop {
            match self.codec.decode(&mut self.buf) {
                Ok(Some(frame)) => {
                    self.release_if_empty();
                    return Poll::Ready(Some(Ok(frame)));
                }
                Ok(None) => {}
                Err(error) => return Poll::Ready(Some(Err(error))),
            }
            if self.eof {
                return Poll::Ready(if self.buf.is_empty() {
                    None
                } else {
                    Some(Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the stream ended inside a frame",
                    )))
                });
            }
            let read = if self.buf.capacity() - self.buf.len() >= DIRECT {
                let direct = pin!(self.io.read_buf(&mut self.buf));
                ready!(direct.poll(cx))
            } else {
                ready!(self.poll_read_scratch(cx))
            };
            match read {
                Ok(0) => self.eof = true,
                Ok(_) => {}
                Err(error) => return Poll::Ready(Some(Err(error))),
            }
        }
    }

    /// Reads once through the thread's scratch buffer, appending what came to `buf`.
    fn poll_read_scratch(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        SCRATCH_BUF.with(|scratch| {
            let Ok(mut scratch) = scratch.try_borrow_mut() else {
                // Only a stream that reads another connection from inside its own read could
                // get here; read into a buffer of the connection's own instead.
                self.buf.reserve(DIRECT);
                let direct = pin!(self.io.read_buf(&mut self.buf));
                return direct.poll(cx);
            };
            if scratch.is_empty() {
                *scratch = vec![0; SCRATCH].into_boxed_slice();
            }
            let mut read = ReadBuf::new(&mut scratch[..]);
            ready!(Pin::new(&mut self.io).poll_read(cx, &mut read))?;
            let filled = read.filled();
            self.buf.extend_from_slice(filled);
            Poll::Ready(Ok(filled.len()))
        })
    }

    /// Whether [`Frames::drain`] has been called: the peer's input was refused.
    pub(crate) fn draining(&self) -> bool {
        self.draining.is_some()
    }

    /// The bytes of buffer the connection holds.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.buf.capacity()
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use shepherd_protocol::DEFAULT_MAX_BUFFER;
    use tokio::io::AsyncWriteExt;

    use super::*;

    fn frame(len: usize) -> Vec<u8> {
        let mut bytes = (len as u32).to_be_bytes().to_vec();
        bytes.extend((0..len).map(|i| i as u8));
        bytes
    }

    #[tokio::test]
    async fn frames_arrive_whole_in_order_and_nothing_is_held_between_them() {
        let (mut peer, server) = tokio::io::duplex(1 << 20);
        let mut frames = Frames::new(server, FrameCodec::server(DEFAULT_MAX_BUFFER));
        let sizes = [0, 12, 4095, 4096, 70_000, DEFAULT_MAX_BUFFER, 7];
        let mut wire = Vec::new();
        for size in sizes {
            wire.extend(frame(size));
        }
        let writer = tokio::spawn(async move {
            // In pieces that cut prefixes and payloads anywhere.
            for piece in wire.chunks(1000 + 3) {
                peer.write_all(piece).await.expect("write");
            }
            peer
        });
        for size in sizes {
            let Some(Ok(Frame::Payload(payload))) = frames.next().await else {
                panic!("no frame of {size} bytes");
            };
            assert_eq!(Bytes::from(payload), Bytes::from(frame(size).split_off(4)));
        }
        assert_eq!(frames.held(), 0, "an idle connection holds no buffer");
        drop(writer.await.expect("writer"));
        assert!(frames.next().await.is_none());
    }

    #[tokio::test]
    async fn a_length_over_the_limit_fails_before_anything_is_reserved() {
        let (mut peer, server) = tokio::io::duplex(1024);
        let mut frames = Frames::new(server, FrameCodec::server(DEFAULT_MAX_BUFFER));
        peer.write_all(&(DEFAULT_MAX_BUFFER as u32 + 1).to_be_bytes())
            .await
            .expect("write");
        let error = frames.next().await.expect("an item").expect_err("too long");
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert!(frames.held() < DIRECT);
    }

    #[tokio::test]
    async fn the_stream_ending_inside_a_frame_is_an_error() {
        let (mut peer, server) = tokio::io::duplex(1024);
        let mut frames = Frames::new(server, FrameCodec::server(DEFAULT_MAX_BUFFER));
        peer.write_all(&frame(100)[..50]).await.expect("write");
        drop(peer);
        let error = frames
            .next()
            .await
            .expect("an item")
            .expect_err("cut short");
        assert_eq!(error.kind(), io::ErrorKind::UnexpectedEof);
    }

    #[tokio::test]
    async fn a_four_letter_word_is_recognized_first() {
        let (mut peer, server) = tokio::io::duplex(1024);
        let mut frames = Frames::new(server, FrameCodec::server(DEFAULT_MAX_BUFFER));
        peer.write_all(b"ruok").await.expect("write");
        assert!(matches!(
            frames.next().await,
            Some(Ok(Frame::FourLetterWord(_)))
        ));
    }
}
