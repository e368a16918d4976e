//! Reading a ZooKeeper byte stream as frames (a 4-byte big-endian length, then that many bytes)
//! without trusting it to be one: the proxy forwards whatever a test sends (four-letter words,
//! garbage, half frames), and the raw peer must see exactly what the server wrote.
//!
//! Invariants: the buffer never holds more than one frame of at most [`MAX_FRAME`] bytes plus
//! one read's worth; a length prefix outside `0..=MAX_FRAME` is never waited on, its bytes come
//! out as [`Chunk::Raw`] instead; nothing read is ever dropped here.

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt};

/// The largest frame read as one: ZooKeeper's requests are bounded by `jute.maxbuffer` (1 MiB),
/// but its replies are not (a getData of a near-maximal node, a long getChildren), hence the
/// margin.
pub const MAX_FRAME: usize = 16 << 20;

/// How much one read asks for.
const READ_SIZE: usize = 16 * 1024;

/// What came next on the stream.
#[derive(Debug)]
pub(crate) enum Chunk {
    /// A whole frame, prefix included.
    Frame(Bytes),
    /// Bytes that do not start a frame (an impossible length), or the tail of a stream that ended
    /// mid-frame.
    Raw(Bytes),
    /// The stream ended (or failed) with nothing left over.
    End,
}

/// A buffered reader that cuts a stream into [`Chunk`]s.
#[derive(Debug)]
pub(crate) struct FrameReader<R> {
    inner: R,
    buf: BytesMut,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        FrameReader {
            inner,
            buf: BytesMut::with_capacity(READ_SIZE),
        }
    }

    pub(crate) fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    pub(crate) fn into_inner(self) -> R {
        self.inner
    }

    /// Whether bytes are buffered that no chunk has returned yet.
    pub(crate) fn has_buffered(&self) -> bool {
        !self.buf.is_empty()
    }

    /// Reads once into the buffer: the bytes read, 0 at the end of the stream (a read error
    /// counts as the end: a reset is how servers often close). Cancel-safe.
    pub(crate) async fn fill(&mut self) -> usize {
        self.buf.reserve(READ_SIZE);
        self.inner.read_buf(&mut self.buf).await.unwrap_or(0)
    }

    /// The next frame, or raw bytes where the stream does not look like frames.
    pub(crate) async fn next_chunk(&mut self) -> Chunk {
        loop {
            if self.buf.len() >= 4 {
                let len = i32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]);
                match usize::try_from(len) {
                    Ok(n) if n <= MAX_FRAME => {
                        if self.buf.len() >= 4 + n {
                            return Chunk::Frame(self.buf.split_to(4 + n).freeze());
                        }
                    }
                    _ => return Chunk::Raw(self.buf.split().freeze()),
                }
            }
            if self.fill().await == 0 {
                return if self.buf.is_empty() {
                    Chunk::End
                } else {
                    Chunk::Raw(self.buf.split().freeze())
                };
            }
        }
    }

    /// Whatever bytes come next, frame boundaries or not; `None` at the end of the stream.
    pub(crate) async fn next_raw(&mut self) -> Option<Bytes> {
        if self.buf.is_empty() && self.fill().await == 0 {
            return None;
        }
        Some(self.buf.split().freeze())
    }
}
