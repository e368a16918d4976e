//! The methods of [`Members`], the ensemble's face of a running server: stop, start, partition,
//! heal, and what they report (docs/ensemble.md); and the election and accept loops that the
//! builder and the restart share with them.
//!
//! A server built with [`ServerBuilder::members`](crate::ServerBuilder::members) has n client
//! endpoints sharing one state (`member.rs` owns their listeners and leadership). A member is
//! only an endpoint: stopping it closes its listener and its connections, never the state, so
//! every session lives on with its timeout running and its client is free to move to another
//! member. Partitioning a member is the session freeze (`controls/freeze.rs`) applied to every
//! connection of that member, new ones included.
//!
//! Ordering: member changes run one at a time, and one at a time with
//! [`Server::restart`](crate::Server::restart) (one lock). Stop and start run as tasks of their
//! own, so dropping their futures never leaves a member half stopped.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::task::TaskTracker;

use shepherd_protocol::FourLetterWord;

use crate::core::SessionId;
use crate::shell::ensemble::member::MemberState;
use crate::shell::handle::{ControlError, Members};
use crate::shell::net::listener;
use crate::shell::observe::admin;
use crate::shell::state::shared::Shared;

impl<'a> Members<'a> {
    fn shared(&self) -> &'a Arc<Shared> {
        &self.server.shared
    }

    /// Every member's id, `1..=n` like ZooKeeper's `myid` (just `[1]` for a single server).
    pub fn ids(&self) -> Vec<u64> {
        self.shared().members.ids()
    }

    /// A member's client address, also while it is stopped (it listens on the same one again);
    /// `None` for an unknown id.
    pub fn addr(&self, id: u64) -> Option<SocketAddr> {
        self.shared().members.addr(id)
    }

    /// A member's state; `None` for an unknown id. Stopped wins over partitioned.
    pub fn state(&self, id: u64) -> Option<MemberState> {
        let stopped = self.shared().members.is_stopped(id)?;
        Some(if stopped {
            MemberState::Stopped
        } else if self.shared().frozen.is_partitioned(id) {
            MemberState::Partitioned
        } else if self.shared().members.is_isolated(id) {
            MemberState::Isolated
        } else {
            MemberState::Up
        })
    }

    /// The member the session's live connection came in on; `None` when the session is
    /// unknown or has no connection.
    pub fn of_session(&self, session: SessionId) -> Option<u64> {
        let conn = self
            .shared()
            .query(|core| core.session_connection(session))?;
        self.shared().router().connection_member(conn)
    }

    /// Runs a four-letter word as member `id` answers it, whitelist or not, whatever the
    /// member's state; `None` for an unknown member.
    pub fn four_letter_word(&self, id: u64, word: FourLetterWord) -> Option<String> {
        self.shared().members.addr(id)?;
        Some(admin::render(self.shared(), id, word))
    }

    /// Forces an election that member `id` wins, as if the leader stepped down and `id` had
    /// the most votes: every member goes LOOKING (dropping its clients, as on any loss of the
    /// leader), and after the election time `id` leads, under a new epoch, with every
    /// session's timeout started again. (ZooKeeper's own election would pick the highest id
    /// up; a test names the one it wants.) Nothing for a single server.
    ///
    /// # Errors
    /// [`ControlError::UnknownMember`]; [`ControlError::MemberUnavailable`] when `id` is
    /// stopped or counted lost by its peers, or fewer than a quorum of members are up.
    pub fn elect(&self, id: u64) -> Result<(), ControlError> {
        let shared = self.shared();
        if shared.members.is_stopped(id).is_none() {
            return Err(ControlError::UnknownMember(id));
        }
        if !votes(shared, id) {
            return Err(ControlError::MemberUnavailable(
                id,
                "it is stopped, or cut off from its peers: it cannot lead".into(),
            ));
        }
        if !has_quorum(shared, votes) {
            return Err(ControlError::MemberUnavailable(
                id,
                "no quorum is up: no election can end".into(),
            ));
        }
        force_election(shared, &self.server.tracker, id);
        Ok(())
    }

    /// What member `id` is to its peers, as `GET /members` names it: `standalone`, `leader`,
    /// `follower`, or `looking` while an election runs (or while it is alone, isolated from
    /// its peers); `None` while it is stopped, or for an unknown id.
    pub fn role(&self, id: u64) -> Option<&'static str> {
        let members = &self.shared().members;
        (!members.is_stopped(id)?).then(|| members.role(id).name())
    }

    /// Resolves once the ensemble serves: a leader leads (at once for a single server, and
    /// while no election is under way). An election ends only once a quorum is up, so with
    /// fewer this waits until members are started again.
    ///
    /// Cancellation safe. Unbounded: wrap it in a timeout.
    pub async fn until_serving(&self) {
        self.shared()
            .wait_until(|shared| shared.members.serving())
            .await;
    }

    /// The member that reports `Mode: leader`; `None` for a single server (`standalone`) or
    /// when no member is up.
    pub fn leader(&self) -> Option<u64> {
        if self.shared().members.len() <= 1 {
            return None;
        }
        self.shared().members.leader()
    }

    /// Stops a member: its listener closes (connecting to its port is refused) and its
    /// connections are dropped, so their clients see a connection loss and move to another
    /// member. Sessions live on with their timeouts running; ephemerals stay. Stopping a
    /// stopped member does nothing.
    ///
    /// If it led, or fewer than a quorum of members are left up, every member goes LOOKING,
    /// as 3.8's peers do: each drops all its clients and refuses new ones, its four-letter
    /// words say it is not serving, and no session expires. Once a quorum is up (at once, or
    /// when members are started again), an election ends after the election time
    /// ([`ServerBuilder::election_time`](crate::ServerBuilder::election_time)): the highest id
    /// up leads, the zxid epoch goes up, and every session's timeout starts again.
    ///
    /// Returns once the port is closed and none of its connections is left.
    ///
    /// Cancellation safe: the stop runs as a task of its own and completes if this future is
    /// dropped.
    ///
    /// # Errors
    /// [`ControlError::UnknownMember`].
    pub async fn stop(self, id: u64) -> Result<(), ControlError> {
        let _one_at_a_time = self.shared().members.changes.lock().await;
        if self.shared().members.is_stopped(id).is_none() {
            return Err(ControlError::UnknownMember(id));
        }
        let (shared, tracker) = (self.shared().clone(), self.server.tracker.clone());
        let task = self.server.tracker.spawn(async move {
            if let Some(accepting) = shared.members.stop(id, false) {
                // Cancelled, it returns at once and drops the listener, freeing the port.
                let _ = accepting.await;
            }
            shared.wait_member_gone(id).await;
            reconsider(&shared, &tracker);
            tracing::info!(member = id, "member stopped");
        });
        task.await
            .map_err(|e| ControlError::MemberUnavailable(id, format!("the stop failed: {e}")))
    }

    /// Starts a stopped member again on the same port. Starting a member that is up does
    /// nothing. A member that comes back does not take the lead from the current leader.
    ///
    /// Returns once it accepts connections.
    ///
    /// # Errors
    /// [`ControlError::UnknownMember`]; [`ControlError::MemberUnavailable`] when the port
    /// could not be bound again (another process took it: the member stays stopped and a
    /// later call may try again), or the server is shut down or its log failed.
    pub async fn start(self, id: u64) -> Result<(), ControlError> {
        let _one_at_a_time = self.shared().members.changes.lock().await;
        match self.shared().members.is_stopped(id) {
            None => return Err(ControlError::UnknownMember(id)),
            Some(false) => return Ok(()),
            Some(true) => {}
        }
        let (shared, tracker) = (self.shared().clone(), self.server.tracker.clone());
        // The election it may allow runs in the task too: dropping this future must not leave
        // the ensemble looking with a quorum up.
        let task = self.server.tracker.spawn(async move {
            listen(&shared, &tracker, id).await?;
            reconsider(&shared, &tracker);
            io::Result::Ok(())
        });
        let started = task
            .await
            .map_err(|e| ControlError::MemberUnavailable(id, format!("the start failed: {e}")))?;
        started.map_err(|e| ControlError::MemberUnavailable(id, e.to_string()))?;
        tracing::info!(member = id, "member started");
        Ok(())
    }

    /// Partitions a member from its clients: its connections stay open but nothing on them
    /// is read or written (no replies, no pings, no events), and new connections are accepted
    /// but their handshakes never answered, so that clients time out and move to another
    /// member. Sessions' timeouts run as usual: a client that does not move in time loses its
    /// session. Its peers count it lost after `syncLimit` (zoo.cfg's, 5 ticks by default), as they would a frozen
    /// process: if it led, or its loss leaves no quorum, every member then goes LOOKING (see
    /// [`Members::stop`]).
    ///
    /// # Errors
    /// [`ControlError::UnknownMember`].
    pub fn partition(&self, id: u64) -> Result<(), ControlError> {
        if self.shared().members.is_stopped(id).is_none() {
            return Err(ControlError::UnknownMember(id));
        }
        let shared = self.shared();
        shared.frozen.partition(id);
        if shared.members.len() > 1 {
            let episode = shared.members.cut_off(id, false);
            notice_after_sync_limit(shared, &self.server.tracker, id, episode);
        }
        Ok(())
    }

    /// Cuts a member off from its peers but not from its clients, as a network partition
    /// between the servers does. Until `syncLimit` passes it serves as before; then it
    /// goes LOOKING by itself (it drops its clients, closes new connections at the handshake,
    /// and its four-letter words say it is not serving) and no longer counts towards a quorum.
    /// If it led, the others lose their leader then and elect another among themselves, if a
    /// quorum of them is up. [`Members::heal`] joins it to its peers again.
    ///
    /// # Errors
    /// [`ControlError::UnknownMember`].
    pub fn isolate(&self, id: u64) -> Result<(), ControlError> {
        let shared = self.shared();
        if shared.members.is_stopped(id).is_none() {
            return Err(ControlError::UnknownMember(id));
        }
        if shared.members.len() <= 1 || shared.members.is_isolated(id) {
            return Ok(());
        }
        let episode = shared.members.cut_off(id, true);
        notice_after_sync_limit(shared, &self.server.tracker, id, episode);
        Ok(())
    }

    /// Ends a member's partition or isolation: what was queued on its connections is
    /// written, what their clients sent meanwhile is read and applied, in order, and an
    /// isolated member follows the leader again.
    ///
    /// # Errors
    /// [`ControlError::UnknownMember`].
    pub fn heal(&self, id: u64) -> Result<(), ControlError> {
        if self.shared().members.is_stopped(id).is_none() {
            return Err(ControlError::UnknownMember(id));
        }
        let shared = self.shared();
        shared.frozen.heal(id);
        let noticed = shared.members.rejoin(id);
        // A member back among peers that counted it lost, or in the middle of an election,
        // finds itself out of date: its clients see a connection loss, as a thawed 3.8 peer's
        // do, rather than be served without a leader.
        if noticed || !shared.members.serving() {
            shared.router().kill_where(|member| member == id);
        }
        reconsider(shared, &self.server.tracker);
        Ok(())
    }
}

/// Whether member `id` still counts for the serving ensemble: started, and not counted lost by
/// its peers (a partition or an isolation counts only once `syncLimit` has passed).
fn up(shared: &Shared, id: u64) -> bool {
    shared.members.is_stopped(id) == Some(false) && !shared.members.is_noticed(id)
}

/// Whether member `id` can take part in an election: started, and neither frozen nor cut off
/// from its peers, noticed or not (a silent peer casts no vote).
fn votes(shared: &Shared, id: u64) -> bool {
    shared.members.is_stopped(id) == Some(false)
        && !shared.frozen.is_partitioned(id)
        && !shared.members.is_isolated(id)
}

/// Whether more than half the members satisfy `counts`.
fn has_quorum(shared: &Shared, counts: fn(&Shared, u64) -> bool) -> bool {
    let members = &shared.members;
    let counted = members
        .ids()
        .into_iter()
        .filter(|id| counts(shared, *id))
        .count();
    counted > members.len() / 2
}

/// The highest id among the members that can vote: FastLeaderElection's choice among peers
/// with the same last zxid, which every member has (they share one core).
fn highest_voter(shared: &Shared) -> Option<u64> {
    shared
        .members
        .ids()
        .into_iter()
        .rev()
        .find(|id| votes(shared, *id))
}

/// A fresh ensemble's leader, chosen at start before any client connects: the highest id.
pub(crate) fn first_leader(shared: &Shared) {
    if shared.members.len() > 1
        && let Some(leader) = highest_voter(shared)
    {
        shared.members.lead(leader);
    }
}

/// Looks at the ensemble after a member changed, as its peers do. With its leader and a
/// quorum up, nothing changes. Otherwise every member goes LOOKING, as a 3.8 peer that loses
/// its leader or its quorum does: each drops its client connections at once (but a
/// partitioned member's, whose connections are frozen, as a frozen process's are), answers
/// new ones as a server that is not running, and no session expires. Once a quorum is up, the
/// election ends after [`Config::election_time`](crate::Config::election_time): the highest id
/// up leads, the zxid epoch goes up, and every session's timeout starts again, as under a new
/// ZooKeeper leader.
pub(crate) fn reconsider(shared: &Arc<Shared>, tracker: &TaskTracker) {
    let members = &shared.members;
    if members.len() <= 1 {
        return;
    }
    let phase = members.phase();
    if !phase.looking && has_quorum(shared, up) && up(shared, phase.leader) {
        return;
    }
    look(shared, tracker, 0, has_quorum(shared, votes));
}

/// Forces an election, as a leader that steps down starts one, and makes `candidate` (0 for
/// the election's own choice, the highest id up) the next leader. Needs a quorum up.
pub(crate) fn force_election(shared: &Arc<Shared>, tracker: &TaskTracker, candidate: u64) {
    if shared.members.len() > 1 && has_quorum(shared, votes) {
        look(shared, tracker, candidate, true);
    }
}

/// Puts every member into LOOKING (unless it is already), and with `quorum` up schedules the
/// election's end.
fn look(shared: &Arc<Shared>, tracker: &TaskTracker, candidate: u64, quorum: bool) {
    let (round, began) = shared.members.look(candidate);
    if began {
        shared
            .router()
            .kill_where(|member| !shared.frozen.is_partitioned(member));
        tracing::info!(round, quorum, "every member is looking");
        shared.wake_ticker();
    }
    if quorum {
        // Armed again by every change while looking: the election ends the election time
        // after the last of them, by the latest timer only.
        let timer = shared.members.arm();
        let wait = shared.config.election_time();
        after(shared, tracker, wait, move |shared, tracker| {
            end_election(shared, tracker, round, timer);
        });
    }
}

/// Ends the election of `round` by its latest `timer`, if a quorum is still up and no other
/// end or later start came first. The phase turns to serving under the core lock, with the
/// epoch and the sessions' timeouts already moved, so that no handshake or tick sees the one
/// without the other; a member change between the choice and the end is caught by looking
/// again at once.
fn end_election(shared: &Arc<Shared>, tracker: &TaskTracker, round: u64, timer: u64) {
    if !has_quorum(shared, votes) {
        return;
    }
    let candidate = shared.members.phase().candidate;
    let chosen = (candidate != 0 && votes(shared, candidate)).then_some(candidate);
    let Some(leader) = chosen.or_else(|| highest_voter(shared)) else {
        return;
    };
    let durable = shared.durable.is_some();
    let elected = shared.with_core(|core, _| {
        if !shared.members.elected(round, timer, leader) {
            return false;
        }
        // A new leader's epoch: its first write takes counter 1 of it. Not with a data
        // directory, whose log is the only record of the zxid: a recovery would fall back to
        // the old epoch and refuse every client that saw the new one.
        if !durable {
            let epoch = (core.last_zxid() >> 32) + 1;
            core.set_last_zxid(epoch << 32);
        }
        core.rearm_sessions(shared.clock.now());
        true
    });
    if elected {
        shared.wake_ticker();
        tracing::info!(leader, round, "elected: the ensemble serves again");
        reconsider(shared, tracker);
    }
}

/// After `syncLimit`, has the peers of member `id` count it lost, if `episode` (its partition
/// or isolation) still goes on: an isolated member then looks alone (its clients dropped), and
/// the ensemble is looked at again. A restart arms these timers again ([`rearm_notices`]).
fn notice_after_sync_limit(shared: &Arc<Shared>, tracker: &TaskTracker, id: u64, episode: u64) {
    let wait = shared.config.sync_limit();
    after(shared, tracker, wait, move |shared, tracker| {
        if shared.members.notice(id, episode) {
            if shared.members.is_isolated(id) {
                shared.router().kill_where(|member| member == id);
                tracing::info!(member = id, "isolated from its peers: looking alone");
            }
            reconsider(shared, tracker);
        }
    });
}

/// Runs `then` after `wait`, as a tracked task, unless the generation ends first (a restart,
/// a failed log): what it would decide is then the next generation's.
fn after(
    shared: &Arc<Shared>,
    tracker: &TaskTracker,
    wait: Duration,
    then: impl FnOnce(&Arc<Shared>, &TaskTracker) + Send + 'static,
) {
    let (shared, own) = (shared.clone(), tracker.clone());
    let generation = shared.generation.lock().clone();
    tracker.spawn(async move {
        tokio::select! {
            biased;
            () = generation.cancelled() => {}
            () = tokio::time::sleep(wait) => then(&shared, &own),
        }
    });
}

/// Arms the `syncLimit` timers a restart cancelled, for the members cut off and not yet
/// noticed.
pub(crate) fn rearm_notices(shared: &Arc<Shared>, tracker: &TaskTracker) {
    for (id, episode) in shared.members.unnoticed() {
        notice_after_sync_limit(shared, tracker, id, episode);
    }
}

/// Binds member `id`'s address and starts its accept loop, in the current generation.
///
/// # Errors
/// The bind error, or `Other` when the generation is cancelled (shut down, failed log).
pub(crate) async fn listen(shared: &Arc<Shared>, tracker: &TaskTracker, id: u64) -> io::Result<()> {
    let addr = shared
        .members
        .addr(id)
        .ok_or_else(|| io::Error::other(format!("no member {id}")))?;
    let listener = TcpListener::bind(addr).await?;
    serve(shared, tracker, id, listener)
}

/// Starts member `id`'s accept loop on `listener`, in the current generation.
///
/// # Errors
/// `Other` when the generation is cancelled (shut down, failed log): the listener is dropped.
pub(crate) fn serve(
    shared: &Arc<Shared>,
    tracker: &TaskTracker,
    id: u64,
    listener: TcpListener,
) -> io::Result<()> {
    let generation = shared.generation.lock().clone();
    if generation.is_cancelled() {
        return Err(io::Error::other("the server is not serving"));
    }
    let token = generation.child_token();
    let accepting = tracker.spawn(listener::accept_loop(
        listener,
        shared.clone(),
        (token.clone(), id),
        tracker.clone(),
    ));
    shared.members.started(id, token, accepting);
    Ok(())
}
