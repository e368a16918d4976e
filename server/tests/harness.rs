//! The test-harness controls of `ServerHandle`, through real sockets: the shepherd-client crate
//! where a client's view matters, hand-built frames where exact bytes and ordering do.
//!
//! Every wait is bounded and waits on an event (a reply, a status change, a core predicate);
//! the only fixed waits are short ones that check that nothing arrives.

use std::time::Duration;

use shepherd_client::{Client, CreateOptions, Error, SessionState};
use shepherd_protocol::{
    Acl, Codec, ConnectRequest, ConnectResponse, CreateMode, CreateRequest, ErrorCode, EventType,
    FourLetterWord, OpCode, PathWatchRequest, Reply, Request, SetDataRequest, decode_reply,
    encode_frame, encode_request,
};
use shepherd_server::{Fault, FaultRule, ControlError, Server, ServerHandle};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The bound on every wait for something that must happen.
const LIMIT: Duration = Duration::from_secs(10);

async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, fut)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

async fn server() -> ServerHandle {
    Server::builder()
        .all_four_letter_words()
        .start()
        .await
        .expect("server starts")
}

async fn client(server: &ServerHandle) -> Client {
    Client::builder()
        .session_timeout(Duration::from_secs(10))
        .connect(&server.connect_string())
        .await
        .expect("client connects")
}

async fn wait_state(client: &Client, state: SessionState) {
    let mut status = client.status_watch();
    within(&format!("session state {state:?}"), async {
        status.wait_for(|s| s.state == state).await.expect("status")
    })
    .await;
}

fn exists_in(server: &ServerHandle, path: &str) -> bool {
    server.dump_tree().iter().any(|n| n.path == path)
}

// ---- Raw sessions ------------------------------------------------------------------------

/// A session spoken to with hand-built frames: it never pings unless told to.
struct Raw {
    stream: TcpStream,
    session: i64,
    next_xid: i32,
}

impl Raw {
    async fn connect(server: &ServerHandle, timeout_ms: i32) -> Raw {
        Raw::connect_seen(server, timeout_ms, 0)
            .await
            .expect("a session")
    }

    /// None when the server refuses the handshake (closes without a reply).
    async fn connect_seen(server: &ServerHandle, timeout_ms: i32, last_zxid: i64) -> Option<Raw> {
        let mut stream = TcpStream::connect(server.local_addr()).await.unwrap();
        let request = ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: last_zxid,
            timeout: timeout_ms,
            session_id: 0,
            passwd: Some(vec![0; 16]),
            read_only: Some(false),
        };
        stream
            .write_all(&encode_frame(|b| request.encode(b)))
            .await
            .unwrap();
        let payload = read_frame(&mut stream).await?;
        let response = shepherd_protocol::decode_from::<ConnectResponse>(&payload).unwrap();
        Some(Raw {
            stream,
            session: response.session_id,
            next_xid: 1,
        })
    }

    /// Sends a request without reading anything; returns its xid.
    async fn send(&mut self, request: &Request) -> i32 {
        let xid = if matches!(request, Request::Ping) {
            -2
        } else {
            self.next_xid += 1;
            self.next_xid
        };
        let frame = encode_frame(|b| encode_request(xid, request, b));
        self.stream.write_all(&frame).await.unwrap();
        xid
    }

    /// The next frame, decoded with `op` for any reply.
    async fn next(&mut self, op: OpCode) -> Option<Reply> {
        let payload = read_frame(&mut self.stream).await?;
        Some(decode_reply(&payload, |_| Some(op)).unwrap())
    }

    /// Sends and returns the reply, skipping notifications.
    async fn call(&mut self, request: &Request) -> Reply {
        let xid = self.send(request).await;
        loop {
            match self.next(request.op_code()).await.expect("a reply") {
                Reply::Event(..) => continue,
                reply => {
                    assert_eq!(header(&reply).xid, xid);
                    return reply;
                }
            }
        }
    }

    /// True if nothing arrives within `wait` (the connection stays open and silent).
    async fn silent_for(&mut self, wait: Duration) -> bool {
        let mut byte = [0u8; 1];
        tokio::time::timeout(wait, self.stream.peek(&mut byte))
            .await
            .is_err()
    }
}

async fn read_frame(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut len = [0u8; 4];
    within("a frame", stream.read_exact(&mut len)).await.ok()?;
    let mut payload = vec![0u8; u32::from_be_bytes(len) as usize];
    within("a payload", stream.read_exact(&mut payload))
        .await
        .ok()?;
    Some(payload)
}

fn header(reply: &Reply) -> &shepherd_protocol::ReplyHeader {
    match reply {
        Reply::Event(h, _) | Reply::Ok(h, _) | Reply::Err(h) => h,
    }
}

fn create(path: &str, flags: CreateMode) -> Request {
    Request::Create(CreateRequest {
        path: path.into(),
        data: Some(b"d".to_vec()),
        acl: Acl::open_unsafe(),
        flags: flags.into(),
    })
}

fn exists(path: &str, watch: bool) -> Request {
    Request::Exists(PathWatchRequest {
        path: path.into(),
        watch,
    })
}

fn get_data(path: &str) -> Request {
    Request::GetData(PathWatchRequest {
        path: path.into(),
        watch: false,
    })
}

fn set_data(path: &str, data: &[u8]) -> Request {
    Request::SetData(SetDataRequest {
        path: path.into(),
        data: Some(data.to_vec()),
        version: -1,
    })
}

// ---- 1. Sessions and connections -----------------------------------------------------------

#[tokio::test]
async fn expire_session_deletes_ephemerals_fires_watches_and_the_client_sees_expired() {
    let server = server().await;
    let doomed = client(&server).await;
    let observer = client(&server).await;
    doomed
        .create("/eph", b"", &CreateOptions::ephemeral())
        .await
        .unwrap();
    let (_, gone) = observer.exists_w("/eph").await.unwrap();
    let session = server.session(doomed.session_id()).expect("listed");
    assert_eq!(session.ephemerals, ["/eph"]);

    server.expire_session(doomed.session_id());

    // Synchronous: the core state has changed when it returns.
    assert!(server.session(doomed.session_id()).is_none());
    assert!(!exists_in(&server, "/eph"));
    let event = within("NodeDeleted", gone).await.unwrap();
    assert_eq!(event.event_type, EventType::NodeDeleted);
    // Closed with no reply; the reconnect is told the session expired.
    wait_state(&doomed, SessionState::Expired).await;
    assert!(matches!(
        doomed.get_data("/").await,
        Err(Error::SessionExpired)
    ));
}

#[tokio::test]
async fn sessions_list_ephemerals_and_watches() {
    let server = server().await;
    let c = client(&server).await;
    c.create("/e", b"", &CreateOptions::ephemeral())
        .await
        .unwrap();
    let (_, _, _watch) = c.get_data_w("/e").await.unwrap();
    let _children = c.get_children_w("/").await.unwrap();
    let info = server.session(c.session_id()).unwrap();
    assert_eq!(info.ephemerals, ["/e"]);
    let watches: Vec<_> = info
        .watches
        .iter()
        .map(|w| (w.path.as_str(), format!("{:?}", w.kind)))
        .collect();
    assert_eq!(
        watches,
        [("/", "Child".to_string()), ("/e", "Data".to_string())]
    );
    let all = server.dump_watches();
    assert_eq!(all.len(), 2);
    assert!(all.iter().all(|w| w.session == Some(c.session_id())));
}

#[tokio::test]
async fn close_connection_keeps_the_session_and_the_client_resumes() {
    let server = server().await;
    let c = client(&server).await;
    c.create("/kept", b"", &CreateOptions::ephemeral())
        .await
        .unwrap();
    let (_, watch) = c.exists_w("/kept").await.unwrap();
    let first_conn = server.session(c.session_id()).unwrap().conn;
    let mut status = c.status_watch();

    server.close_connection(c.session_id()).unwrap();

    within(
        "disconnect",
        status.wait_for(|s| s.state == SessionState::Disconnected),
    )
    .await
    .unwrap();
    wait_state(&c, SessionState::Connected).await;
    // Same session, new connection, ephemeral kept, watch re-registered by setWatches.
    let id = c.session_id();
    within("the watch re-registered", async {
        server
            .wait_for(|core| {
                core.sessions()
                    .iter()
                    .any(|s| s.id == id && s.conn.is_some() && s.watches.len() == 1)
            })
            .await
    })
    .await;
    assert_ne!(server.session(id).unwrap().conn, first_conn);
    assert!(exists_in(&server, "/kept"));
    let other = client(&server).await;
    other.delete("/kept", None).await.unwrap();
    assert_eq!(
        within("the re-armed watch", watch)
            .await
            .unwrap()
            .event_type,
        EventType::NodeDeleted
    );
    assert_eq!(
        server.close_connection(0x1234),
        Err(ControlError::UnknownSession(0x1234))
    );
}

#[tokio::test]
async fn a_frozen_session_gets_nothing_until_thawed_then_everything_in_order() {
    let server = server().await;
    let mut frozen = Raw::connect(&server, 30_000).await;
    let mut other = Raw::connect(&server, 30_000).await;
    other.call(&create("/f", CreateMode::Persistent)).await;
    assert!(matches!(
        frozen.call(&exists("/f", true)).await,
        Reply::Ok(..)
    ));

    server.freeze_session(frozen.session).unwrap();
    // A notification is queued for it, then it sends a ping and a read.
    other.call(&set_data("/f", b"2")).await;
    frozen.send(&Request::Ping).await;
    let read = frozen.send(&get_data("/f")).await;
    assert!(frozen.silent_for(Duration::from_millis(300)).await);
    let zxid = server.last_zxid();

    assert!(server.thaw_session(frozen.session));
    match frozen.next(OpCode::GetData).await.unwrap() {
        Reply::Event(_, e) => assert_eq!(
            (e.event_type, e.path.as_str()),
            (EventType::NodeDataChanged, "/f")
        ),
        other => panic!("expected the event first, got {other:?}"),
    }
    assert_eq!(header(&frozen.next(OpCode::Ping).await.unwrap()).xid, -2);
    let reply = frozen.next(OpCode::GetData).await.unwrap();
    assert_eq!(header(&reply).xid, read);
    assert_eq!(header(&reply).zxid, zxid);
    assert!(!server.thaw_session(frozen.session));
    assert_eq!(
        server.freeze_session(0x77),
        Err(ControlError::UnknownSession(0x77))
    );
}

#[tokio::test]
async fn a_frozen_client_reconnect_is_held_too_and_resumes_after_thaw() {
    let server = server().await;
    let c = Client::builder()
        .session_timeout(Duration::from_secs(4))
        .connect(&server.connect_string())
        .await
        .unwrap();
    server.freeze_session(c.session_id()).unwrap();
    // No ping answers: the client gives up on the connection (after 2/3 of its timeout),
    // and its reconnect is held as well.
    wait_state(&c, SessionState::Disconnected).await;
    assert!(server.thaw_session(c.session_id()));
    wait_state(&c, SessionState::Connected).await;
    within("a request after thaw", c.exists("/")).await.unwrap();
}

// ---- 2. Fault rules ------------------------------------------------------------------------

#[tokio::test]
async fn apply_then_drop_is_the_lost_create() {
    let server = server().await;
    let c = client(&server).await;
    c.create("/locks", b"", &CreateOptions::persistent())
        .await
        .unwrap();
    let rule = server.add_fault(
        FaultRule::new(Fault::ApplyThenDrop)
            .opcode(OpCode::Create)
            .path_prefix("/locks")
            .times(1),
    );
    let lost = c.create("/locks/a", b"", &CreateOptions::ephemeral()).await;
    assert!(matches!(lost, Err(Error::ConnectionLoss)), "{lost:?}");
    assert!(within("the rule", server.fault_fired(rule)).await);
    assert_eq!(server.fault_fire_count(rule), Some(1));
    // Applied, in the same session: the client finds it once reconnected.
    assert!(exists_in(&server, "/locks/a"));
    wait_state(&c, SessionState::Connected).await;
    let stat = c.exists("/locks/a").await.unwrap().expect("created");
    assert_eq!(stat.ephemeral_owner, c.session_id());
    // Spent: the next create goes through.
    c.create("/locks/b", b"", &CreateOptions::persistent())
        .await
        .unwrap();
    assert!(server.remove_fault(rule));
    assert!(!server.fault_fired(rule).await);
}

#[tokio::test]
async fn drop_before_apply_closes_without_applying() {
    let server = server().await;
    let mut raw = Raw::connect(&server, 30_000).await;
    let rule = server.add_fault(
        FaultRule::new(Fault::DropBeforeApply)
            .session(raw.session)
            .path_prefix("/x"),
    );
    let zxid = server.last_zxid();
    raw.send(&create("/x", CreateMode::Persistent)).await;
    assert!(raw.next(OpCode::Create).await.is_none(), "closed, no reply");
    assert!(server.fault_fired(rule).await);
    assert!(!exists_in(&server, "/x"));
    assert_eq!(server.last_zxid(), zxid);
    // The session lives on.
    assert!(server.session(raw.session).is_some());
}

#[tokio::test]
async fn a_multi_matches_by_any_sub_op_path() {
    let server = server().await;
    let c = client(&server).await;
    server.add_fault(
        FaultRule::new(Fault::Reject(ErrorCode::SystemError))
            .opcode(OpCode::Multi)
            .path_prefix("/m/"),
    );
    c.create("/m", b"", &CreateOptions::persistent())
        .await
        .unwrap();
    let result = c
        .multi()
        .create("/elsewhere", b"", &CreateOptions::persistent())
        .create("/m/a", b"", &CreateOptions::persistent())
        .commit()
        .await;
    assert!(
        matches!(result, Err(Error::Keeper(ErrorCode::SystemError))),
        "{result:?}"
    );
    assert!(!exists_in(&server, "/elsewhere"));
}

#[tokio::test]
async fn reject_answers_the_code_with_the_current_zxid_and_applies_nothing() {
    let server = server().await;
    let mut raw = Raw::connect(&server, 30_000).await;
    raw.call(&create("/r", CreateMode::Persistent)).await;
    let rule = server.add_fault(
        FaultRule::new(Fault::Reject(ErrorCode::BadVersion))
            .opcode(OpCode::SetData)
            .always(),
    );
    let zxid = server.last_zxid();
    for _ in 0..2 {
        let reply = raw.call(&set_data("/r", b"new")).await;
        assert!(matches!(reply, Reply::Err(_)));
        assert_eq!(header(&reply).err, i32::from(ErrorCode::BadVersion));
        assert_eq!(header(&reply).zxid, zxid);
    }
    assert_eq!(server.last_zxid(), zxid);
    assert_eq!(server.fault_fire_count(rule), Some(2));
    // Pings do not match a rule without an opcode filter; other opcodes do not match this one.
    assert!(matches!(raw.call(&get_data("/r")).await, Reply::Ok(..)));
    let stat = server
        .dump_tree()
        .into_iter()
        .find(|n| n.path == "/r")
        .unwrap();
    assert_eq!(stat.stat.version, 0);
}

#[tokio::test]
async fn a_delayed_reply_holds_later_frames_behind_it_but_not_later_requests() {
    let server = server().await;
    let mut slow = Raw::connect(&server, 30_000).await;
    let mut watcher = Raw::connect(&server, 30_000).await;
    slow.call(&create("/d", CreateMode::Persistent)).await;
    watcher.call(&exists("/d2", true)).await;
    let delay = Duration::from_millis(400);
    server.add_fault(
        FaultRule::new(Fault::Delay(delay))
            .session(slow.session)
            .opcode(OpCode::GetData),
    );
    let started = std::time::Instant::now();
    let first = slow.send(&get_data("/d")).await;
    let second = slow.send(&create("/d2", CreateMode::Persistent)).await;
    // The create behind the delayed read is applied at once: the other session hears of it
    // while the read's reply is still held.
    match watcher.next(OpCode::Exists).await.unwrap() {
        Reply::Event(_, e) => assert_eq!(e.event_type, EventType::NodeCreated),
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < delay);
    let replies = [
        slow.next(OpCode::GetData).await.unwrap(),
        slow.next(OpCode::Create).await.unwrap(),
    ];
    assert!(started.elapsed() >= delay);
    assert_eq!(
        [header(&replies[0]).xid, header(&replies[1]).xid],
        [first, second]
    );
}

// ---- 3. Virtual time ---------------------------------------------------------------------

/// A 30-second session that never pings expires when virtual time passes its timeout; the
/// test waits on events (the watcher's NodeDeleted, the core's session table), never on wall
/// time.
#[tokio::test(start_paused = true)]
async fn virtual_time_expires_a_silent_session_in_no_wall_time() {
    let server = server().await;
    let mut silent = Raw::connect(&server, 30_000).await;
    silent.call(&create("/eph", CreateMode::Ephemeral)).await;
    // The watcher's 40 s timeout outlives the advance below.
    let mut watcher = Raw::connect(&server, 40_000).await;
    watcher.call(&exists("/eph", true)).await;

    let wall = std::time::Instant::now();
    tokio::time::advance(Duration::from_secs(33)).await;
    let id = silent.session;
    within(
        "the expiry",
        server.wait_for(|core| core.session_timeout(id).is_none()),
    )
    .await;
    match watcher.next(OpCode::Exists).await.unwrap() {
        Reply::Event(_, e) => assert_eq!(
            (e.event_type, e.path.as_str()),
            (EventType::NodeDeleted, "/eph")
        ),
        other => panic!("{other:?}"),
    }
    let elapsed = wall.elapsed();
    println!("virtual-time expiry of a 30 s session took {elapsed:?} of wall time");
    assert!(elapsed < Duration::from_secs(10));
    assert!(!exists_in(&server, "/eph"));
    assert!(server.session(watcher.session).is_some());
    // Closed without a reply.
    assert!(silent.next(OpCode::Ping).await.is_none());
}

/// A freeze is a partition: nothing touches the session, so it expires on its own timeout; the
/// close reaches the client only when the partition heals.
#[tokio::test(start_paused = true)]
async fn a_frozen_session_expires_on_its_timeout_and_learns_it_at_the_thaw() {
    let server = server().await;
    let mut frozen = Raw::connect(&server, 30_000).await;
    frozen.call(&create("/p", CreateMode::Ephemeral)).await;
    server.freeze_session(frozen.session).unwrap();
    // Its pings go unread.
    frozen.send(&Request::Ping).await;
    tokio::time::advance(Duration::from_secs(33)).await;
    let id = frozen.session;
    within(
        "the expiry",
        server.wait_for(|core| core.session_timeout(id).is_none()),
    )
    .await;
    assert!(!exists_in(&server, "/p"));
    assert!(server.thaw_session(id));
    assert!(
        frozen.next(OpCode::Ping).await.is_none(),
        "closed, no reply"
    );
}

/// TTL nodes and emptied containers are reaped when virtual time reaches the reaper's interval.
#[tokio::test(start_paused = true)]
async fn virtual_time_reaps_ttl_nodes_and_containers() {
    let server = server().await;
    let mut raw = Raw::connect(&server, 30_000).await;
    raw.call(&Request::CreateTTL(shepherd_protocol::CreateTTLRequest {
        path: "/ttl".into(),
        data: None,
        acl: Acl::open_unsafe(),
        flags: CreateMode::PersistentWithTTL.into(),
        ttl: 5_000,
    }))
    .await;
    raw.call(&Request::CreateContainer(CreateRequest {
        path: "/box".into(),
        data: None,
        acl: Acl::open_unsafe(),
        flags: CreateMode::Container.into(),
    }))
    .await;
    raw.call(&create("/box/x", CreateMode::Persistent)).await;
    raw.call(&Request::Delete(shepherd_protocol::DeleteRequest {
        path: "/box/x".into(),
        version: -1,
    }))
    .await;
    assert!(exists_in(&server, "/ttl") && exists_in(&server, "/box"));
    // The reaper runs every 60 s by default.
    tokio::time::advance(Duration::from_secs(61)).await;
    within("the reaper", async {
        server
            .wait_for(|core| {
                let tree = core.dump_tree();
                !tree.iter().any(|n| n.path == "/ttl" || n.path == "/box")
            })
            .await
    })
    .await;
}

// ---- 4. Seeding and inspection ----------------------------------------------------------

#[tokio::test]
async fn the_sequence_counter_wraps_past_i32_max() {
    let server = server().await;
    let c = client(&server).await;
    c.create("/seq", b"", &CreateOptions::persistent())
        .await
        .unwrap();
    server.set_sequence_counter("/seq", i32::MAX).unwrap();
    let sequential = CreateOptions::new(CreateMode::PersistentSequential);
    let (a, _) = c.create("/seq/n-", b"", &sequential).await.unwrap();
    let (b, _) = c.create("/seq/n-", b"", &sequential).await.unwrap();
    assert_eq!(a, "/seq/n-2147483647");
    assert_eq!(b, "/seq/n--2147483648");
    assert_eq!(
        server.set_sequence_counter("/nope", 1),
        Err(ControlError::NoNode("/nope".into()))
    );
}

#[tokio::test]
async fn initial_zxid_and_set_last_zxid_govern_which_clients_may_connect() {
    let server = Server::builder().initial_zxid(1_000).start().await.unwrap();
    // A fresh session takes a zxid.
    assert!(Raw::connect_seen(&server, 30_000, 900).await.is_some());
    assert_eq!(server.last_zxid(), 1_001);
    assert!(Raw::connect_seen(&server, 30_000, 2_000).await.is_none());
    server.set_last_zxid(5_000);
    let mut raw = Raw::connect_seen(&server, 30_000, 2_000).await.unwrap();
    let reply = raw.call(&create("/z", CreateMode::Persistent)).await;
    assert_eq!(header(&reply).zxid, 5_002);
    let node = server
        .dump_tree()
        .into_iter()
        .find(|n| n.path == "/z")
        .unwrap();
    assert_eq!((node.stat.czxid, node.data_len), (5_002, 1));
}

// ---- 5. Notification accounting ------------------------------------------------------------

fn mntr(server: &ServerHandle) -> std::collections::HashMap<String, String> {
    server
        .four_letter_word(FourLetterWord::Mntr)
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[tokio::test]
async fn notification_counts_and_mntr_watch_summaries() {
    let server = server().await;
    let a = client(&server).await;
    let b = client(&server).await;
    a.create("/n", b"", &CreateOptions::persistent())
        .await
        .unwrap();
    let (_, _, wa) = a.get_data_w("/n").await.unwrap();
    let (_, _, wb) = b.get_data_w("/n").await.unwrap();
    a.set_data("/n", b"1", None).await.unwrap();
    within("a's event", wa).await.unwrap();
    within("b's event", wb).await.unwrap();
    let (_, wc) = b.exists_w("/n/c").await.unwrap();
    let _children = b.get_children_w("/n").await.unwrap();
    a.create("/n/c", b"", &CreateOptions::persistent())
        .await
        .unwrap();
    within("b's NodeCreated", wc).await.unwrap();

    let counts = server.notification_counts();
    assert_eq!(counts.node_data_changed, 2);
    assert_eq!(counts.node_created, 1);
    assert_eq!(counts.node_children_changed, 1);
    assert_eq!(counts.total(), 4);
    assert_eq!(counts.session(a.session_id()), 1);
    assert_eq!(counts.session(b.session_id()), 3);

    let m = mntr(&server);
    let get = |k: &str| m.get(k).unwrap_or_else(|| panic!("{k} missing")).as_str();
    // One setData trigger matched two watchers.
    assert_eq!(get("zk_cnt_node_changed_watch_count"), "1");
    assert_eq!(get("zk_sum_node_changed_watch_count"), "2");
    assert_eq!(get("zk_avg_node_changed_watch_count"), "2.0");
    assert_eq!(get("zk_min_node_changed_watch_count"), "2");
    assert_eq!(get("zk_max_node_changed_watch_count"), "2");
    assert_eq!(get("zk_cnt_node_created_watch_count"), "1");
    assert_eq!(get("zk_cnt_node_children_watch_count"), "1");
    assert_eq!(get("zk_cnt_node_deleted_watch_count"), "0");
    assert_eq!(get("zk_avg_node_deleted_watch_count"), "0.0");
    for key in [
        "zk_version",
        "zk_server_state",
        "zk_avg_latency",
        "zk_max_latency",
        "zk_min_latency",
        "zk_packets_received",
        "zk_packets_sent",
        "zk_num_alive_connections",
        "zk_outstanding_requests",
        "zk_znode_count",
        "zk_watch_count",
        "zk_ephemerals_count",
        "zk_approximate_data_size",
        "zk_uptime",
        "zk_global_sessions",
        "zk_local_sessions",
        "zk_watch_bytes",
    ] {
        assert!(m.contains_key(key), "{key} missing");
    }
    if cfg!(target_os = "linux") {
        assert!(get("zk_open_file_descriptor_count").parse::<u64>().unwrap() > 0);
        assert!(get("zk_max_file_descriptor_count").parse::<u64>().unwrap() > 0);
    }
    assert_eq!(get("zk_global_sessions"), "2");
}
