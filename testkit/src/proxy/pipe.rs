//! One proxied connection: held until admitted, then forwarded both ways, frame by frame where
//! the bytes are ZooKeeper frames and as they come where they are not.
//!
//! Invariants: the client's first bytes decide, before anything is forwarded, whether the
//! connection is framed (a handshake) or raw (a four-letter word, garbage), and both directions
//! follow that; a direction that stops looking like frames is forwarded raw from then on; the
//! armed request's xid is noted before the request is forwarded, so its reply cannot overtake
//! the note; a client's half-close is passed on and the answer still delivered.

use std::future::pending;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::shared::Shared;
use crate::frame::{Chunk, FrameReader};

/// How a direction ends: `Ok` when its source ended (the end is passed on), `Err` when both
/// sides must be dropped at once (a write failed, or the connection is cut after an armed
/// request).
type Flow = Result<(), Abort>;

/// See [`Flow`].
struct Abort;

/// Serves one accepted connection to its end.
pub(super) async fn serve(client: TcpStream, shared: Arc<Shared>, blackhole: Arc<AtomicBool>) {
    let mut held = shared.held.subscribe();
    if held.wait_for(|held| !*held).await.is_err() {
        return;
    }
    let Ok(server) = TcpStream::connect(&shared.upstream).await else {
        return;
    };
    // One frame per write, and no write waiting on the previous one's acknowledgement.
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (client_read, mut client_write) = client.into_split();
    let (server_read, mut server_write) = server.into_split();
    let (framed_tx, framed_rx) = watch::channel(None::<bool>);
    let (cut_tx, cut_rx) = watch::channel(None::<i32>);
    let up = Direction {
        shared: &shared,
        blackhole: &blackhole,
        paused: shared.paused.subscribe(),
    };
    let down = Direction {
        shared: &shared,
        blackhole: &blackhole,
        paused: shared.paused.subscribe(),
    };
    tokio::select! {
        // The client's end is passed on; the server's answer still comes back.
        stop = up.upstream(FrameReader::new(client_read), &mut server_write, framed_tx, cut_tx) => {
            if stop.is_ok() {
                let _ = server_write.shutdown().await;
                pending::<()>().await;
            }
        }
        _ = down.downstream(FrameReader::new(server_read), &mut client_write, framed_rx, cut_rx) => {}
    }
}

/// What both directions of a connection consult.
struct Direction<'a> {
    shared: &'a Shared,
    blackhole: &'a AtomicBool,
    paused: watch::Receiver<bool>,
}

impl Direction<'_> {
    /// Client to server: decides the framing, notes the armed request's xid.
    async fn upstream<R, W>(
        mut self,
        mut from: FrameReader<R>,
        to: &mut W,
        framed: watch::Sender<Option<bool>>,
        cut: watch::Sender<Option<i32>>,
    ) -> Flow
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        // The handshake: the first frame, or the bytes that show this is no ZooKeeper session.
        match from.next_chunk().await {
            Chunk::Frame(frame) => {
                framed.send_replace(Some(true));
                self.forward(to, frame).await?;
            }
            Chunk::Raw(bytes) => {
                framed.send_replace(Some(false));
                self.forward(to, bytes).await?;
                return self.raw(from, to).await;
            }
            Chunk::End => return Ok(()),
        }
        loop {
            match from.next_chunk().await {
                Chunk::Frame(frame) => {
                    if let Some(xid) = self.hit(&frame[4..]) {
                        cut.send_replace(Some(xid));
                    }
                    self.forward(to, frame).await?;
                }
                Chunk::Raw(bytes) => {
                    self.forward(to, bytes).await?;
                    return self.raw(from, to).await;
                }
                Chunk::End => return Ok(()),
            }
        }
    }

    /// Server to client: withholds the armed request's reply and ends the connection there.
    async fn downstream<R, W>(
        mut self,
        mut from: FrameReader<R>,
        to: &mut W,
        mut framed: watch::Receiver<Option<bool>>,
        cut: watch::Receiver<Option<i32>>,
    ) -> Flow
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        // The server speaks only after the client's first bytes went through, and the framing
        // was decided before they did: once something arrives, it is known.
        if from.fill().await == 0 {
            return Ok(());
        }
        let framed = framed.wait_for(Option::is_some).await.map(|f| *f);
        if !matches!(framed, Ok(Some(true))) {
            return self.raw(from, to).await;
        }
        loop {
            match from.next_chunk().await {
                Chunk::Frame(frame) => {
                    let xid = frame
                        .get(4..8)
                        .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
                    if xid.is_some() && *cut.borrow() == xid {
                        self.shared.cuts.send_modify(|n| *n += 1);
                        return Err(Abort);
                    }
                    self.forward(to, frame).await?;
                }
                Chunk::Raw(bytes) => {
                    self.forward(to, bytes).await?;
                    return self.raw(from, to).await;
                }
                Chunk::End => return Ok(()),
            }
        }
    }

    /// Whether the armed cut matches this request; a match disarms it.
    fn hit(&self, request: &[u8]) -> Option<i32> {
        let mut armed = self.shared.armed.lock().unwrap();
        let xid = armed.as_mut()?.hit(request)?;
        *armed = None;
        Some(xid)
    }

    /// Forwards everything else as it comes.
    async fn raw<R, W>(mut self, mut from: FrameReader<R>, to: &mut W) -> Flow
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        while let Some(bytes) = from.next_raw().await {
            self.forward(to, bytes).await?;
        }
        Ok(())
    }

    /// Writes `bytes` on, once forwarding is not paused, unless the connection is a blackhole.
    async fn forward<W: AsyncWrite + Unpin>(&mut self, to: &mut W, bytes: Bytes) -> Flow {
        if self.blackhole.load(Ordering::SeqCst) {
            self.shared.swallowed.send_modify(|n| *n += bytes.len());
            return Ok(());
        }
        if self.paused.wait_for(|paused| !*paused).await.is_err() {
            return Err(Abort);
        }
        to.write_all(&bytes).await.map_err(|_| Abort)
    }
}
