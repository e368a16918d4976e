//! The floor under Debian's `load_gen`: a server that answers it and does nothing else.
//!
//! `bench/scripts/perf.sh` runs `load_gen` against this as well as against both servers, and
//! reports its CPU time per request next to theirs (docs/bench/load.md, "The floor under
//! `load_gen`"). It reads frames and writes canned replies, one tokio task per connection with
//! nodelay, as `shepherd serve` does, and keeps no tree, no log, no session: what it spends per
//! request is the cost of taking a request off a socket and putting a reply back, on this
//! machine, under this client. A server built the same way (readiness from epoll, one task per
//! connection) cannot go below it by anything it does with the request.
//!
//! It runs on tokio's current-thread runtime, the cheapest per wake-up (one thread, no work
//! stealing), unless given a number of workers: `2` is `shepherd serve`'s shape.
//!
//! It answers what `load_gen` sends: the handshake; create (with the path asked for), delete,
//! setData (with an empty Stat) and getData (with `second`, the value `load_gen` checks); the
//! getChildren of its `clean` mode (no children); ping; and closeSession, after which it closes.
//! It also answers create2 (the path and an empty Stat), Shepherd's own client's create, so that
//! `shepherd-bench latencies --persistent-only` can time the four persistent phases against it
//! (`bench/scripts/latencies.sh`).
//! Frames are checked and replies encoded with `shepherd-protocol`, as the server's are.
//! Each request counts in `srvr`'s `Received` line, the counter `perf.sh` reads. Any other
//! request, and any malformed frame, closes the connection without a reply.
//!
//! ```text
//! cargo run --release -p shepherd-bench --example loadgen_floor [WORKERS]   # prints: listening on 127.0.0.1:PORT
//! ```

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use shepherd_cli::runtime::{self, Threads};
use shepherd_protocol::{
    Codec, ConnectResponse, Create2Response, CreateResponse, DEFAULT_MAX_BUFFER,
    GetChildrenResponse, GetDataResponse, OpCode, ReplyHeader, RequestHeader, Stat, StatResponse,
    frame_len,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Requests answered, for `srvr`.
static RECEIVED: AtomicU64 = AtomicU64::new(0);

fn main() -> std::io::Result<()> {
    let workers = match std::env::args().nth(1).map(|a| a.parse::<usize>()) {
        None => None,
        Some(Ok(n)) if n > 0 => Some(n),
        Some(_) => {
            eprintln!("usage: loadgen_floor [WORKERS (at least 1)]");
            std::process::exit(2);
        }
    };
    let threads = match workers {
        None => Threads::Current,
        Some(n) => Threads::Workers(Some(n)),
    };
    runtime::start(threads)?.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        println!("listening on {}", listener.local_addr()?);
        loop {
            // A failed accept (out of descriptors, a peer gone first) costs that peer only.
            if let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream));
            }
        }
    })
}

/// What to do after a frame.
enum Next {
    /// Its reply is queued; read on.
    Read,
    /// Its reply is queued; write what is queued and close.
    Close,
    /// Nothing to answer: close now.
    Drop,
}

/// Answers one connection until it closes or sends something this does not answer.
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
        // Every reply to what this read completed goes out in one write, as a server does
        // that answers a pipelined batch.
        let mut at = 0;
        let mut next = Next::Read;
        while let Some(prefix) = pending.get(at..at + 4) {
            let Ok(len) = frame_len(
                [prefix[0], prefix[1], prefix[2], prefix[3]],
                DEFAULT_MAX_BUFFER,
            ) else {
                return;
            };
            let Some(frame) = pending.get(at + 4..at + 4 + len) else {
                break; // the rest of it has not arrived
            };
            at += 4 + len;
            next = if greeted {
                reply(frame, &mut out)
            } else {
                greeted = true;
                greet(&mut out);
                Next::Read
            };
            if !matches!(next, Next::Read) {
                break;
            }
        }
        pending.drain(..at);
        if matches!(next, Next::Drop) {
            return;
        }
        if !out.is_empty() && stream.write_all(&out).await.is_err() {
            return;
        }
        out.clear();
        if matches!(next, Next::Close) {
            return;
        }
    }
}

/// Appends a frame: its length, then what `body` writes.
fn frame(out: &mut Vec<u8>, body: impl FnOnce(&mut Vec<u8>)) {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    body(out);
    let len = (out.len() - start - 4) as u32;
    out[start..start + 4].copy_from_slice(&len.to_be_bytes());
}

/// A `ConnectResponse`: a 10 s timeout, a fixed session and password.
fn greet(out: &mut Vec<u8>) {
    let response = ConnectResponse {
        protocol_version: 0,
        timeout: 10_000,
        session_id: 0x5eed,
        passwd: Some(vec![0; 16]),
        read_only: Some(false),
    };
    frame(out, |out| response.encode(out));
}

/// Queues the reply to one request (its header, then the body its type takes).
fn reply(request: &[u8], out: &mut Vec<u8>) -> Next {
    let mut rest = request;
    let Ok(header) = RequestHeader::decode(&mut rest) else {
        return Next::Drop;
    };
    let op = match OpCode::try_from(header.op_type) {
        Ok(
            op @ (OpCode::Create
            | OpCode::Create2
            | OpCode::Delete
            | OpCode::GetData
            | OpCode::SetData
            | OpCode::GetChildren
            | OpCode::Ping
            | OpCode::CloseSession),
        ) => op,
        _ => return Next::Drop,
    };
    // create's reply is the path asked for, the first field of its request.
    let path = if matches!(op, OpCode::Create | OpCode::Create2) {
        match String::decode(&mut rest) {
            Ok(path) => path,
            Err(_) => return Next::Drop,
        }
    } else {
        String::new()
    };
    let zxid = RECEIVED.fetch_add(1, Relaxed) as i64 + 1;
    frame(out, |out| {
        ReplyHeader {
            xid: header.xid,
            zxid,
            err: 0,
        }
        .encode(out);
        match op {
            OpCode::Create => CreateResponse { path }.encode(out),
            OpCode::Create2 => Create2Response {
                path,
                stat: Stat::default(),
            }
            .encode(out),
            OpCode::GetData => GetDataResponse {
                data: Some(b"second".to_vec()),
                stat: Stat::default(),
            }
            .encode(out),
            OpCode::SetData => StatResponse::default().encode(out),
            OpCode::GetChildren => GetChildrenResponse::default().encode(out),
            _ => {}
        }
    });
    if op == OpCode::CloseSession {
        Next::Close
    } else {
        Next::Read
    }
}
