//! The seeded generator: from a seed, a [`Sequence`] of steps over every operation the server
//! serves, every create mode, valid and invalid ACLs, paths and versions, watches of every kind,
//! data up to the frame limit, auth, closeSession and reconnects, from two or three sessions.
//!
//! Invariants: the same seed gives the same sequence (`StdRng::seed_from_u64`, nothing else
//! random); every path is under [`ROOT`] or is invalid, so a sequence never reads what other
//! sequences or earlier runs left; nothing [`forbidden`] is produced. Two more rules keep the
//! answers independent of timing:
//! * a container (opcode createContainer, or flags 4) is only ever created at a `k` name, and no
//!   `k` name is ever given a child, so ZooKeeper's reaper (which runs on its own clock) never
//!   finds one empty after having had a child; valid TTLs are an hour or more, so none expires
//!   during a sequence;
//! * the reaper is exercised only by the reap block ([`Action::AwaitDeleted`]), at names (`q`,
//!   `r`) nothing else uses, and waited for on an event.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shepherd_protocol::{
    Acl, AddWatchRequest, AuthPacket, CheckVersionRequest, CreateRequest, CreateTTLRequest,
    DEFAULT_MAX_BUFFER, DeleteRequest, Id, MultiOp, MultiRequest, PathRequest, PathWatchRequest,
    ReconfigRequest, RemoveWatchesRequest, Request, SaslToken, SetACLRequest, SetDataRequest,
    SetWatches, SetWatches2,
};

use super::known::forbidden;
use super::step::{Action, ROOT, Sequence, Step};

/// `digest` ids of the two users the sequences authenticate as: `user:base64(sha1(user:pass))`.
pub const DIGEST_IDS: [(&str, &str); 2] = [
    ("u1:p1", "u1:fpT/y03U+EjItKZOSLGvjnJlyng="),
    ("u2:p2", "u2:o9NxcCGDPOlcV7JVhmKHOf5ctVE="),
];

/// Node names children may be created under (and below), relative to the root.
const NODES: &[&str] = &["", "/a", "/b", "/a/x", "/a/y", "/b/x", "/a/x/z", "/t"];
/// Names whose nodes may be containers: never given a child.
const CONTAINERS: &[&str] = &["/k", "/a/k", "/b/k"];
/// Sequential names that the creates under `/a` and `/b` may produce.
const SEQUENTIALS: &[&str] = &[
    "/a0000000003",
    "/a/x0000000000",
    "/a/y0000000001",
    "/b/x0000000002",
];
/// Paths the server must refuse or treat specially; the non-BMP one is valid. The empty path
/// comes first: only creates use it.
const ODD_PATHS: &[&str] = &[
    "",
    "noslash",
    "{root}/",
    "{root}//a",
    "{root}/.",
    "{root}/..",
    "{root}/a/./x",
    "{root}/a/../b",
    "{root}/a\u{0}b",
    "{root}/\u{1F600}",
    "{root}/é",
    "{root}/a/\u{1}",
];

/// A generator state: the seeded source and the sequence's shape.
struct Gen {
    rng: StdRng,
    sessions: usize,
    reap: bool,
}

/// The sequence of `ops` steps for `seed`.
pub fn generate(seed: u64, ops: usize) -> Sequence {
    generate_with(seed, ops, true)
}

/// [`generate`], with the reap blocks left out when `reap` is false (to survey other
/// differences while the reaper's is known, without waiting for it). The other steps are drawn
/// as they would be: the same seed gives the same sequence minus those blocks.
pub fn generate_with(seed: u64, ops: usize, reap: bool) -> Sequence {
    let mut g = Gen {
        rng: StdRng::seed_from_u64(seed),
        sessions: 2,
        reap,
    };
    g.sessions = if g.rng.random_bool(0.5) { 2 } else { 3 };
    let mut steps = Vec::with_capacity(ops + 4);
    // Bounded: each turn adds at least one step, or gives up after enough refusals.
    let mut refusals = 0;
    while steps.len() < ops && refusals < 1000 {
        let block = g.block(ops - steps.len());
        if block.iter().any(|s| forbidden(s).is_some()) {
            refusals += 1;
            continue;
        }
        if g.reap
            || !block
                .iter()
                .any(|s| matches!(s.action, Action::AwaitDeleted(_)))
        {
            steps.extend(block);
        } else {
            refusals += 1;
        }
    }
    Sequence {
        seed,
        sessions: g.sessions,
        steps,
    }
}

impl Gen {
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.rng.random_range(0..items.len())]
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    fn session(&mut self) -> usize {
        self.rng.random_range(0..self.sessions)
    }

    fn rooted(name: &str) -> String {
        format!("{ROOT}{name}")
    }

    /// A path for reads and writes of existing nodes.
    fn path(&mut self) -> String {
        let roll = self.rng.random_range(0..100);
        if roll < 70 {
            let name = self.pick(NODES);
            Self::rooted(name)
        } else if roll < 78 {
            let name = self.pick(CONTAINERS);
            Self::rooted(name)
        } else if roll < 86 {
            let name = self.pick(SEQUENTIALS);
            Self::rooted(name)
        } else {
            // Not the empty path: ZooKeeper reads it as `/`, whose stat and children depend on
            // everything else the server holds.
            self.pick(&ODD_PATHS[1..]).to_string()
        }
    }

    /// A path for a create of a node that may have children.
    fn create_path(&mut self) -> String {
        if self.chance(0.1) {
            return self.pick(ODD_PATHS).to_string();
        }
        let name = self.pick(&NODES[1..]);
        Self::rooted(name)
    }

    fn data(&mut self) -> Option<Vec<u8>> {
        let roll = self.rng.random_range(0..1000);
        if roll < 40 {
            None
        } else if roll < 100 {
            Some(Vec::new())
        } else if roll < 990 {
            let n = self.rng.random_range(0..1000u32);
            Some(format!("d{n}").into_bytes())
        } else {
            // Rare: around the frame limit (jute.maxbuffer), above and below it.
            let sizes = [
                DEFAULT_MAX_BUFFER - 1024,
                DEFAULT_MAX_BUFFER - 100,
                DEFAULT_MAX_BUFFER - 40,
                DEFAULT_MAX_BUFFER,
                DEFAULT_MAX_BUFFER + 2048,
            ];
            let size = sizes[self.rng.random_range(0..sizes.len())];
            Some(vec![b'x'; size])
        }
    }

    fn version(&mut self) -> i32 {
        match self.rng.random_range(0..10) {
            0..=4 => -1,
            5 => 0,
            6 => 1,
            7 => 2,
            8 => -2,
            _ => 7,
        }
    }

    fn one_acl(&mut self) -> Acl {
        let perms = match self.rng.random_range(0..12) {
            0..=6 => 31,
            7 => 1,
            8 => 1 | 4 | 8,
            9 => 0,
            10 => 64,
            _ => -1,
        };
        let (scheme, id) = match self.rng.random_range(0..22) {
            0..=5 => ("world", "anyone".to_string()),
            6 => ("world", "nobody".to_string()),
            7 | 8 => ("auth", String::new()),
            9 => ("digest", DIGEST_IDS[0].1.to_string()),
            10 => ("digest", DIGEST_IDS[1].1.to_string()),
            11 => ("digest", "nocolon".to_string()),
            12 => ("ip", "127.0.0.1".to_string()),
            13 => ("ip", "127.0.0.0/8".to_string()),
            14 => ("ip", "+127.0.0.1".to_string()),
            15 => ("ip", "10.0.0.0/-0".to_string()),
            16 => ("ip", "::1".to_string()),
            17 => ("ip", "127.0.0.1/33".to_string()),
            18 => ("ip", "1.2.3".to_string()),
            19 => ("ip", "10.1.2.3".to_string()),
            20 => ("foo", "bar".to_string()),
            _ => ("", String::new()),
        };
        Acl {
            perms,
            id: Id::new(scheme, id),
        }
    }

    fn acl(&mut self) -> Vec<Acl> {
        match self.rng.random_range(0..100) {
            0..=69 => Acl::open_unsafe(),
            70..=74 => Vec::new(),
            75..=89 => vec![self.one_acl()],
            _ => vec![self.one_acl(), self.one_acl()],
        }
    }

    /// flags for a create sent with `op` (1, 15, 19 or 21): mostly the modes that opcode is
    /// for, sometimes any other, sometimes an invalid one.
    fn flags(&mut self, op: i32) -> i32 {
        let roll = self.rng.random_range(0..100);
        if roll < 8 {
            return if self.chance(0.5) { 7 } else { -1 };
        }
        if roll < 25 {
            return self.rng.random_range(0..=6);
        }
        match op {
            19 => 4,
            21 => self.rng.random_range(5..=6),
            _ => self.rng.random_range(0..=3),
        }
    }

    /// A TTL: valid ones are long (an hour or more), so none expires during a sequence.
    fn ttl(&mut self, flags: i32) -> i64 {
        let ttl = match self.rng.random_range(0..10) {
            0..=6 => 3_600_000 + self.rng.random_range(0..1000),
            7 => 0,
            8 => 0xFF_FFFF_FFFF + 1,
            _ => -5,
        };
        if ttl < 0 && !matches!(flags, 5 | 6) {
            3_600_000
        } else {
            ttl
        }
    }

    /// A create request body for opcode `op`, at a container name when it may make one.
    fn create_body(&mut self, op: i32) -> (CreateRequest, i64) {
        let flags = self.flags(op);
        let path = if op == 19 || flags == 4 {
            if self.chance(0.9) {
                let name = self.pick(CONTAINERS);
                Self::rooted(name)
            } else {
                self.pick(ODD_PATHS).to_string()
            }
        } else {
            self.create_path()
        };
        let ttl = self.ttl(flags);
        let body = CreateRequest {
            path,
            data: self.data(),
            acl: self.acl(),
            flags,
        };
        (body, ttl)
    }

    fn create(&mut self) -> Request {
        let op = [1, 15, 19, 21][self.rng.random_range(0..4)];
        let (body, ttl) = self.create_body(op);
        match op {
            1 => Request::Create(body),
            15 => Request::Create2(body),
            19 => Request::CreateContainer(body),
            _ => Request::CreateTTL(CreateTTLRequest {
                path: body.path,
                data: body.data,
                acl: body.acl,
                flags: body.flags,
                ttl,
            }),
        }
    }

    fn write_op(&mut self) -> MultiOp {
        match self.rng.random_range(0..8) {
            0 | 1 => {
                let op = [1, 15, 19, 21][self.rng.random_range(0..4)];
                let (body, ttl) = self.create_body(op);
                match op {
                    1 => MultiOp::Create(body),
                    15 => MultiOp::Create2(body),
                    19 => MultiOp::CreateContainer(body),
                    _ => MultiOp::CreateTTL(CreateTTLRequest {
                        path: body.path,
                        data: body.data,
                        acl: body.acl,
                        flags: body.flags,
                        ttl,
                    }),
                }
            }
            2 | 3 => MultiOp::Delete(DeleteRequest {
                path: self.path(),
                version: self.version(),
            }),
            4 | 5 => MultiOp::SetData(SetDataRequest {
                path: self.path(),
                data: self.data(),
                version: self.version(),
            }),
            _ => MultiOp::Check(CheckVersionRequest {
                path: self.path(),
                version: self.version(),
            }),
        }
    }

    fn read_op(&mut self) -> MultiOp {
        let r = PathWatchRequest {
            path: self.path(),
            watch: self.chance(0.3),
        };
        if self.chance(0.5) {
            MultiOp::GetData(r)
        } else {
            MultiOp::GetChildren(r)
        }
    }

    fn watch_paths(&mut self) -> Vec<String> {
        let n = self.rng.random_range(0..3);
        (0..n).map(|_| self.path()).collect()
    }

    fn path_watch(&mut self, watch_p: f64) -> PathWatchRequest {
        PathWatchRequest {
            path: self.path(),
            watch: self.chance(watch_p),
        }
    }

    fn path_only(&mut self) -> PathRequest {
        PathRequest { path: self.path() }
    }

    /// One request, by weight.
    fn request(&mut self) -> Request {
        match self.rng.random_range(0..100) {
            0..=17 => self.create(),
            18..=22 => Request::Delete(DeleteRequest {
                path: self.path(),
                version: self.version(),
            }),
            23..=28 => Request::Exists(self.path_watch(0.5)),
            29..=34 => Request::GetData(self.path_watch(0.5)),
            35..=41 => Request::SetData(SetDataRequest {
                path: self.path(),
                data: self.data(),
                version: self.version(),
            }),
            42..=44 => Request::GetACL(self.path_only()),
            45..=48 => Request::SetACL(SetACLRequest {
                path: self.path(),
                acl: self.acl(),
                version: self.version(),
            }),
            49..=51 => Request::GetChildren(self.path_watch(0.5)),
            52..=54 => Request::GetChildren2(self.path_watch(0.5)),
            55..=56 => Request::GetAllChildrenNumber(self.path_only()),
            57..=58 => Request::GetEphemerals(PathRequest {
                path: if self.chance(0.3) {
                    "/".into()
                } else {
                    self.path()
                },
            }),
            59..=60 => Request::Sync(self.path_only()),
            61..=66 => {
                let n = self.rng.random_range(0..5);
                let mut ops: Vec<MultiOp> = (0..n).map(|_| self.write_op()).collect();
                if self.chance(0.1) {
                    let at = self.rng.random_range(0..=ops.len());
                    let read = self.read_op();
                    ops.insert(at, read);
                }
                Request::Multi(MultiRequest { ops })
            }
            67..=69 => {
                let n = self.rng.random_range(1..5);
                let mut ops: Vec<MultiOp> = (0..n).map(|_| self.read_op()).collect();
                if self.chance(0.15) {
                    let at = self.rng.random_range(0..=ops.len());
                    let write = self.write_op();
                    ops.insert(at, write);
                }
                Request::MultiRead(MultiRequest { ops })
            }
            70..=73 => Request::AddWatch(AddWatchRequest {
                path: self.path(),
                mode: match self.rng.random_range(0..20) {
                    0 => 2,
                    1 => -1,
                    n => n % 2,
                },
            }),
            74..=76 => Request::CheckWatches(self.watch_selector()),
            77..=79 => Request::RemoveWatches(self.watch_selector()),
            80..=82 => {
                let since = self.rng.random_range(0..40);
                if self.chance(0.5) {
                    Request::SetWatches(SetWatches {
                        relative_zxid: since,
                        data_watches: self.watch_paths(),
                        exist_watches: self.watch_paths(),
                        child_watches: self.watch_paths(),
                    })
                } else {
                    Request::SetWatches2(SetWatches2 {
                        relative_zxid: since,
                        data_watches: self.watch_paths(),
                        exist_watches: self.watch_paths(),
                        child_watches: self.watch_paths(),
                        persistent_watches: self.watch_paths(),
                        persistent_recursive_watches: self.watch_paths(),
                    })
                }
            }
            83..=86 => {
                let (scheme, auth) = match self.rng.random_range(0..10) {
                    0..=3 => ("digest", DIGEST_IDS[0].0),
                    4..=6 => ("digest", DIGEST_IDS[1].0),
                    7 => ("digest", "nocolon"),
                    8 => ("ip", "127.0.0.1"),
                    _ => ("foo", "bar"),
                };
                Request::Auth(AuthPacket {
                    auth_type: 0,
                    scheme: scheme.into(),
                    auth: Some(auth.as_bytes().to_vec()),
                })
            }
            87..=89 => Request::WhoAmI,
            90 => Request::Sasl(SaslToken {
                token: Some(b"token".to_vec()),
            }),
            91 => Request::Reconfig(ReconfigRequest {
                joining_servers: None,
                leaving_servers: None,
                new_members: Some("server.1=127.0.0.1:2888:3888".into()),
                cur_config_id: -1,
            }),
            _ => Request::Exists(self.path_watch(0.9)),
        }
    }

    fn watch_selector(&mut self) -> RemoveWatchesRequest {
        RemoveWatchesRequest {
            path: self.path(),
            watcher_type: match self.rng.random_range(0..20) {
                0 => 0,
                1 => 4,
                2 => 5,
                3 => 6,
                n => 1 + n % 3,
            },
        }
    }

    /// The next block of steps (at most `room`, at least one).
    fn block(&mut self, room: usize) -> Vec<Step> {
        let session = self.session();
        let roll = self.rng.random_range(0..1000);
        let action = if roll < 15 {
            Action::CloseSession
        } else if roll < 40 {
            Action::Reconnect
        } else if roll < 50 {
            Action::BadPasswordReconnect
        } else if roll < 53 && room >= 4 {
            return self.reap_block();
        } else {
            Action::Request(self.request())
        };
        vec![Step { session, action }]
    }

    /// A node the reaper must delete, and the wait for it: a TTL node with a short TTL, or a
    /// container that had a child and lost it.
    fn reap_block(&mut self) -> Vec<Step> {
        let s = self.session();
        let step = |action| Step { session: s, action };
        if self.chance(0.5) {
            let path = Self::rooted("/r");
            vec![
                step(Action::Request(Request::CreateTTL(CreateTTLRequest {
                    path: path.clone(),
                    data: Some(b"ttl".to_vec()),
                    acl: Acl::open_unsafe(),
                    flags: 5,
                    ttl: self.rng.random_range(50..300),
                }))),
                step(Action::AwaitDeleted(path)),
            ]
        } else {
            let path = Self::rooted("/q");
            let child = format!("{path}/c");
            vec![
                step(Action::Request(Request::CreateContainer(CreateRequest {
                    path: path.clone(),
                    data: None,
                    acl: Acl::open_unsafe(),
                    flags: 4,
                }))),
                step(Action::Request(Request::Create(CreateRequest {
                    path: child.clone(),
                    data: None,
                    acl: Acl::open_unsafe(),
                    flags: 0,
                }))),
                step(Action::Request(Request::Delete(DeleteRequest {
                    path: child,
                    version: -1,
                }))),
                step(Action::AwaitDeleted(path)),
            ]
        }
    }
}
