//! Slow readers: one that takes a large reply slowly keeps its session, because its pings are
//! read while the reply is written; one that stops reading is closed once a write has made no
//! progress for its session timeout; one that floods requests without reading stops being read.

use std::time::Duration;

use shepherd_protocol::{FourLetterWord, Reply, Request, xid};
use shepherd_server::Server;
use shepherd_testkit::{Peer, exists, get_data, within};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

use crate::pipe::{BIG, bystander_is_served, create_big, frame, server, session};

/// The session timeout of the slow peers: the least the default tickTime allows.
const TIMEOUT: Duration = Duration::from_secs(4);

/// The xids of the whole frames at the front of `bytes`, which are consumed; a frame's payload
/// length goes with its xid.
fn whole_frames(bytes: &mut Vec<u8>) -> Vec<(i32, usize)> {
    let mut frames = Vec::new();
    while let Some(len) = bytes.get(..4) {
        let len = i32::from_be_bytes(len.try_into().unwrap()) as usize;
        if bytes.len() < 4 + len {
            break;
        }
        let xid = i32::from_be_bytes(bytes[4..8].try_into().unwrap());
        frames.push((xid, len));
        bytes.drain(..4 + len);
    }
    frames
}

/// A peer with a 4 s session reads a 1 MB reply 4 KiB every 100 ms (25 s of virtual time, six
/// session timeouts), pinging every second as clients do. Its pings are read meanwhile, so its
/// session lives; their replies come after the large one, in order.
#[tokio::test(start_paused = true)]
async fn a_client_taking_a_large_reply_slowly_keeps_its_session() {
    let server = server().await;
    create_big(&server).await;
    let mut slow = session(&server, 4096, TIMEOUT.as_millis() as i32).await;
    let id = slow.session_id();
    let asked = slow.send(&get_data("/big")).await;
    let mut stream = slow.into_inner();

    let started = Instant::now();
    let mut next_ping = started + Duration::from_secs(1);
    let (mut bytes, mut seen) = (Vec::new(), Vec::new());
    let mut chunk = [0; 4096];
    while !seen.iter().any(|(x, _)| *x == xid::PING) {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if Instant::now() >= next_ping {
            stream
                .write_all(&frame(xid::PING, &Request::Ping))
                .await
                .expect("a ping");
            next_ping += Duration::from_secs(1);
        }
        let n = within("more of the reply", stream.read(&mut chunk))
            .await
            .expect("readable");
        assert!(n > 0, "closed after {:?}", started.elapsed());
        bytes.extend_from_slice(&chunk[..n]);
        seen.extend(whole_frames(&mut bytes));
    }
    let took = started.elapsed();
    assert!(took > TIMEOUT * 5, "the reply took only {took:?}");
    assert_eq!(seen[0].0, asked, "the large reply first: {seen:?}");
    assert!(seen[0].1 > BIG);
    assert!(server.controls().session(id).is_some(), "the session lived");
    bystander_is_served(&server, "beside-a-slow-reader").await;
}

/// A peer with a 4 s session asks for a 1 MB reply through a 4 KiB pipe and never reads it,
/// though it pings every second. Once the write has made no progress for 4 s the connection
/// is closed (its next ping finds the pipe broken) and counted; the session itself lives on
/// until its own expiry.
#[tokio::test(start_paused = true)]
async fn a_client_that_stops_reading_is_closed_after_its_session_timeout() {
    let server = server().await;
    create_big(&server).await;
    let mut stuck = session(&server, 4096, TIMEOUT.as_millis() as i32).await;
    let id = stuck.session_id();
    stuck.send(&get_data("/big")).await;
    let mut stream = stuck.into_inner();

    let started = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        if stream
            .write_all(&frame(xid::PING, &Request::Ping))
            .await
            .is_err()
        {
            break;
        }
        assert!(started.elapsed() < TIMEOUT * 3, "still open");
    }
    let took = started.elapsed();
    assert!(took >= TIMEOUT, "closed after only {took:?}");
    assert_eq!(
        server
            .stats()
            .closed_write_stalled
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    assert!(
        server.controls().session(id).is_some(),
        "the session outlives its connection"
    );
    bystander_is_served(&server, "beside-a-stuck-reader").await;
}

/// How many requests the server has read from its in-memory connection (the only one whose
/// peer is `127.0.0.1:0`), from `cons`.
fn received_in_memory(server: &Server) -> u64 {
    server
        .controls()
        .four_letter_word(FourLetterWord::Cons)
        .lines()
        .filter(|l| l.contains("/127.0.0.1:0["))
        .filter_map(|l| {
            l.split("recved=")
                .nth(1)?
                .split([',', ')'])
                .next()?
                .parse()
                .ok()
        })
        .next()
        .unwrap_or(0)
}

/// A peer sends 5 000 requests through a 4 KiB pipe without reading a reply. The server reads
/// about a thousand (plus what the pipe holds of their replies) and then stops reading it, while
/// a bystander is served; once the peer reads, every reply comes, in order.
#[tokio::test]
async fn a_client_flooding_requests_without_reading_stops_being_read() {
    const SENT: i32 = 5_000;
    let server = server().await;
    // Over TCP, so that its line in `cons` is told from the flooder's.
    let mut bystander = Peer::session(server.local_addr(), 30_000, 0)
        .await
        .expect("a session");
    let flooder = session(&server, 4096, 30_000).await;
    let (mut stream, mut write) = tokio::io::split(flooder.into_inner());
    let sending = tokio::spawn(async move {
        for xid in 1..=SENT {
            write.write_all(&frame(xid, &exists("/", false))).await?;
        }
        std::io::Result::Ok(write)
    });
    // Each of the bystander's round trips lets every task of the server run.
    within("the server to read a thousand requests", async {
        while received_in_memory(&server) < 1_000 {
            assert!(matches!(
                bystander.call(&exists("/", false)).await,
                Reply::Ok(..)
            ));
        }
    })
    .await;
    for _ in 0..10 {
        assert!(matches!(
            bystander.call(&exists("/", false)).await,
            Reply::Ok(..)
        ));
    }
    let received = received_in_memory(&server);
    assert!(
        received < 1_500,
        "read {received} requests with nothing taken"
    );
    assert!(!sending.is_finished());

    let (mut bytes, mut chunk, mut next) = (Vec::new(), [0; 4096], 1);
    while next <= SENT {
        let n = within("replies", stream.read(&mut chunk))
            .await
            .expect("readable");
        assert!(n > 0, "closed at reply {next}");
        bytes.extend_from_slice(&chunk[..n]);
        for (xid, _) in whole_frames(&mut bytes) {
            assert_eq!(xid, next, "replies in request order");
            next += 1;
        }
    }
    within("the flood to be sent", sending)
        .await
        .expect("the sender")
        .expect("every request written");
}
