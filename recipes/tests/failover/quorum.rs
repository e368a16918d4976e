//! What clients see when the ensemble loses its leader or its quorum, written once and run on
//! the embedded ensemble and on a real three-JVM one (docs/ensemble.md, "Leader, quorum and
//! elections"): the outcomes a real 3.8 ensemble gives, asserted on both.

use std::time::Duration;

use shepherd_client::{Client, CreateOptions, SessionState};
use shepherd_protocol::FourLetterWord;
use shepherd_testkit::ensemble::TestEnsemble;
use shepherd_testkit::ensemble::real::poll;
use shepherd_testkit::{four_letter_word, unique, within};
use tokio::task::JoinHandle;

/// Sessions of 4 s, as in the measurements the cases repeat (8 ticks of 500 ms).
const SESSION: Duration = Duration::from_secs(4);

/// What a 3.8 member that is not serving answers `srvr` with.
const NOT_SERVING: &str = "This ZooKeeper instance is not currently serving requests\n";

/// Watches `client` from now on, in a task of its own so that a disconnection as short as
/// a real election is not missed: the task ends at the first state that is not Connected.
fn watch_disconnect(client: &Client) -> JoinHandle<()> {
    let mut status = client.status_watch();
    tokio::spawn(async move {
        while status.borrow_and_update().state == SessionState::Connected {
            if status.changed().await.is_err() {
                return;
            }
        }
    })
}

/// Resolves once the watch of [`watch_disconnect`] has seen a disconnection.
async fn disconnected(watch: JoinHandle<()>, what: &str) {
    within(what, watch).await.expect("the watch task");
}

/// Resolves once `client` is Connected again; its session must be the one it had.
async fn reconnected(client: &Client, session: i64, what: &str) {
    let mut status = client.status_watch();
    within(
        what,
        status.wait_for(|s| s.state == SessionState::Connected),
    )
    .await
    .expect("the status channel");
    assert_eq!(client.session_id(), session, "{what}: the same session");
}

/// The leader's id, then the followers'.
async fn leader_and_followers(e: &TestEnsemble) -> (u64, Vec<u64>) {
    let leader = e.leader().await;
    let followers = e.member_ids().into_iter().filter(|&id| id != leader);
    (leader, followers.collect())
}

/// The leader is stopped (`kill -9` on a real one): the clients of both followers are
/// disconnected too, as their members go LOOKING; both come back with their sessions, and the
/// next write carries a new epoch. On the way: each session's id carries its member's id.
pub async fn leader_loss_disconnects_every_member(e: &TestEnsemble) {
    let (leader, followers) = leader_and_followers(e).await;
    let first = e.connect_only(followers[0], SESSION).await;
    let second = e.connect_only(followers[1], SESSION).await;
    let probe = unique("epoch-probe");
    let (_, before) = within(
        "the probe",
        first.create_all(&probe, b"", &CreateOptions::persistent()),
    )
    .await
    .expect("create the probe")
    .expect("a new probe");
    let sessions = (first.session_id(), second.session_id());
    for (client, member) in [(&first, followers[0]), (&second, followers[1])] {
        assert_eq!(
            client.session_id() as u64 >> 56,
            member,
            "a session id's top byte is the member that created it"
        );
    }

    let watches = (watch_disconnect(&first), watch_disconnect(&second));
    e.stop_member(leader).await;
    disconnected(watches.0, "the first follower's client disconnected").await;
    disconnected(watches.1, "the second follower's client disconnected").await;
    reconnected(&first, sessions.0, "the first follower's client back").await;
    reconnected(&second, sessions.1, "the second follower's client back").await;
    let after = within(
        "a write after the election",
        first.set_data(&probe, b"x", None),
    )
    .await
    .expect("write after the election");
    assert!(
        after.mzxid >> 32 > before.czxid >> 32,
        "a new leader's epoch: {:#x} after {:#x}",
        after.mzxid,
        before.czxid
    );

    within("delete the probe", first.delete(&probe, None))
        .await
        .ok();
    within("close", first.close()).await.ok();
    within("close", second.close()).await.ok();
    e.start_member(leader).await;
}

/// Two of three stopped for three session timeouts: the survivor serves nothing and says so,
/// no session expires, and once one member is back the survivor's client returns with its
/// session and its ephemeral.
pub async fn quorum_loss_serves_nothing_and_expires_nothing(e: &TestEnsemble) {
    let (leader, followers) = leader_and_followers(e).await;
    let (survivor, other) = (followers[0], followers[1]);
    let client = e.connect_only(survivor, SESSION).await;
    let session = client.session_id();
    let ephemeral = unique("quorum-ephemeral");
    within(
        "the ephemeral",
        client.create_all(&ephemeral, b"", &CreateOptions::ephemeral()),
    )
    .await
    .expect("create the ephemeral");

    let watch = watch_disconnect(&client);
    e.stop_member(leader).await;
    e.stop_member(other).await;
    disconnected(watch, "the survivor's client disconnected").await;
    let survivor_addr = e.member_addr(survivor);
    let srvr = loop_until_not_serving(&survivor_addr).await;
    assert_eq!(srvr, NOT_SERVING, "the survivor's srvr");
    // Three session timeouts without a quorum: on a real ensemble, 12 s of wall time.
    tokio::time::sleep(SESSION * 3).await;

    e.start_member(other).await;
    reconnected(&client, session, "the survivor's client back").await;
    let stat = within("the ephemeral after the outage", client.exists(&ephemeral))
        .await
        .expect("exists");
    assert!(
        stat.is_some_and(|s| s.ephemeral_owner == session),
        "no session expired without a quorum: its ephemeral is there"
    );

    within("close", client.close()).await.ok();
    e.start_member(leader).await;
}

/// The leader is partitioned (`SIGSTOP` on a real one, a frozen process): after `syncLimit`
/// the followers give up on it and drop their clients, elect another leader among
/// themselves, and their clients come back with their sessions and can write; healed, the
/// old leader follows.
pub async fn leader_partition_drops_every_follower_client(e: &TestEnsemble) {
    let (leader, followers) = leader_and_followers(e).await;
    let client = e.connect_only(followers[0], SESSION).await;
    let session = client.session_id();
    let watch = watch_disconnect(&client);
    e.partition_member(leader).await;
    disconnected(watch, "the follower's client disconnected after syncLimit").await;
    reconnected(&client, session, "the follower's client back").await;
    let probe = unique("partition-probe");
    within(
        "a write under the new leader",
        client.create_all(&probe, b"", &CreateOptions::persistent()),
    )
    .await
    .expect("write under the new leader");
    assert_ne!(
        e.leader().await,
        leader,
        "the partitioned leader lost the lead"
    );
    e.heal_member(leader).await;
    // A thawed 3.8 leader may call itself leader for a moment before it steps down, goes
    // looking and rejoins: the next case starts once it follows.
    if e.embedded().is_none() {
        poll("the old leader following", || async {
            e.mode(leader).await.as_deref() == Some("follower")
        })
        .await;
    }
    within("delete the probe", client.delete(&probe, None))
        .await
        .ok();
    within("close", client.close()).await.ok();
}
/// The survivor's `srvr` once it has noticed its peers are gone (a real one notices within
/// about 100 ms; the embedded one at once).
async fn loop_until_not_serving(addr: &str) -> String {
    let not_serving = || async {
        !four_letter_word(addr, FourLetterWord::Srvr)
            .await
            .contains("Mode: ")
    };
    poll("the survivor not serving", not_serving).await;
    four_letter_word(addr, FourLetterWord::Srvr).await
}
