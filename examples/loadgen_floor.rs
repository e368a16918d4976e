//! The floor under Debian's `load_gen`: a server that answers it and does nothing else.
//!
//! `docs/bench/perf.sh` runs `load_gen` against this as well as against both servers, and
//! reports its CPU time per request next to theirs (docs/bench/load.md, "The floor"). It reads
//! frames and writes canned replies, one tokio task per connection with nodelay, as `shepherd
//! serve` does, and keeps no tree, no log, no session: whatever it costs per request is the
//! cost of taking a request off a socket and putting a reply back, on this machine, under this
//! client. A real server cannot go below it by anything it does with the request.
//!
//! It runs on tokio's current-thread runtime, the cheapest per wake-up (one thread, no work
//! stealing), unless given a number of workers: `2` is `shepherd serve`'s shape, which costs
//! more per request here.
//!
//! It answers the handshake, create (with the path asked for), delete, exists and setData
//! (with an empty stat), getData (with `second`, the value `load_gen` checks), getChildren
//! (with no children), ping and close; every request counts in `srvr`'s `Received` line, the
//! counter `perf.sh` reads. A malformed frame closes its connection.
//!
//! ```text
//! cargo run --release --example loadgen_floor [WORKERS]   # prints: listening on 127.0.0.1:PORT
//! ```

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Requests answered, for `srvr`.
static RECEIVED: AtomicU64 = AtomicU64::new(0);

/// A zeroed `Stat`: 8 longs and ints, 68 bytes on the wire.
const STAT: [u8; 68] = [0; 68];

/// The largest frame taken (ZooKeeper's default `jute.maxbuffer`).
const MAX_FRAME: usize = 0xfffff;

fn main() -> std::io::Result<()> {
    let workers = match std::env::args().nth(1).map(|a| a.parse::<usize>()) {
        None => None,
        Some(Ok(n)) if n > 0 => Some(n),
        Some(_) => {
            eprintln!("usage: loadgen_floor [WORKERS (at least 1)]");
            std::process::exit(2);
        }
    };
    let mut runtime = match workers {
        None => tokio::runtime::Builder::new_current_thread(),
        Some(n) => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(n);
            builder
        }
    };
    runtime.enable_all().build()?.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        println!("listening on {}", listener.local_addr()?);
        loop {
            let (stream, _) = listener.accept().await?;
            tokio::spawn(serve(stream));
        }
    })
}

/// Answers one connection until it closes or sends something malformed.
async fn serve(mut stream: TcpStream) {
    if stream.set_nodelay(true).is_err() {
        return;
    }
    let mut read = vec![0; 64 * 1024];
    let mut pending = Vec::new();
    let mut out = Vec::new();
    let mut greeted = false;
    loop {
        let n = match stream.read(&mut read).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        pending.extend_from_slice(&read[..n]);
        if !greeted && pending.starts_with(b"srvr") {
            let text = format!("Received: {}\n", RECEIVED.load(Relaxed));
            let _ = stream.write_all(text.as_bytes()).await;
            return;
        }
        let mut at = 0;
        while let Some(len) = pending.get(at..at + 4).map(be_u32) {
            let len = len as usize;
            if len > MAX_FRAME {
                return;
            }
            let Some(frame) = pending.get(at + 4..at + 4 + len) else {
                break;
            };
            let start = out.len();
            out.extend_from_slice(&[0; 4]);
            let answered = if greeted {
                reply(frame, &mut out)
            } else {
                greeted = true;
                greet(&mut out);
                Some(())
            };
            if answered.is_none() {
                return;
            }
            let body = (out.len() - start - 4) as u32;
            out[start..start + 4].copy_from_slice(&body.to_be_bytes());
            at += 4 + len;
        }
        pending.drain(..at);
        if !out.is_empty() {
            if stream.write_all(&out).await.is_err() {
                return;
            }
            out.clear();
        }
    }
}

fn be_u32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// A `ConnectResponse`: protocol 0, a 10 s timeout, a fixed session and password.
fn greet(out: &mut Vec<u8>) {
    out.extend_from_slice(&0i32.to_be_bytes());
    out.extend_from_slice(&10_000i32.to_be_bytes());
    out.extend_from_slice(&0x5eed_i64.to_be_bytes());
    out.extend_from_slice(&16i32.to_be_bytes());
    out.extend_from_slice(&[0; 16]);
    out.push(0);
}

/// The reply to one request; `None` for a close or a frame too short to be a request.
fn reply(frame: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let xid = frame.get(0..4)?;
    let kind = be_u32(frame.get(4..8)?) as i32;
    if kind == -11 {
        return None;
    }
    let count = RECEIVED.fetch_add(1, Relaxed);
    out.extend_from_slice(xid);
    out.extend_from_slice(&(count as i64 + 1).to_be_bytes());
    out.extend_from_slice(&0i32.to_be_bytes());
    match kind {
        // create: the path asked for (a string: length, then bytes).
        1 => {
            let len = be_u32(frame.get(8..12)?) as usize;
            out.extend_from_slice(frame.get(8..12 + len)?);
        }
        // getData
        4 => {
            out.extend_from_slice(&6i32.to_be_bytes());
            out.extend_from_slice(b"second");
            out.extend_from_slice(&STAT);
        }
        // exists, setData
        3 | 5 => out.extend_from_slice(&STAT),
        // getChildren: an empty list
        8 => out.extend_from_slice(&0i32.to_be_bytes()),
        // delete, ping: the header alone
        _ => {}
    }
    Some(())
}
