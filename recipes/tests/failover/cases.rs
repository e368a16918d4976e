//! The failover cases, each written once over a [`TestEnsemble`] and run on every lock kind of
//! [`KINDS`] at once (one holder and one waiter per kind, each on its own lock), so that one
//! member stopped is every kind's failover.
//!
//! Every case ends with the same proofs, from the [`Fence`] and the server: no double holder,
//! no lock node left once everyone has finished, and `lost()` where, and only where, the
//! holder's session really expired (a failover within the session timeout keeps the lock and
//! the session; a partition longer than it ends both, and the client sees `Expired`).

use std::sync::Arc;
use std::time::Duration;

use shepherd_client::{Client, SessionState};
use shepherd_recipes::WaitStrategy::Predecessor;
use shepherd_recipes::{Guard, Lock, LockKind, LostReason};
use shepherd_testkit::ensemble::TestEnsemble;
use shepherd_testkit::locks::AnyGuard;
use shepherd_testkit::{children, unique, wait_children, wait_state, within};
use tokio::task::{JoinHandle, JoinSet};

use super::fence::Fence;

/// The kinds every case runs: the sequential lock of ZooKeeper's recipes page, Curator's
/// `InterProcessMutex`, both shared/read-write locks (their exclusive halves, which a failover
/// must not let overlap) and the ephemeral lock.
pub const KINDS: [LockKind; 5] = [
    LockKind::Sequential(Predecessor),
    LockKind::Mutex,
    LockKind::SharedWrite(Predecessor),
    LockKind::RwWrite,
    LockKind::Ephemeral,
];

/// A session that must survive a failover, a leader's election included (a killed real
/// leader is replaced in about a second on loopback).
pub const HOLD_SESSION: Duration = Duration::from_secs(6);

/// A session meant to expire: ZooKeeper's least with the ensemble's 500 ms tick is 1 s.
pub const SHORT_SESSION: Duration = Duration::from_secs(2);

/// Every member but `victim`.
fn others(e: &TestEnsemble, victim: u64) -> Vec<u64> {
    e.member_ids()
        .into_iter()
        .filter(|&id| id != victim)
        .collect()
}

/// An admin session on a member other than `victim`, and the contests of a failover case:
/// the holders start on `victim` and the waiters on another member, or the other way round
/// (`holders_on_victim` false); every client may move and no session is meant to expire.
async fn open_movable(
    e: &TestEnsemble,
    victim: u64,
    holders_on_victim: bool,
) -> (Client, Vec<Contest>) {
    let rest = others(e, victim);
    let admin = e.connect_from(rest[0], HOLD_SESSION).await;
    let (holder_at, waiter_at) = if holders_on_victim {
        (victim, rest[0])
    } else {
        (rest[0], victim)
    };
    let at = Placement {
        holder_at,
        holder_pinned: false,
        holder_session: HOLD_SESSION,
        waiter_at,
        occupancy: true,
    };
    let contests = Contest::open_all(e, &admin, &at).await;
    (admin, contests)
}

/// Where a contest's two clients connect.
struct Placement {
    /// The member the holder's session starts on.
    holder_at: u64,
    /// Whether the holder can reach only that member.
    holder_pinned: bool,
    holder_session: Duration,
    /// The member the waiter's session starts on.
    waiter_at: u64,
    /// Whether both holders can know when they hold (no session meant to expire).
    occupancy: bool,
}

/// One lock of one kind: a holder, a waiter queued behind it, and their checker.
struct Contest {
    kind: LockKind,
    path: String,
    fence: Arc<Fence>,
    occupancy: bool,
    holder: Client,
    guard: AnyGuard,
    waiter: Client,
    waiting: JoinHandle<AnyGuard>,
}

impl Contest {
    /// The holder takes the lock and writes through it; the waiter queues behind it.
    async fn open(e: &TestEnsemble, admin: &Client, kind: LockKind, at: &Placement) -> Contest {
        let path = unique(&format!("failover-{}", kind.as_str()));
        let fence = Arc::new(Fence::new(admin, format!("{path}-fence")).await);
        let holder = if at.holder_pinned {
            e.connect_only(at.holder_at, at.holder_session).await
        } else {
            e.connect_from(at.holder_at, at.holder_session).await
        };
        let guard = within("the holder's lock", kind.build(&holder, &path).acquire())
            .await
            .unwrap_or_else(|e| panic!("{}: the holder's acquire: {e}", kind.title()));
        if at.occupancy {
            fence.enter("holder");
        }
        assert!(fence.write(&guard, "holder").await, "{}", kind.title());
        let waiter = e.connect_from(at.waiter_at, HOLD_SESSION).await;
        let (lock, occupancy, checker) = (kind.build(&waiter, &path), at.occupancy, fence.clone());
        let waiting = tokio::spawn(async move {
            // No bound: the case decides when the turn must have come.
            let guard = lock
                .acquire()
                .await
                .unwrap_or_else(|e| panic!("{}: the waiter's acquire: {e}", kind.title()));
            if occupancy {
                checker.enter("waiter");
            }
            guard
        });
        // The ephemeral lock's waiter leaves no node to see; every other one queues a node.
        if kind != LockKind::Ephemeral {
            wait_children(admin, &path, |c| c.len() == 2).await;
        }
        Contest {
            kind,
            path,
            fence,
            occupancy: at.occupancy,
            holder,
            guard,
            waiter,
            waiting,
        }
    }

    async fn open_all(e: &TestEnsemble, admin: &Client, at: &Placement) -> Vec<Contest> {
        let mut out = Vec::new();
        for kind in KINDS {
            let contest = Contest::open(e, admin, kind, at).await;
            let title = kind.title();
            assert_eq!(e.member_of(&contest.holder), Some(at.holder_at), "{title}");
            assert_eq!(e.member_of(&contest.waiter), Some(at.waiter_at), "{title}");
            out.push(contest);
        }
        out
    }

    /// The holder still holds: its guarded write applies, nothing says lost, the waiter waits.
    async fn still_held(&self) {
        let title = self.kind.title();
        assert!(
            self.fence.write(&self.guard, "holder").await,
            "{title}: the holder's guarded write after the failover"
        );
        assert_eq!(self.guard.lost_reason(), None, "{title}");
        assert!(!self.waiting.is_finished(), "{title}: the waiter got in");
    }

    /// The holder releases; the waiter's turn comes, with a larger fencing token and a
    /// working lock; then nothing is left and the record shows one holder after the other.
    async fn finish(self, admin: &Client) {
        let Contest {
            kind,
            path,
            fence,
            occupancy,
            holder,
            guard,
            waiter,
            waiting,
        } = self;
        let title = kind.title();
        let token = guard.fencing_token();
        if occupancy {
            fence.leave("holder");
        }
        guard
            .release()
            .await
            .unwrap_or_else(|e| panic!("{title}: release: {e}"));
        let next = within("the waiter's turn", waiting)
            .await
            .unwrap_or_else(|e| panic!("{title}: the waiter: {e}"));
        assert!(next.fencing_token() > token, "{title}: tokens must grow");
        assert!(fence.write(&next, "waiter").await, "{title}");
        assert_eq!(next.lost_reason(), None, "{title}");
        if occupancy {
            fence.leave("waiter");
        }
        next.release()
            .await
            .unwrap_or_else(|e| panic!("{title}: the waiter's release: {e}"));
        wait_children(admin, &path, <[String]>::is_empty).await;
        fence.verify(admin, &["holder", "waiter"]).await;
        within("closing the holder", holder.close()).await.ok();
        within("closing the waiter", waiter.close()).await.ok();
    }
}

/// Waits until `client` is connected to a member other than `from`, on the same session.
async fn failed_over(e: &TestEnsemble, client: &Client, from: u64) {
    let (gone, session) = (e.member_addr(from), client.session_id());
    let mut status = client.status_watch();
    within(
        &format!("a failover away from member {from}"),
        status.wait_for(|s| {
            s.state == SessionState::Connected && s.host.as_deref() != Some(gone.as_str())
        }),
    )
    .await
    .expect("the status channel");
    assert_eq!(client.session_id(), session, "the session survives");
}

/// No guard of `contests` reports a loss for `span`. Had the disconnection counted against
/// the lock, `lost()` would fire within one session timeout of it.
async fn no_lost_for(contests: &[Contest], span: Duration) {
    let mut losts = JoinSet::new();
    for c in contests {
        let (title, lost) = (c.kind.title(), c.guard.lost());
        losts.spawn(async move { (title, lost.await) });
    }
    if let Ok(Some(fired)) = tokio::time::timeout(span, losts.join_next()).await {
        panic!("lost() fired with the session alive: {fired:?}");
    }
}

/// The holders' member is stopped mid-hold (`victim` may be the leader): every holder fails
/// over with its session and keeps its lock past a session timeout; then each waiter gets
/// its turn.
pub async fn stop_mid_hold(e: &TestEnsemble, victim: u64) {
    let (admin, contests) = open_movable(e, victim, true).await;
    e.stop_member(victim).await;
    for c in &contests {
        failed_over(e, &c.holder, victim).await;
        c.still_held().await;
    }
    no_lost_for(&contests, HOLD_SESSION).await;
    for c in contests {
        c.still_held().await;
        c.finish(&admin).await;
    }
    e.start_member(victim).await;
}

/// The waiters' member is stopped while they wait: each acquisition carries on through the
/// failover (no error, no second node) and completes when the holder releases.
pub async fn stop_mid_acquire(e: &TestEnsemble, victim: u64) {
    let (admin, contests) = open_movable(e, victim, false).await;
    e.stop_member(victim).await;
    for c in &contests {
        failed_over(e, &c.waiter, victim).await;
        c.still_held().await;
        let queued = children(&admin, &c.path).await;
        let expected = if c.kind == LockKind::Ephemeral { 1 } else { 2 };
        assert_eq!(queued.len(), expected, "{}: {queued:?}", c.kind.title());
    }
    for c in contests {
        c.finish(&admin).await;
    }
    e.start_member(victim).await;
}

/// The holders' member is partitioned for less than a session timeout as the holders see it:
/// they time out reading, move to another member with their sessions, and keep their locks.
pub async fn partition_within_timeout(e: &TestEnsemble, victim: u64) {
    let (admin, contests) = open_movable(e, victim, true).await;
    e.partition_member(victim).await;
    for c in &contests {
        failed_over(e, &c.holder, victim).await;
        c.still_held().await;
    }
    no_lost_for(&contests, HOLD_SESSION).await;
    e.heal_member(victim).await;
    for c in contests {
        c.finish(&admin).await;
    }
}

/// The holders can reach only their member, which is partitioned for longer than their
/// session timeout: the ensemble expires their sessions and hands each lock to its waiter;
/// each holder's `lost()` fires, its guarded writes fail, and once the partition heals it
/// learns that its session expired. The fenced record shows no write of the old holder after
/// the new one's.
pub async fn partition_past_timeout(e: &TestEnsemble, victim: u64) {
    let rest = others(e, victim);
    let admin = e.connect_from(rest[0], HOLD_SESSION).await;
    let at = Placement {
        holder_at: victim,
        holder_pinned: true,
        holder_session: SHORT_SESSION,
        waiter_at: rest[0],
        // The old holder learns of its loss only after the ensemble has moved on: that is
        // what the fencing token and guarded writes are for, and what the record checks.
        occupancy: false,
    };
    let contests = Contest::open_all(e, &admin, &at).await;
    let losts: Vec<_> = contests.iter().map(|c| c.guard.lost()).collect();
    e.partition_member(victim).await;
    let mut turns = Vec::new();
    for c in contests {
        let title = c.kind.title();
        let next = within("the waiter's turn after the expiry", c.waiting)
            .await
            .unwrap_or_else(|e| panic!("{title}: the waiter: {e}"));
        assert!(next.fencing_token() > c.guard.fencing_token(), "{title}");
        assert!(c.fence.write(&next, "waiter").await, "{title}");
        turns.push((c.kind, c.path, c.fence, c.holder, c.guard, c.waiter, next));
    }
    for ((kind, ..), lost) in turns.iter().zip(losts) {
        let reason = within("lost() after the expiry", lost).await;
        assert!(
            matches!(
                reason,
                LostReason::SessionExpired | LostReason::Disconnected
            ),
            "{}: {reason:?}",
            kind.title()
        );
    }
    for (kind, _, fence, _, guard, ..) in &turns {
        assert!(!fence.write(guard, "holder").await, "{}", kind.title());
    }
    e.heal_member(victim).await;
    for (kind, path, fence, holder, guard, waiter, next) in turns {
        let title = kind.title();
        wait_state(&mut holder.status_watch(), SessionState::Expired).await;
        assert!(!fence.write(&guard, "holder").await, "{title}");
        // Releasing a lost guard is harmless.
        guard
            .release()
            .await
            .unwrap_or_else(|e| panic!("{title}: releasing the lost guard: {e}"));
        next.release()
            .await
            .unwrap_or_else(|e| panic!("{title}: the waiter's release: {e}"));
        wait_children(&admin, &path, <[String]>::is_empty).await;
        fence.verify(&admin, &["holder", "waiter"]).await;
        within("closing the waiter", waiter.close()).await.ok();
    }
}
