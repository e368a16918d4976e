//! A TCP proxy in front of one server, for faults between a client and the server that the
//! client cannot tell from a real network's: a cut connection, a connection accepted but never
//! forwarded, one that stays open but carries nothing, forwarding paused, and a connection cut
//! right after a chosen request reached the server (applied, but its reply never delivered).
//!
//! Invariants: it listens on a fresh loopback port (port 0); every control acts through events
//! (a watch channel, an abort), never by sleeping; buffers are bounded (one frame, see
//! [`FrameReader`](crate::frame)), so a paused or slow side pushes back through TCP instead of
//! piling up memory; bytes are forwarded unchanged, one write per frame. Dropping the proxy cuts
//! everything.

mod cut;
mod pipe;
mod shared;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use cut::CutAfter;
use shared::{Conn, Shared};

/// A loopback TCP proxy in front of one server: it can cut every connection, hold new ones
/// (accepted, not forwarded), blackhole open ones (kept open, bytes dropped), pause forwarding,
/// and cut a connection right after a chosen request ([`CutAfter`]). Dropping it cuts
/// everything.
pub struct Proxy {
    addr: String,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards every connection to `upstream`.
    pub async fn start(upstream: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the proxy");
        let addr = listener.local_addr().expect("proxy address").to_string();
        let shared = Arc::new(Shared {
            upstream: upstream.to_owned(),
            conns: Mutex::new(Vec::new()),
            held: watch::channel(false).0,
            paused: watch::channel(false).0,
            armed: Mutex::new(None),
            cuts: watch::channel(0).0,
            swallowed: watch::channel(0).0,
            accepted: AtomicUsize::new(0),
        });
        let accept = tokio::spawn({
            let shared = shared.clone();
            async move {
                while let Ok((client, _)) = listener.accept().await {
                    shared.accepted.fetch_add(1, Ordering::SeqCst);
                    let blackhole = Arc::new(AtomicBool::new(false));
                    // Registered under the lock it is spawned under: a concurrent cut_all
                    // either sees it or comes after it.
                    let mut conns = shared.conns.lock().unwrap();
                    conns.retain(|c| !c.task.is_finished());
                    let task = tokio::spawn(pipe::serve(client, shared.clone(), blackhole.clone()));
                    conns.push(Conn {
                        task: task.abort_handle(),
                        blackhole,
                    });
                }
            }
        });
        Proxy {
            addr,
            shared,
            accept,
        }
    }

    /// The proxy's `host:port`, to connect to instead of the server.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// How many connections the proxy has accepted so far.
    pub fn accepted(&self) -> usize {
        self.shared.accepted.load(Ordering::SeqCst)
    }

    /// Closes every connection accepted so far (held ones too), both sides at once.
    pub fn cut_all(&self) {
        for conn in self.shared.conns.lock().unwrap().drain(..) {
            conn.task.abort();
        }
    }

    /// Holds connections accepted from now on: accepted, but not connected upstream, until
    /// [`Proxy::admit`]. What a client sees when the server is unreachable but the network is
    /// not down.
    pub fn hold(&self) {
        self.shared.held.send_replace(true);
    }

    /// Lets held connections (and new ones) through to the server.
    pub fn admit(&self) {
        self.shared.held.send_replace(false);
    }

    /// Stops forwarding on every connection, both ways; nothing is dropped, and each side is
    /// pushed back on through TCP once the proxy's buffer is full.
    pub fn pause(&self) {
        self.shared.paused.send_replace(true);
    }

    /// Forwards again what [`Proxy::pause`] held back, and everything after it.
    pub fn resume(&self) {
        self.shared.paused.send_replace(false);
    }

    /// Makes every open connection silently drop what it carries, both ways, while staying
    /// open (connections accepted later are not affected).
    pub fn blackhole_all(&self) {
        for conn in self.shared.conns.lock().unwrap().iter() {
            conn.blackhole.store(true, Ordering::SeqCst);
        }
    }

    /// The bytes blackholed so far, both ways.
    pub fn swallowed(&self) -> watch::Receiver<usize> {
        self.shared.swallowed.subscribe()
    }

    /// Arms the proxy (replacing any armed cut): the request `cut` describes is forwarded, its
    /// reply withheld, and its connection closed.
    pub fn cut_after(&self, cut: CutAfter) {
        *self.shared.armed.lock().unwrap() = Some(cut);
    }

    /// How many connections were cut after an armed request.
    pub fn cuts(&self) -> usize {
        *self.shared.cuts.borrow()
    }

    /// [`Proxy::cuts`] as a channel, to wait for the next cut.
    pub fn cuts_watch(&self) -> watch::Receiver<usize> {
        self.shared.cuts.subscribe()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut_all();
    }
}
