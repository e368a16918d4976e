//! The attacks, one function each, as the hostile-client tests make them (`server/tests/hostile/`)
//! but kept up until the bystander is done, and counted. Each attack signals [`Ready`] once it
//! has made its first unit of progress, so the bystander measures only while it is in force,
//! and returns a line saying how much of it there was.
//!
//! An attack that meets something other than the answers the tests expect panics: the
//! benchmark is then wrong, or the server is.

use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use futures_util::future::join_all;
use shepherd_protocol::{
    AuthPacket, ConnectRequest, FourLetterWord, ReplyHeader, Request, SetWatches, decode_from,
    encode_frame, encode_request, xid,
};
use shepherd_server::{Server, ServerBuilder};
use shepherd_testkit::{
    Peer, create, four_letter_word, get_data, hello, huge_acl_create, reply_header, within,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// The error codes the attacks expect (ZooKeeper's `KeeperException.Code`).
const AUTH_FAILED: i32 = -115;
const INVALID_ACL: i32 = -114;

/// One node's data as large as a request may carry it (under `jute.maxbuffer`).
const BIG: usize = 1_000_000;

/// What an attack runs against.
pub struct Ctx<'a> {
    pub server: &'a Server,
    /// The server's runtime: in-memory connections are served there.
    pub server_rt: tokio::runtime::Handle,
    /// Cancelled once the bystander is done.
    pub stop: &'a CancellationToken,
}

impl Ctx<'_> {
    /// A session over an in-memory pipe with `pipe` bytes of room each way, so that "the peer
    /// stops reading" is exact rather than at the mercy of the kernel's socket buffers.
    async fn pipe_session(&self, pipe: usize) -> Peer<DuplexStream> {
        let (client, served) = tokio::io::duplex(pipe);
        {
            // `serve_io` spawns the connection's task on the current runtime: the server's.
            let _server_rt = self.server_rt.enter();
            self.server.serve_io(served);
        }
        let mut peer = Peer::new(client);
        peer.handshake(&hello()).await.expect("a piped session");
        peer
    }
}

/// Tells the bystander, once, that the attack is under way.
pub struct Ready(Option<oneshot::Sender<()>>);

impl Ready {
    pub fn new(tx: oneshot::Sender<()>) -> Ready {
        Ready(Some(tx))
    }

    fn fire(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

/// Every run of the benchmark, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attack {
    /// No attack: the bystander alone.
    Baseline,
    AuthFlood,
    HugeAcl,
    SetWatchesFlood,
    MntrPoll,
    Loris,
    LorisUnlimited,
    ForgedSession,
    SlowReader,
    /// The bystander alone again, last: how much the machine's load moved during the run.
    BaselineLast,
}

impl Attack {
    pub const ALL: [Attack; 10] = [
        Attack::Baseline,
        Attack::AuthFlood,
        Attack::HugeAcl,
        Attack::SetWatchesFlood,
        Attack::MntrPoll,
        Attack::Loris,
        Attack::LorisUnlimited,
        Attack::ForgedSession,
        Attack::SlowReader,
        Attack::BaselineLast,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Attack::Baseline => "baseline",
            Attack::AuthFlood => "auth-flood",
            Attack::HugeAcl => "acl-45000",
            Attack::SetWatchesFlood => "setwatches-flood",
            Attack::MntrPoll => "mntr-poll",
            Attack::Loris => "loris",
            Attack::LorisUnlimited => "loris-no-ip-limit",
            Attack::ForgedSession => "forged-session",
            Attack::SlowReader => "slow-reader",
            Attack::BaselineLast => "baseline-last",
        }
    }

    /// The server's configuration for this run: every four-letter word (for `mntr`), default
    /// limits otherwise, but for the loris without a per-IP limit.
    pub fn builder(self, builder: ServerBuilder) -> ServerBuilder {
        let builder = builder.all_four_letter_words();
        match self {
            Attack::LorisUnlimited => builder.max_client_connections(0),
            _ => builder,
        }
    }

    /// Runs the attack until `ctx.stop`; `victim` is the bystander's session id.
    pub async fn run(
        self,
        ctx: &Ctx<'_>,
        victim: oneshot::Receiver<i64>,
        mut ready: Ready,
    ) -> String {
        match self {
            Attack::Baseline | Attack::BaselineLast => {
                ready.fire();
                ctx.stop.cancelled().await;
                "—".to_owned()
            }
            Attack::AuthFlood => auth_flood(ctx, &mut ready).await,
            Attack::HugeAcl => huge_acl(ctx, &mut ready).await,
            Attack::SetWatchesFlood => setwatches_flood(ctx, &mut ready).await,
            Attack::MntrPoll => mntr_poll(ctx, &mut ready).await,
            Attack::Loris | Attack::LorisUnlimited => loris(ctx, &mut ready).await,
            Attack::ForgedSession => {
                let victim = victim.await.expect("the bystander's session id");
                forged_session(ctx, victim, &mut ready).await
            }
            Attack::SlowReader => slow_readers(ctx, &mut ready).await,
        }
    }
}

fn auth(credential: String) -> Request {
    Request::Auth(AuthPacket {
        auth_type: 0,
        scheme: "digest".into(),
        auth: Some(credential.into_bytes()),
    })
}

/// Connections one after another, each pipelining 20 windows of 256 repeats of one credential
/// (each answered OK, adding nothing), then 32 fresh credentials: past the per-connection
/// bound it gets AuthFailed and is closed.
async fn auth_flood(ctx: &Ctx<'_>, ready: &mut Ready) -> String {
    const WINDOW: usize = 256;
    let same = auth("same:credential".into());
    let (mut sent, mut answered, mut closed) = (0u64, 0u64, 0u64);
    while !ctx.stop.is_cancelled() {
        let mut attacker = Peer::session(ctx.server.local_addr(), 30_000, 0)
            .await
            .expect("the attacker's session");
        for _ in 0..20 {
            for _ in 0..WINDOW {
                attacker.send(&same).await;
            }
            sent += WINDOW as u64;
            for _ in 0..WINDOW {
                let reply = attacker.next().await.expect("an answer to each repeat");
                assert_eq!(reply_header(&reply).err, 0, "a repeat is answered OK");
                answered += 1;
            }
            ready.fire();
            if ctx.stop.is_cancelled() {
                break;
            }
        }
        for i in 0..32 {
            attacker.send(&auth(format!("user{i}:pw"))).await;
        }
        sent += 32;
        loop {
            let reply = attacker.next().await.expect("an answer before the close");
            match reply_header(&reply).err {
                0 => answered += 1,
                AUTH_FAILED => break,
                other => panic!("a fresh credential answered {other}"),
            }
        }
        assert!(attacker.closed().await, "closed after AuthFailed");
        closed += 1;
    }
    format!(
        "{sent} auth packets sent, {answered} answered OK, {closed} connections refused and closed at the bound"
    )
}

/// One session pipelining creates of about 1 MB carrying 45 000 ACL entries (every one but the
/// last valid and distinct), four in flight; each is answered InvalidACL. The frame is encoded once, only its xid changes.
async fn huge_acl(ctx: &Ctx<'_>, ready: &mut Ready) -> String {
    const WINDOW: i32 = 4;
    let mut frame = encode_frame(|b| encode_request(1, &huge_acl_create("/huge"), b));
    let mut attacker = Peer::session(ctx.server.local_addr(), 30_000, 0)
        .await
        .expect("the attacker's session");
    let (mut sent, mut answered) = (0i32, 0u64);
    while !ctx.stop.is_cancelled() {
        for _ in 0..WINDOW {
            sent += 1;
            // The frame is the length, then the request header's xid.
            frame[4..8].copy_from_slice(&sent.to_be_bytes());
            attacker.send_raw(&frame).await;
        }
        for _ in 0..WINDOW {
            let payload = attacker.next_frame().await.expect("an answer");
            let header = decode_from::<ReplyHeader>(&payload).expect("a reply header");
            assert_eq!(header.err, INVALID_ACL, "the huge create is InvalidACL");
            answered += 1;
        }
        ready.fire();
    }
    format!(
        "{sent} creates of {} bytes sent, {answered} answered InvalidACL",
        frame.len()
    )
}

/// Peers over 4 KiB pipes, one after another, each sending one setWatches listing "/" 200 000
/// times as an exist watch (200 000 NodeCreated notifications at once, about 19 MB as the
/// server holds them) and never reading; the server closes each at its outbound limit.
async fn setwatches_flood(ctx: &Ctx<'_>, ready: &mut Ready) -> String {
    let flood = Request::SetWatches(SetWatches {
        relative_zxid: ctx.server.controls().last_zxid(),
        data_watches: Vec::new(),
        exist_watches: vec!["/".to_owned(); 200_000],
        child_watches: Vec::new(),
    });
    let ping = encode_frame(|b| encode_request(xid::PING, &Request::Ping, b));
    let (mut floods, mut got) = (0u64, 0usize);
    while !ctx.stop.is_cancelled() {
        let mut flooder = ctx.pipe_session(4096).await;
        flooder.send_as(-8, &flood).await;
        let mut stream = flooder.into_inner();
        // Never reading, it learns of the close when a write fails: a ping each millisecond.
        within("the server to close the flooder", async {
            while stream.write_all(&ping).await.is_ok() {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
        .await;
        // What the pipe held when the server let go.
        let mut sink = Vec::new();
        within("the rest", stream.read_to_end(&mut sink))
            .await
            .expect("readable");
        got += sink.len();
        floods += 1;
        ready.fire();
    }
    let closed = ctx.server.stats().closed_outbound_limit.load(Relaxed);
    format!(
        "{floods} setWatches of 200 000 watches sent, {closed} flooders closed at the 8 MiB outbound limit, {got} bytes reached them"
    )
}

/// `mntr` asked over a fresh connection, again and again.
async fn mntr_poll(ctx: &Ctx<'_>, ready: &mut Ready) -> String {
    let addr = ctx.server.local_addr().to_string();
    let mut answers = 0u64;
    while !ctx.stop.is_cancelled() {
        let mntr = four_letter_word(&addr, FourLetterWord::Mntr).await;
        assert!(mntr.contains("zk_znode_count\t"), "a whole answer: {mntr}");
        answers += 1;
        ready.fire();
    }
    format!("{answers} mntr answers")
}

/// 1 000 TCP connections each sending one byte of a four-letter word and nothing more, held
/// open until the bystander is done (under the 10 s handshake deadline), which starts once all
/// are open. Past the per-IP limit (60 by default, the bystander's connection among them) each
/// is closed at once.
async fn loris(ctx: &Ctx<'_>, ready: &mut Ready) -> String {
    const LORISES: usize = 1_000;
    let mut held = Vec::with_capacity(LORISES);
    while held.len() < LORISES && !ctx.stop.is_cancelled() {
        let mut loris = Peer::tcp(ctx.server.local_addr()).await;
        loris.send_raw(b"s").await;
        held.push(loris);
    }
    ready.fire();
    ctx.stop.cancelled().await;
    // A connection the server closed reads its end at once; one it holds stays silent.
    let silent = join_all(
        held.iter_mut()
            .map(|loris| loris.silent_for(Duration::from_millis(100))),
    )
    .await;
    let open = silent.iter().filter(|s| **s).count();
    format!(
        "{} connections opened, {} closed by the server, {open} held open",
        held.len(),
        held.len() - open
    )
}

/// Guesses at the bystander's password, each on a connection of its own: the attacker's own
/// password, zeros, its own mixed with the difference of the ids (the shape of a reversible mix
/// of a seed and the id), and a counter. Each must be refused (timeout 0, then the close).
async fn forged_session(ctx: &Ctx<'_>, victim: i64, ready: &mut Ready) -> String {
    let mut own = Peer::tcp(ctx.server.local_addr()).await;
    let answer = own
        .handshake(&hello())
        .await
        .expect("the attacker's own session");
    let own_passwd = answer.passwd.unwrap_or_default();
    let delta = (answer.session_id ^ victim).to_be_bytes();
    let mixed: Vec<u8> = own_passwd
        .iter()
        .enumerate()
        .map(|(i, b)| b ^ delta[i % 8])
        .collect();
    let mut refused = 0u64;
    while !ctx.stop.is_cancelled() {
        let passwd = match refused % 4 {
            0 => own_passwd.clone(),
            1 => vec![0; 16],
            2 => mixed.clone(),
            _ => refused.to_be_bytes().repeat(2),
        };
        let mut forger = Peer::tcp(ctx.server.local_addr()).await;
        let answer = forger
            .handshake(&ConnectRequest {
                session_id: victim,
                passwd: Some(passwd),
                ..hello()
            })
            .await
            .expect("a bad password is answered");
        assert_eq!(answer.timeout, 0, "a forged password is refused");
        assert!(forger.closed().await, "the forger's connection closes");
        refused += 1;
        ready.fire();
    }
    format!("{refused} forged resumptions of the bystander's session, all refused")
}

/// Peers over 4 KiB pipes, each asking for a 1 MB node again and again and taking each reply
/// 4 KiB at a time with a 1 ms pause between reads. The bystander starts once every reader's
/// first reply has begun to come.
async fn slow_readers(ctx: &Ctx<'_>, ready: &mut Ready) -> String {
    const READERS: usize = 8;
    let mut writer = ctx.pipe_session(64 * 1024).await;
    let created = writer
        .call(&create(
            "/big",
            &vec![7; BIG],
            shepherd_protocol::CreateMode::Persistent,
        ))
        .await;
    assert_eq!(reply_header(&created).err, 0, "/big is created");
    let mut readers = Vec::with_capacity(READERS);
    for _ in 0..READERS {
        let mut stream = ctx.pipe_session(4096).await.into_inner();
        let left = ask_big(&mut stream, 1).await;
        readers.push((stream, left));
    }
    ready.fire();
    let counts = join_all(
        readers
            .into_iter()
            .map(|(stream, left)| slow_reader(stream, left, ctx.stop)),
    )
    .await;
    let replies: u64 = counts.iter().map(|c| c.0).sum();
    let bytes: usize = counts.iter().map(|c| c.1).sum();
    format!(
        "{READERS} readers taking 1 MB replies 4 KiB a ms: {:.1} MB read, {replies} replies finished",
        bytes as f64 / 1e6
    )
}

/// Asks for `/big` under `xid` and reads the reply's length: the bytes of it to come.
async fn ask_big(stream: &mut DuplexStream, xid: i32) -> usize {
    let ask = encode_frame(|b| encode_request(xid, &get_data("/big"), b));
    stream.write_all(&ask).await.expect("a getData");
    let mut len = [0; 4];
    within("a reply's length", stream.read_exact(&mut len))
        .await
        .expect("readable");
    let left = u32::from_be_bytes(len) as usize;
    assert!(left > BIG, "the whole node comes back");
    left
}

/// One slow reader, `left` bytes into its first reply, until `stop`: the whole replies it took
/// and the bytes it read.
async fn slow_reader(
    mut stream: DuplexStream,
    mut left: usize,
    stop: &CancellationToken,
) -> (u64, usize) {
    let (mut replies, mut bytes) = (0u64, 0usize);
    let mut chunk = vec![0; 4096];
    for xid in 2.. {
        while left > 0 {
            if stop.is_cancelled() {
                return (replies, bytes);
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
            let want = left.min(chunk.len());
            let n = within("more of the reply", stream.read(&mut chunk[..want]))
                .await
                .expect("readable");
            assert!(n > 0, "the server closed a slow reader");
            left -= n;
            bytes += n;
        }
        replies += 1;
        left = ask_big(&mut stream, xid).await;
    }
    (replies, bytes)
}
