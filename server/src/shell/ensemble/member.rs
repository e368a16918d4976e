//! The client endpoints of one server, as the members of an in-process ensemble: each member's
//! address, whether it listens, its accept loop, and which member leads.
//!
//! A single server is an ensemble of one. Every member serves the same shared state (one core,
//! one session table, one zxid order); a member is only a listener and the connections that
//! came in on it. Invariants:
//! * a member's address never changes: stopping and starting it binds the same port again;
//! * a member's token is a child of the server's generation token, so that a restart or a
//!   failed log drops every member at once, and stopping one member drops only its own;
//! * at most one member leads, and only while the ensemble serves ([`Phase`]): a leader backed
//!   by a quorum of members that are up. Losing the leader or the quorum puts every member into
//!   LOOKING until an election ends (`handle/members.rs` runs it); leadership is sticky, as after
//!   a ZooKeeper election: a leader keeps leading until it is lost, and then the highest id
//!   still up takes over (FastLeaderElection's choice, all members having every zxid: they
//!   share one core).
//!
//! The quorum and election ports printed in `/zookeeper/config` are never served: they are
//! real free loopback ports, bound (so nothing else takes them and they cannot be mistaken for
//! a client port) but never listening, so a connection to one is refused.

use std::fmt::Write;
use std::io;
use std::net::{IpAddr, SocketAddr};

use parking_lot::Mutex;
use tokio::net::TcpSocket;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// What a member is doing, as [`Members::state`](crate::Members::state)
/// tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MemberState {
    /// Listening and answering.
    Up,
    /// Not listening; its connections are closed (sessions live on, their timeouts running).
    Stopped,
    /// Listening, but neither reading nor writing any of its connections, new ones included.
    Partitioned,
    /// Cut off from its peers, not from its clients: after `syncLimit` it goes LOOKING alone.
    Isolated,
}

/// What a member's four-letter words and AdminServer report as its mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// A single server: ZooKeeper's standalone mode.
    Standalone,
    Leader,
    Follower,
    /// An ensemble member while an election runs, or alone after an isolation.
    Looking,
}

impl Role {
    /// ZooKeeper's name for it (`ServerStats.getServerState`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Role::Standalone => "standalone",
            Role::Leader => "leader",
            Role::Follower => "follower",
            Role::Looking => "looking",
        }
    }
}

/// Whether the ensemble serves, and who leads. A single server always serves, standalone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Phase {
    /// The leader's id; 0 while looking.
    pub(crate) leader: u64,
    /// Every member is LOOKING: none serves a client, and no session expires.
    pub(crate) looking: bool,
    /// Counts the elections begun: an election's end applies only to the round it began in.
    pub(crate) round: u64,
    /// The member a forced election makes leader (`Members::elect`), 0 for the election's own
    /// choice.
    pub(crate) candidate: u64,
    /// Counts the election timers armed: only the latest may end the election, so that it
    /// ends the election time after the last change that called for one.
    pub(crate) timer: u64,
}

/// One member's run state.
struct Run {
    /// Stopped by [`Members::stop`], or lost (its port could not be bound again after a
    /// restart).
    stopped: bool,
    /// Stopped because a restart could not bind its port again: the next restart tries again.
    lost: bool,
    /// Its listener's and connections' token, a child of the generation token.
    token: CancellationToken,
    /// Its accept loop, while listening.
    accepting: Option<JoinHandle<()>>,
    /// Partitioned or isolated: cut off from its peers.
    cut: bool,
    /// Cut off from its peers, not its clients (`Members::isolate`).
    isolated: bool,
    /// Its peers have counted it lost: partitioned or isolated for `syncLimit`. Only then does
    /// it stop counting towards a quorum, and an isolated member go LOOKING by itself.
    noticed: bool,
    /// Counts its partitions and isolations, so that a `syncLimit` timer acts only on its own.
    episode: u64,
}

/// One member.
struct Member {
    id: u64,
    addr: SocketAddr,
    /// (quorum port, election port): reserved, never served.
    peer_ports: (u16, u16),
    run: Mutex<Run>,
}

/// Every member of one server, ids `1..=n`.
pub(crate) struct Members {
    members: Vec<Member>,
    /// Who leads, or LOOKING. Meaningless for a single server.
    phase: Mutex<Phase>,
    /// The sockets holding the quorum and election ports: bound, never listening.
    _reserved: Vec<TcpSocket>,
    /// Held across a member's stop or start and across a whole restart, so that they run one
    /// at a time whichever handle asks.
    pub(crate) changes: tokio::sync::Mutex<()>,
}

impl Members {
    /// Members on `addrs` (member `i + 1` on `addrs[i]`), none listening yet, each with a token
    /// that is a child of `generation`. With more than one, two loopback ports are reserved
    /// per member for the quorum and election addresses `/zookeeper/config` prints.
    ///
    /// # Errors
    /// A port could not be reserved.
    pub(crate) fn new(addrs: &[SocketAddr], generation: &CancellationToken) -> io::Result<Members> {
        let mut reserved = Vec::new();
        let mut members = Vec::with_capacity(addrs.len());
        for (i, addr) in addrs.iter().enumerate() {
            let peer_ports = if addrs.len() > 1 {
                (
                    reserve(addr.ip(), &mut reserved)?,
                    reserve(addr.ip(), &mut reserved)?,
                )
            } else {
                (0, 0)
            };
            members.push(Member {
                id: i as u64 + 1,
                addr: *addr,
                peer_ports,
                run: Mutex::new(Run {
                    stopped: true,
                    lost: false,
                    token: generation.child_token(),
                    accepting: None,
                    cut: false,
                    isolated: false,
                    noticed: false,
                    episode: 0,
                }),
            });
        }
        Ok(Members {
            members,
            phase: Mutex::new(Phase {
                leader: 0,
                looking: false,
                round: 0,
                candidate: 0,
                timer: 0,
            }),
            _reserved: reserved,
            changes: tokio::sync::Mutex::new(()),
        })
    }

    fn get(&self, id: u64) -> Option<&Member> {
        let index = usize::try_from(id.checked_sub(1)?).ok()?;
        self.members.get(index)
    }

    /// How many members there are (at least 1).
    pub(crate) fn len(&self) -> usize {
        self.members.len()
    }

    /// Every member's id, ascending.
    pub(crate) fn ids(&self) -> Vec<u64> {
        self.members.iter().map(|m| m.id).collect()
    }

    /// A member's client address.
    pub(crate) fn addr(&self, id: u64) -> Option<SocketAddr> {
        self.get(id).map(|m| m.addr)
    }

    /// Whether a member is stopped (`None`: no such member).
    pub(crate) fn is_stopped(&self, id: u64) -> Option<bool> {
        self.get(id).map(|m| m.run.lock().stopped)
    }

    /// A member's current token while it listens: what its new connections are children of.
    pub(crate) fn token(&self, id: u64) -> Option<CancellationToken> {
        let run = self.get(id)?.run.lock();
        (!run.stopped && !run.token.is_cancelled()).then(|| run.token.clone())
    }

    /// Marks a member listening under `token` with `accepting` as its accept loop.
    pub(crate) fn started(&self, id: u64, token: CancellationToken, accepting: JoinHandle<()>) {
        if let Some(member) = self.get(id) {
            let mut run = member.run.lock();
            run.stopped = false;
            run.lost = false;
            run.token = token;
            run.accepting = Some(accepting);
        }
    }

    /// Marks a member stopped (`lost`: by a failed rebind) and cancels its token. Returns its
    /// accept loop, to be awaited until the listener is dropped.
    pub(crate) fn stop(&self, id: u64, lost: bool) -> Option<JoinHandle<()>> {
        let member = self.get(id)?;
        let mut run = member.run.lock();
        run.stopped = true;
        run.lost = lost;
        run.token.cancel();
        run.accepting.take()
    }

    /// Every accept loop, taken (a restart cancels them all through the generation token).
    pub(crate) fn take_accepting(&self) -> Vec<JoinHandle<()>> {
        self.members
            .iter()
            .filter_map(|m| m.run.lock().accepting.take())
            .collect()
    }

    /// The members a restart listens again for: those not stopped, and those lost by an
    /// earlier restart.
    pub(crate) fn to_relisten(&self) -> Vec<u64> {
        self.members
            .iter()
            .filter(|m| {
                let run = m.run.lock();
                !run.stopped || run.lost
            })
            .map(|m| m.id)
            .collect()
    }

    /// Who leads, or whether every member is looking.
    pub(crate) fn phase(&self) -> Phase {
        *self.phase.lock()
    }

    /// Whether the members serve clients: always for a single server; for an ensemble, while
    /// a leader leads.
    pub(crate) fn serving(&self) -> bool {
        self.members.len() <= 1 || !self.phase.lock().looking
    }

    /// Whether member `id` serves its clients: the ensemble serves, and it is not LOOKING
    /// alone after an isolation its peers have noticed.
    pub(crate) fn serves(&self, id: u64) -> bool {
        // The serving phase first: a single server answers without a lock of its member.
        self.serving()
            && !self.get(id).is_some_and(|m| {
                let run = m.run.lock();
                run.isolated && run.noticed
            })
    }

    /// Whether member `id` is cut off from its peers.
    pub(crate) fn is_isolated(&self, id: u64) -> bool {
        self.get(id).is_some_and(|m| m.run.lock().isolated)
    }

    /// Whether member `id`'s peers have counted it lost (partitioned or isolated that long).
    pub(crate) fn is_noticed(&self, id: u64) -> bool {
        self.get(id).is_some_and(|m| m.run.lock().noticed)
    }

    /// Begins a partition (`isolated` false) or an isolation of member `id`, not yet noticed by
    /// its peers. Returns the episode, for [`Members::notice`].
    pub(crate) fn cut_off(&self, id: u64, isolated: bool) -> u64 {
        let Some(member) = self.get(id) else {
            return 0;
        };
        let mut run = member.run.lock();
        run.cut = true;
        run.isolated |= isolated;
        run.noticed = false;
        run.episode += 1;
        run.episode
    }

    /// `syncLimit` has passed in `episode`: its peers count member `id` lost. False when the
    /// episode is over (healed, or cut off again since).
    pub(crate) fn notice(&self, id: u64, episode: u64) -> bool {
        let Some(member) = self.get(id) else {
            return false;
        };
        let mut run = member.run.lock();
        if !run.cut || run.episode != episode {
            return false;
        }
        run.noticed = true;
        true
    }

    /// Ends a partition or an isolation. Returns whether its peers had counted it lost.
    pub(crate) fn rejoin(&self, id: u64) -> bool {
        let Some(member) = self.get(id) else {
            return false;
        };
        let mut run = member.run.lock();
        let noticed = run.noticed;
        run.cut = false;
        run.isolated = false;
        run.noticed = false;
        run.episode += 1;
        noticed
    }

    /// The cut-off members their peers have not noticed yet, with their episodes: a restart
    /// arms their `syncLimit` timers again.
    pub(crate) fn unnoticed(&self) -> Vec<(u64, u64)> {
        self.members
            .iter()
            .filter_map(|m| {
                let run = m.run.lock();
                (run.cut && !run.noticed).then_some((m.id, run.episode))
            })
            .collect()
    }

    /// Arms an election timer; only the latest armed may end the election.
    pub(crate) fn arm(&self) -> u64 {
        let mut phase = self.phase.lock();
        phase.timer += 1;
        phase.timer
    }

    /// Starts an election, unless one is under way: every member is LOOKING from now on.
    /// `candidate` (0 for none) is the member it is to make leader, replacing any earlier
    /// choice of the same election when not 0. Returns the election's round, and whether this
    /// call began it.
    pub(crate) fn look(&self, candidate: u64) -> (u64, bool) {
        let mut phase = self.phase.lock();
        if candidate != 0 {
            phase.candidate = candidate;
        }
        if phase.looking {
            return (phase.round, false);
        }
        phase.looking = true;
        phase.leader = 0;
        phase.round += 1;
        (phase.round, true)
    }

    /// Ends the election of `round`, by its latest `timer`, with `leader` leading. False when
    /// that election is over already (another ended it, or a later one began) or a later timer
    /// was armed.
    pub(crate) fn elected(&self, round: u64, timer: u64, leader: u64) -> bool {
        let mut phase = self.phase.lock();
        if !phase.looking || phase.round != round || phase.timer != timer {
            return false;
        }
        phase.looking = false;
        phase.leader = leader;
        phase.candidate = 0;
        true
    }

    /// Makes `leader` lead at once, with no election: a fresh ensemble's start, whose members
    /// agree before any client can connect.
    pub(crate) fn lead(&self, leader: u64) {
        let mut phase = self.phase.lock();
        phase.looking = false;
        phase.leader = leader;
    }

    /// The leading member, while one leads.
    pub(crate) fn leader(&self) -> Option<u64> {
        let phase = self.phase.lock();
        (!phase.looking && phase.leader != 0).then_some(phase.leader)
    }

    /// What `member` reports as its mode.
    pub(crate) fn role(&self, member: u64) -> Role {
        if self.members.len() <= 1 {
            Role::Standalone
        } else if !self.serves(member) {
            Role::Looking
        } else if self.leader() == Some(member) {
            Role::Leader
        } else {
            Role::Follower
        }
    }

    /// A member's (quorum, election) ports.
    pub(crate) fn peer_ports(&self, id: u64) -> Option<(u16, u16)> {
        self.get(id).map(|m| m.peer_ports)
    }

    /// The membership as ZooKeeper 3.8 writes it to `/zookeeper/config` and prints it after
    /// `membership:` in `conf` (`QuorumMaj.toString`): one
    /// `server.<id>=<host>:<quorumPort>:<electionPort>:participant;<host>:<clientPort>` line
    /// per member, then `version=0` (a static configuration's, reconfig being off), with no
    /// newline at the end. Empty for a single server, whose `/zookeeper/config` is empty.
    pub(crate) fn dynamic_config(&self) -> String {
        let mut out = String::new();
        if self.members.len() <= 1 {
            return out;
        }
        for m in &self.members {
            let peer_host = host_string(concrete(m.addr.ip()));
            let client_host = host_string(m.addr.ip());
            let (quorum, election) = m.peer_ports;
            // Writing to a String cannot fail.
            let _ = writeln!(
                out,
                "server.{}={peer_host}:{quorum}:{election}:participant;{client_host}:{}",
                m.id,
                m.addr.port()
            );
        }
        out.push_str("version=0");
        out
    }
}

/// A host as ZooKeeper prints it in a server line: IPv6 in brackets.
fn host_string(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

/// The loopback address for a wildcard one: where the reserved peer ports are bound.
fn concrete(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
        ip => ip,
    }
}

/// Binds a free port on `ip` (loopback for a wildcard) without listening, keeps the socket in
/// `held`, and returns the port: it is only printed, never served.
fn reserve(ip: IpAddr, held: &mut Vec<TcpSocket>) -> io::Result<u16> {
    let ip = concrete(ip);
    let socket = match ip {
        IpAddr::V4(_) => TcpSocket::new_v4()?,
        IpAddr::V6(_) => TcpSocket::new_v6()?,
    };
    socket.bind(SocketAddr::new(ip, 0))?;
    let port = socket.local_addr()?.port();
    held.push(socket);
    Ok(port)
}
