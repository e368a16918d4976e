//! The oracle's own logic: the generator's determinism and rules, the normalisation, the
//! comparison and the shrinker (on a fake probe, no server).

use std::collections::HashMap;

use shepherd_protocol::{
    ClientInfo, Create2Response, CreateTTLRequest, EventType, GetChildrenResponse, KeeperState,
    ReplyHeader, Request, Response, Stat, WatcherEvent, WhoAmIResponse, encode_event, encode_reply,
};

use super::differential::{Point, first_difference};
use super::generate::{generate, generate_with};
use super::known::{crashing_ttl, forbidden};
use super::normalise::Context;
use super::run::Transcript;
use super::shrink::{Probe, shrink};
use super::step::{Action, ROOT, Step};

#[test]
fn a_seed_always_gives_the_same_sequence() {
    for seed in [0, 1, 42, u64::MAX] {
        assert_eq!(generate(seed, 60), generate(seed, 60), "seed {seed}");
    }
    assert_ne!(generate(1, 60).steps, generate(2, 60).steps);
}

#[test]
fn sequences_have_the_asked_length_and_sessions() {
    for seed in 0..50 {
        let s = generate(seed, 40);
        assert_eq!(s.steps.len(), 40, "seed {seed}");
        assert!((2..=3).contains(&s.sessions));
        assert!(s.steps.iter().all(|st| st.session < s.sessions));
    }
}

#[test]
fn nothing_forbidden_is_ever_generated() {
    for seed in 0..300 {
        for step in generate(seed, 40).steps {
            assert!(forbidden(&step).is_none(), "seed {seed}: {step}");
        }
    }
}

#[test]
fn the_crashing_ttl_create_is_refused() {
    let step = Step {
        session: 0,
        action: Action::Request(Request::CreateTTL(CreateTTLRequest {
            path: format!("{ROOT}/a"),
            data: None,
            acl: Vec::new(),
            flags: 0,
            ttl: -1,
        })),
    };
    assert!(forbidden(&step).is_some());
    assert!(crashing_ttl(3, -5));
    assert!(
        !crashing_ttl(5, -5),
        "a TTL mode with a bad TTL is an ordinary BadArguments"
    );
    assert!(!crashing_ttl(0, 100));
}

#[test]
fn without_reap_blocks_no_step_waits_for_the_reaper() {
    let waits = |reap| {
        (0..300)
            .flat_map(|seed| generate_with(seed, 40, reap).steps)
            .filter(|s| matches!(s.action, Action::AwaitDeleted(_)))
            .count()
    };
    assert!(waits(true) > 0, "the reap block is generated at all");
    assert_eq!(waits(false), 0);
}

#[test]
fn every_operation_family_is_generated() {
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..300 {
        for step in generate(seed, 40).steps {
            let name = match &step.action {
                Action::Request(r) => r.op_code().name().to_string(),
                other => format!("{other:?}")
                    .split(['(', ' '])
                    .next()
                    .unwrap_or("")
                    .to_string(),
            };
            seen.insert(name);
        }
    }
    for name in [
        "Create",
        "Create2",
        "CreateContainer",
        "CreateTTL",
        "Delete",
        "Exists",
        "GetData",
        "SetData",
        "GetACL",
        "SetACL",
        "GetChildren",
        "GetChildren2",
        "Sync",
        "Multi",
        "MultiRead",
        "CheckWatches",
        "RemoveWatches",
        "AddWatch",
        "SetWatches",
        "SetWatches2",
        "Auth",
        "WhoAmI",
        "GetEphemerals",
        "GetAllChildrenNumber",
        "Sasl",
        "Reconfig",
        "Reconnect",
        "BadPasswordReconnect",
        "CloseSession",
        "AwaitDeleted",
    ] {
        assert!(seen.contains(name), "{name} never generated: {seen:?}");
    }
}

#[test]
fn rooting_replaces_the_placeholder_only_at_the_front() {
    let step = Step {
        session: 1,
        action: Action::AwaitDeleted(format!("{ROOT}/q")),
    };
    assert_eq!(
        step.rooted("/oracle-1"),
        Step {
            session: 1,
            action: Action::AwaitDeleted("/oracle-1/q".into()),
        }
    );
    let odd = Step {
        session: 0,
        action: Action::AwaitDeleted("noslash".into()),
    };
    assert_eq!(odd.rooted("/oracle-1"), odd);
}

fn context() -> Context {
    Context {
        start_zxid: 100,
        root: "/oracle-x".into(),
        sessions: HashMap::from([(0x1234, "s0.0".to_string())]),
    }
}

fn reply(zxid: i64, body: &Response) -> Vec<u8> {
    let mut buf = Vec::new();
    let header = ReplyHeader {
        xid: 1,
        zxid,
        err: 0,
    };
    encode_reply(&header, Some(body), &mut buf);
    buf
}

#[test]
fn stats_lose_times_and_session_ids_and_keep_zxids_relative() {
    let stat = |ctime, owner| Stat {
        czxid: 103,
        mzxid: 104,
        ctime,
        mtime: ctime + 5,
        version: 1,
        cversion: 0,
        aversion: 0,
        ephemeral_owner: owner,
        data_length: 2,
        num_children: 0,
        pzxid: 50,
    };
    let ctx = context();
    let created = |ctime, owner| {
        Response::Create2(Create2Response {
            path: "/oracle-x/a".into(),
            stat: stat(ctime, owner),
        })
    };
    let a = ctx.frame(
        &reply(104, &created(1_000, 0x1234)),
        Some(shepherd_protocol::OpCode::Create2),
    );
    let b = ctx.frame(
        &reply(104, &created(9_999, 0x1234)),
        Some(shepherd_protocol::OpCode::Create2),
    );
    assert_eq!(a, b, "times are not compared");
    assert!(a.contains("zxid=+4"), "{a}");
    assert!(a.contains("czxid=+3 mzxid=+4 pzxid=pre"), "{a}");
    assert!(a.contains("owner=s0.0"), "{a}");
    assert!(a.contains("{root}/a"), "{a}");
    let other_owner = ctx.frame(
        &reply(104, &created(1_000, 0x9999)),
        Some(shepherd_protocol::OpCode::Create2),
    );
    assert_ne!(a, other_owner, "an owner outside the sequence is kept");
    let other_version = ctx.frame(
        &reply(
            104,
            &Response::Create2(Create2Response {
                path: "/oracle-x/a".into(),
                stat: Stat {
                    version: 2,
                    ..stat(1_000, 0x1234)
                },
            }),
        ),
        Some(shepherd_protocol::OpCode::Create2),
    );
    assert_ne!(a, other_version, "versions are compared");
}

#[test]
fn unordered_lists_are_sorted_and_ordered_fields_are_not() {
    let ctx = context();
    let children = |names: &[&str]| {
        reply(
            101,
            &Response::GetChildren(GetChildrenResponse {
                children: names.iter().map(|s| s.to_string()).collect(),
            }),
        )
    };
    let op = Some(shepherd_protocol::OpCode::GetChildren);
    assert_eq!(
        ctx.frame(&children(&["b", "a"]), op),
        ctx.frame(&children(&["a", "b"]), op)
    );
    assert_ne!(
        ctx.frame(&children(&["a"]), op),
        ctx.frame(&children(&["a", "b"]), op)
    );
    let who = |ids: &[(&str, &str)]| {
        reply(
            101,
            &Response::WhoAmI(WhoAmIResponse {
                client_info: ids
                    .iter()
                    .map(|(s, u)| ClientInfo {
                        auth_scheme: s.to_string(),
                        user: u.to_string(),
                    })
                    .collect(),
            }),
        )
    };
    let op = Some(shepherd_protocol::OpCode::WhoAmI);
    assert_eq!(
        ctx.frame(&who(&[("ip", "127.0.0.1"), ("digest", "u1")]), op),
        ctx.frame(&who(&[("digest", "u1"), ("ip", "127.0.0.1")]), op)
    );
}

#[test]
fn error_bodies_and_undecodable_frames_are_compared_byte_for_byte() {
    let ctx = context();
    let header = ReplyHeader {
        xid: 1,
        zxid: 101,
        err: -5,
    };
    let mut bare = Vec::new();
    encode_reply(&header, None, &mut bare);
    let mut with_body = bare.clone();
    with_body.extend_from_slice(&[0xff; 9]);
    let op = Some(shepherd_protocol::OpCode::MultiRead);
    assert_ne!(ctx.frame(&bare, op), ctx.frame(&with_body, op));
    assert!(ctx.frame(&bare, op).contains("MarshallingError"));
    // A CESU-8 surrogate pair where UTF-8 is expected: only `NON_BMP` makes it read the same
    // (docs/compatibility.md lists the encoding as a deliberate difference).
    let mut event = Vec::new();
    let path = "/oracle-x/\u{1F600}".to_string();
    encode_event(
        -1,
        &WatcherEvent {
            event_type: EventType::NodeDeleted,
            state: KeeperState::SyncConnected,
            path,
        },
        &mut event,
    );
    let mut cesu = event.clone();
    let at = cesu.len() - 4;
    cesu.truncate(at);
    cesu.extend_from_slice(&[0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]);
    let len_at = cesu.len() - "/oracle-x/".len() - 6 - 4;
    let len = ("/oracle-x/".len() + 6) as i32;
    cesu[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
    assert_eq!(ctx.frame(&event, None), ctx.frame(&cesu, None));
    assert!(ctx.frame(&cesu, None).contains('\u{FFFD}'));
}

#[test]
fn the_first_difference_is_found_in_setup_or_at_its_step() {
    let t = |setup: &[&str], steps: &[&[&str]]| Transcript {
        setup: setup.iter().map(|s| s.to_string()).collect(),
        steps: steps
            .iter()
            .map(|l| l.iter().map(|s| s.to_string()).collect())
            .collect(),
    };
    let a = t(&["c"], &[&["x"], &["y"], &["z"]]);
    assert_eq!(first_difference(&a, &a.clone()), None);
    assert_eq!(
        first_difference(&a, &t(&["c"], &[&["x"], &["Y"], &["z"]])),
        Some(Point::Step(1))
    );
    assert_eq!(
        first_difference(&a, &t(&["c"], &[&["x"], &["y"]])),
        Some(Point::Step(2))
    );
    assert_eq!(
        first_difference(&a, &t(&["C"], &[&["x"], &["y"], &["z"]])),
        Some(Point::Setup)
    );
}

/// Fails when every one of `needed` is in the candidate; counts its probes.
struct Needs {
    needed: Vec<u32>,
    probes: usize,
}

impl Probe<u32> for Needs {
    async fn fails(&mut self, candidate: &[u32]) -> bool {
        self.probes += 1;
        self.needed.iter().all(|n| candidate.contains(n))
    }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
        .block_on(f)
}

#[test]
fn the_shrinker_finds_the_minimal_failing_steps() {
    let mut probe = Needs {
        needed: vec![3, 17, 31],
        probes: 0,
    };
    let shrunk = block_on(shrink((0..40).collect(), &mut probe, 500));
    assert_eq!(shrunk.items, vec![3, 17, 31]);
    assert_eq!(shrunk.probes, probe.probes);
    let mut one = Needs {
        needed: vec![7],
        probes: 0,
    };
    assert_eq!(
        block_on(shrink((0..40).collect(), &mut one, 500)).items,
        vec![7]
    );
}

#[test]
fn the_shrinker_keeps_order_and_respects_its_probe_budget() {
    let mut probe = Needs {
        needed: vec![30, 2],
        probes: 0,
    };
    let shrunk = block_on(shrink((0..40).collect(), &mut probe, 500));
    assert_eq!(
        shrunk.items,
        vec![2, 30],
        "a sub-list, in the input's order"
    );
    let mut bounded = Needs {
        needed: vec![1, 2, 3, 4, 5],
        probes: 0,
    };
    let shrunk = block_on(shrink((0..1000).collect(), &mut bounded, 5));
    assert_eq!(bounded.probes, 5);
    assert!(shrunk.items.len() <= 1000);
    for n in [1, 2, 3, 4, 5] {
        assert!(shrunk.items.contains(&n), "what it returns still fails");
    }
}

#[test]
fn a_probe_that_never_fails_leaves_the_input() {
    let mut probe = Needs {
        needed: vec![1000],
        probes: 0,
    };
    let shrunk = block_on(shrink((0..10).collect(), &mut probe, 100));
    assert_eq!(shrunk.items, (0..10).collect::<Vec<_>>());
}

#[test]
fn a_character_outside_the_bmp_matches_its_cesu8_echo_and_nothing_else() {
    let ctx = context();
    let sync = |path: &str| {
        reply(
            101,
            &Response::Sync(shepherd_protocol::SyncResponse { path: path.into() }),
        )
    };
    let op = Some(shepherd_protocol::OpCode::Sync);
    let ours = sync("/a\u{1F600}");
    // ZooKeeper's echo of the same path: the string's length prefix grows from 6 to 8 bytes and
    // U+1F600 is written as its two surrogates, 3 bytes each.
    let mut zookeeper = sync("/a");
    let at = zookeeper.len() - 2 - 4; // the string's length prefix
    zookeeper[at..at + 4].copy_from_slice(&8i32.to_be_bytes());
    zookeeper.extend_from_slice(&[0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]);
    assert_eq!(ctx.frame(&ours, op), ctx.frame(&zookeeper, op));
    assert_ne!(
        ctx.frame(&sync("/a\u{1F601}x"), op),
        ctx.frame(&zookeeper, op)
    );
    assert_ne!(
        ctx.frame(&sync("/b\u{1F600}"), op),
        ctx.frame(&zookeeper, op)
    );
}

#[test]
fn session_close_events_are_sorted_per_session_run_and_nothing_else_moves() {
    let mut lines: Vec<String> = [
        "s1: event NodeDeleted SyncConnected {root}/b zxid=-1",
        "s1: event NodeDeleted SyncConnected {root}/a zxid=-1",
        "s1: CloseSession Ok zxid=+3",
        "s0: event NodeDeleted SyncConnected {root}/b zxid=-1",
        "s0: event NodeChildrenChanged SyncConnected {root} zxid=-1",
        "s2: event NodeDeleted SyncConnected {root}/a zxid=-1",
        "s0: Ping Ok zxid=+3",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    super::run::session_close_events(&mut lines);
    assert_eq!(
        lines,
        [
            "s1: event NodeDeleted SyncConnected {root}/a zxid=-1",
            "s1: event NodeDeleted SyncConnected {root}/b zxid=-1",
            "s1: CloseSession Ok zxid=+3",
            "s0: event NodeChildrenChanged SyncConnected {root} zxid=-1",
            "s0: event NodeDeleted SyncConnected {root}/b zxid=-1",
            "s2: event NodeDeleted SyncConnected {root}/a zxid=-1",
            "s0: Ping Ok zxid=+3",
        ]
    );
}
