//! SASL DIGEST-MD5 in the client against a scripted server over in-memory pipes: the order of
//! what each connection carries (the `sasl` tokens before credentials, setWatches and
//! requests, on every reconnect), and a refusal as the AuthFailed outcome, on the first
//! connection and on a reconnect.
//!
//! The server side of the mechanism is `shepherd_protocol::sasl::DigestMd5Server`, the one
//! Shepherd's server runs; real servers are in `secure.rs`.

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use shepherd_client::{Client, Error, SessionState};
use shepherd_protocol::sasl::{DigestMd5Server, DigestParams, ServerStep};
use shepherd_protocol::{
    Codec, ConnectRequest, ConnectResponse, DEFAULT_MAX_BUFFER, ErrorCode, ExistsResponse, OpCode,
    ReplyHeader, Request, Response, SaslToken, Stat, decode_from, decode_request, encode_frame,
    encode_reply, frame_len, xid,
};
use shepherd_testkit::within;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

const SESSION: i64 = 0x5a51;

/// What the scripted server knows and saw.
#[derive(Default)]
struct Script {
    /// alice's password as the server has it (changed between connections to refuse her).
    password: String,
    /// Each connection's requests' op codes, pings left out, in arrival order.
    seen: Vec<Vec<OpCode>>,
    /// Connections that end right after their first `exists` reply (a lost connection).
    cut_after_exists: usize,
}

type Shared = Arc<Mutex<Script>>;

async fn read_frame(peer: &mut DuplexStream) -> io::Result<Vec<u8>> {
    let mut prefix = [0; 4];
    peer.read_exact(&mut prefix).await?;
    let len = frame_len(prefix, DEFAULT_MAX_BUFFER).map_err(io::Error::other)?;
    let mut payload = vec![0; len];
    peer.read_exact(&mut payload).await?;
    Ok(payload)
}

async fn reply(
    peer: &mut DuplexStream,
    xid: i32,
    err: i32,
    body: Option<&Response>,
) -> io::Result<()> {
    let header = ReplyHeader { xid, zxid: 5, err };
    peer.write_all(&encode_frame(|buf| encode_reply(&header, body, buf)))
        .await
}

/// One connection of the scripted server: the handshake, then requests until closeSession,
/// a refused SASL exchange, or the scripted cut.
async fn serve(mut peer: DuplexStream, conn: usize, script: Shared) -> io::Result<()> {
    let connect =
        decode_from::<ConnectRequest>(&read_frame(&mut peer).await?).map_err(io::Error::other)?;
    let accepted = ConnectResponse {
        protocol_version: 0,
        timeout: 6000,
        session_id: SESSION,
        passwd: Some(vec![3; 16]),
        read_only: connect.read_only.map(|_| false),
    };
    peer.write_all(&encode_frame(|buf| accepted.encode(buf)))
        .await?;
    let mut mechanism = DigestMd5Server::new(DigestParams::zookeeper(), format!("nonce{conn}"));
    loop {
        let (header, request) =
            decode_request(&read_frame(&mut peer).await?).map_err(io::Error::other)?;
        let request = request.map_err(io::Error::other)?;
        if request != Request::Ping {
            script.lock().unwrap().seen[conn].push(request.op_code());
        }
        match &request {
            Request::Ping => reply(&mut peer, xid::PING, 0, Some(&Response::Ping)).await?,
            Request::Sasl(SaslToken { token }) => {
                let password = script.lock().unwrap().password.clone();
                let token = token.clone().unwrap_or_default();
                let known = |user: &str| (user == "alice").then_some(password);
                match mechanism.step(&token, known) {
                    Ok(ServerStep::Challenge(t) | ServerStep::Done { token: t, .. }) => {
                        let body = Response::Sasl(SaslToken { token: Some(t) });
                        reply(&mut peer, header.xid, 0, Some(&body)).await?;
                    }
                    Err(_) => {
                        // ZooKeeper 3.8 `ZooKeeperServer.processSasl`: AuthFailed, then close.
                        let err = i32::from(ErrorCode::AuthFailed);
                        let body = Response::Sasl(SaslToken { token: None });
                        reply(&mut peer, header.xid, err, Some(&body)).await?;
                        return Ok(());
                    }
                }
            }
            Request::Auth(_) | Request::SetWatches(_) | Request::SetWatches2(_) => {
                reply(&mut peer, header.xid, 0, None).await?;
            }
            Request::Exists(_) => {
                let body = Response::Exists(ExistsResponse {
                    stat: Stat::default(),
                });
                reply(&mut peer, header.xid, 0, Some(&body)).await?;
                if conn < script.lock().unwrap().cut_after_exists {
                    return Ok(());
                }
            }
            Request::CloseSession => {
                reply(&mut peer, header.xid, 0, Some(&Response::CloseSession)).await?;
                return Ok(());
            }
            other => return Err(io::Error::other(format!("unscripted {other:?}"))),
        }
    }
}

/// A connector that opens a fresh pipe to a fresh run of [`serve`] on every attempt.
fn connector(
    script: &Shared,
) -> impl Fn(&str) -> std::future::Ready<io::Result<DuplexStream>> + Send + Sync + 'static {
    let script = Arc::clone(script);
    move |_host: &str| {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let conn = {
            let mut script = script.lock().unwrap();
            script.seen.push(Vec::new());
            script.seen.len() - 1
        };
        let script = Arc::clone(&script);
        tokio::spawn(serve(server, conn, script));
        std::future::ready(Ok(client))
    }
}

fn script(password: &str, cut_after_exists: usize) -> Shared {
    Arc::new(Mutex::new(Script {
        password: password.into(),
        seen: Vec::new(),
        cut_after_exists,
    }))
}

fn builder() -> shepherd_client::ClientBuilder {
    Client::builder()
        .session_timeout(Duration::from_secs(6))
        .connect_timeout(Duration::from_secs(5))
}

#[tokio::test]
async fn sasl_goes_first_on_every_connection() {
    let script = script("secret", 1);
    let client = within(
        "connect",
        builder()
            .sasl_digest_md5("alice", "secret")
            .digest("u:p")
            .connect_with("scripted", connector(&script)),
    )
    .await
    .expect("authenticated");
    // The first connection ends after this reply; the watch is re-armed on the second.
    let (_, _watch) = within("exists_w", client.exists_w("/a")).await.unwrap();
    // A call racing the cut fails with ConnectionLoss; one issued after it waits for the
    // second connection.
    for attempt in 0.. {
        match within("exists", client.exists("/b")).await {
            Ok(_) => break,
            Err(Error::ConnectionLoss) if attempt < 10 => {}
            Err(e) => panic!("exists on the second connection: {e}"),
        }
    }
    within("close", client.close()).await.unwrap();

    let seen = script.lock().unwrap().seen.clone();
    use OpCode::{Auth, CloseSession, Exists, Sasl};
    assert_eq!(seen[0], [Sasl, Sasl, Auth, Exists], "first connection");
    assert_eq!(seen[1].len(), 6, "second connection: {:?}", seen[1]);
    assert_eq!(
        seen[1][..3],
        [Sasl, Sasl, Auth],
        "SASL again, then credentials"
    );
    assert!(
        matches!(seen[1][3], OpCode::SetWatches | OpCode::SetWatches2),
        "then the watches: {:?}",
        seen[1]
    );
    assert_eq!(seen[1][4..], [Exists, CloseSession]);
}

#[tokio::test]
async fn a_refused_password_fails_the_connect_with_auth_failed() {
    let script = script("secret", 0);
    let result = within(
        "connect",
        builder()
            .sasl_digest_md5("alice", "wrong")
            .connect_with("scripted", connector(&script)),
    )
    .await;
    assert!(matches!(result, Err(Error::AuthFailed)), "{result:?}");
    let seen = script.lock().unwrap().seen.clone();
    assert_eq!(
        seen,
        [vec![OpCode::Sasl, OpCode::Sasl]],
        "one attempt, nothing after SASL"
    );
}

#[tokio::test]
async fn a_refusal_on_reconnect_ends_the_session_as_auth_failed() {
    let script = script("secret", 1);
    let client = within(
        "connect",
        builder()
            .sasl_digest_md5("alice", "secret")
            .connect_with("scripted", connector(&script)),
    )
    .await
    .expect("authenticated");
    // The password changes on the server; the next connection is refused.
    script.lock().unwrap().password = "rotated".into();
    let (_, watcher) = within("exists_w", client.exists_w("/a")).await.unwrap();
    let mut status = client.status_watch();
    let end = within("the end", status.wait_for(|s| s.state.is_terminal()))
        .await
        .unwrap()
        .state;
    assert_eq!(end, SessionState::AuthFailed);
    let after = within("exists after", client.exists("/a")).await;
    assert!(matches!(after, Err(Error::AuthFailed)), "{after:?}");
    let fired = within("the watch", watcher).await;
    assert!(matches!(fired, Err(Error::AuthFailed)), "{fired:?}");
    let seen = script.lock().unwrap().seen.clone();
    assert_eq!(seen.len(), 2, "no host is tried after a refusal: {seen:?}");
    assert_eq!(seen[1], [OpCode::Sasl, OpCode::Sasl]);
}
