//! The steps of a run and their strategies: connections opened and closed, handshakes (new
//! sessions, resumes with the right, a wrong or no password, a lastZxidSeen from the future,
//! garbage), requests well-formed, mangled or raw, fault-harness rejections, create counters
//! set near the 32-bit limit, time passing with or without a tick, and forced expiry; and the
//! server configurations a run starts from.
//!
//! Invariants: a step names connections and sessions by [`Index`] or [`Pick`], resolved only
//! when it runs, so every generated sequence is runnable whatever happened before it.

use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::strategy::Union;
use shepherd_protocol::{ErrorCode, Request};

use super::SUPER;
use super::requests::{path, request, xid};
use crate::CoreConfig;
use crate::acl::digest_identity;

/// Chooses a connection at run time: usually one bound to a live session, otherwise any
/// connection ever opened (closed ones included).
#[derive(Debug, Clone, Copy)]
pub(super) struct Pick {
    pub(super) prefer_live: bool,
    pub(super) index: Index,
}

fn pick() -> BoxedStrategy<Pick> {
    (prop::bool::weighted(0.9), any::<Index>())
        .prop_map(|(prefer_live, index)| Pick { prefer_live, index })
        .boxed()
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Password {
    Right,
    Wrong,
    Missing,
    Empty,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum LastZxid {
    Zero,
    Current,
    Ahead,
    Max,
    Negative,
}

#[derive(Debug, Clone)]
pub(super) enum Handshake {
    New(Option<Vec<u8>>),
    /// Resume one of the sessions ever created, live or not.
    Resume(Index, Password),
    Unknown(i64),
    Garbage(Vec<u8>),
}

#[derive(Debug, Clone)]
pub(super) enum Step {
    /// Accept a connection and leave it before its handshake.
    Open(u8),
    /// A handshake, on a pending connection or a new one.
    Connect {
        pending: bool,
        conn: Index,
        ip: u8,
        handshake: Handshake,
        timeout: i32,
        read_only: Option<bool>,
        last_zxid: LastZxid,
    },
    Request {
        conn: Pick,
        xid: Option<i32>,
        request: Request,
    },
    /// A header with the given opcode and an arbitrary body.
    RawOp {
        conn: Pick,
        xid: i32,
        op: i32,
        body: Vec<u8>,
    },
    /// A well-formed request cut short, or with junk after it.
    Mangled {
        conn: Pick,
        request: Request,
        cut: Index,
        junk: Vec<u8>,
    },
    /// Any bytes at all.
    Raw {
        conn: Pick,
        bytes: Vec<u8>,
    },
    /// A fault harness's rejection: the request answered with an error, not applied.
    Reject {
        conn: Pick,
        request: Request,
        err: ErrorCode,
    },
    /// A harness sets a node's create counter (near the 32-bit limit, say).
    SetCounter(String, i32),
    CloseConn(Pick),
    /// Time passes, then a tick.
    Advance(u64),
    /// Time passes and the ticker lags: requests may touch overdue sessions before they expire.
    Sleep(u64),
    Expire(Index),
}

fn handshake() -> BoxedStrategy<Handshake> {
    let password = select(vec![
        Password::Right,
        Password::Right,
        Password::Right,
        Password::Wrong,
        Password::Missing,
        Password::Empty,
    ]);
    prop_oneof![
        6 => prop_oneof![
            4 => Just(Some(vec![0u8; 16])),
            1 => Just(None),
            1 => prop::collection::vec(any::<u8>(), 0..20).prop_map(Some),
        ]
        .prop_map(Handshake::New),
        4 => (any::<Index>(), password).prop_map(|(i, p)| Handshake::Resume(i, p)),
        1 => any::<i64>().prop_map(Handshake::Unknown),
        1 => prop::collection::vec(any::<u8>(), 0..48).prop_map(Handshake::Garbage),
    ]
    .boxed()
}

pub(super) fn step() -> BoxedStrategy<Step> {
    let opcodes = select(vec![
        -11, -10, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
        22, 23, 55, 100, 101, 102, 103, 104, 105, 106, 107, 108, 1000,
    ]);
    let timeout = prop_oneof![
        4 => select(vec![0, 1, -5, 4000, 6000, 10_000, 30_000, 30_000, 30_000, 1_000_000_000]),
        1 => any::<i32>(),
    ];
    let last_zxid = select(vec![
        LastZxid::Zero,
        LastZxid::Zero,
        LastZxid::Current,
        LastZxid::Current,
        LastZxid::Ahead,
        LastZxid::Max,
        LastZxid::Negative,
    ]);
    let connect = (
        any::<bool>(),
        any::<Index>(),
        any::<u8>(),
        handshake(),
        timeout,
        prop_oneof![3 => Just(Some(false)), 1 => Just(Some(true)), 2 => Just(None)],
        last_zxid,
    )
        .prop_map(
            |(pending, conn, ip, handshake, timeout, read_only, last_zxid)| Step::Connect {
                pending,
                conn,
                ip,
                handshake,
                timeout,
                read_only,
                last_zxid,
            },
        );
    let advance = prop_oneof![
        3 => 0..=2_000u64,
        1 => 0..=10_000u64,
        1 => select(vec![0u64, 1_000, 2_000, 4_000, 10_000, 60_000, 3_600_000]),
    ];
    Union::new_weighted(vec![
        (2, any::<u8>().prop_map(Step::Open).boxed()),
        (10, connect.boxed()),
        (
            60,
            (pick(), xid(), request())
                .prop_map(|(conn, xid, request)| Step::Request { conn, xid, request })
                .boxed(),
        ),
        (
            3,
            (
                pick(),
                any::<i32>(),
                opcodes,
                prop::collection::vec(any::<u8>(), 0..24),
            )
                .prop_map(|(conn, xid, op, body)| Step::RawOp {
                    conn,
                    xid,
                    op,
                    body,
                })
                .boxed(),
        ),
        (
            3,
            (
                pick(),
                request(),
                any::<Index>(),
                prop_oneof![3 => Just(Vec::new()), 1 => prop::collection::vec(any::<u8>(), 1..6)],
            )
                .prop_map(|(conn, request, cut, junk)| Step::Mangled {
                    conn,
                    request,
                    cut,
                    junk,
                })
                .boxed(),
        ),
        (
            2,
            (pick(), prop::collection::vec(any::<u8>(), 0..24))
                .prop_map(|(conn, bytes)| Step::Raw { conn, bytes })
                .boxed(),
        ),
        (
            1,
            (
                pick(),
                request(),
                select(vec![
                    ErrorCode::ConnectionLoss,
                    ErrorCode::OperationTimeout,
                    ErrorCode::SessionExpired,
                    ErrorCode::NoNode,
                    ErrorCode::ThrottledOp,
                ]),
            )
                .prop_map(|(conn, request, err)| Step::Reject { conn, request, err })
                .boxed(),
        ),
        (
            1,
            (
                path(),
                select(vec![
                    0,
                    1,
                    9,
                    1_000_000_000,
                    i32::MAX - 1,
                    i32::MAX,
                    -1,
                    i32::MIN,
                ]),
            )
                .prop_map(|(path, value)| Step::SetCounter(path, value))
                .boxed(),
        ),
        (4, pick().prop_map(Step::CloseConn).boxed()),
        (8, advance.prop_map(Step::Advance).boxed()),
        (1, (0..=5_000u64).prop_map(Step::Sleep).boxed()),
        (2, any::<Index>().prop_map(Step::Expire).boxed()),
    ])
    .boxed()
}

/// A few server configurations: extended types on or off, a fast or slow reaper, never-used
/// containers reaped or kept.
pub(super) fn config() -> BoxedStrategy<CoreConfig> {
    (
        any::<bool>(),
        select(vec![60u32, 10_000]),
        select(vec![0u64, 3_000]),
    )
        .prop_map(|(extended, per_minute, never_used)| CoreConfig {
            super_digest: Some(digest_identity(SUPER)),
            extended_types_enabled: extended,
            container_check_interval_ms: 1_000,
            container_max_per_minute: per_minute,
            max_never_used_interval_ms: never_used,
            ..CoreConfig::default()
        })
        .boxed()
}
