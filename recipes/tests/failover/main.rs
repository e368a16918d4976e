//! Failover: the recipes' exclusion and lost-lock guarantees on a three-member ensemble whose
//! members are stopped and partitioned under the locks (the cases are in `cases.rs`,
//! their checker in `fence.rs`), and what any client sees when the leader or the quorum is
//! lost (`quorum.rs`).
//!
//! Each case runs twice: on the embedded Shepherd ensemble (`Server::builder().members(3)`,
//! on a paused clock, so that session timeouts pass in no wall time), and on a real ZooKeeper
//! 3.8 ensemble of three JVMs when `SHEPHERD_REAL_ENSEMBLE_MEMBERS` names one
//! (`bash .ci/real-zk-ensemble.sh cargo test -p shepherd-recipes --test failover`, or
//! `.ci/failover.sh`); there, stopping a member is `kill -9` on its JVM, and one case kills
//! the leader. The real runs take turns on the one ensemble; they are ignored unless asked
//! for (`--ignored`), and fail when asked for with no ensemble named.

mod cases;
mod fence;
mod quorum;

use shepherd_testkit::ensemble::TestEnsemble;

/// A fresh embedded ensemble of three.
async fn embedded() -> TestEnsemble {
    TestEnsemble::in_process(3).await
}

#[tokio::test(start_paused = true)]
async fn shepherd_follower_stopped_mid_hold() {
    let e = embedded().await;
    let victim = e.follower().await;
    cases::stop_mid_hold(&e, victim).await;
    e.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn shepherd_leader_stopped_mid_hold() {
    let e = embedded().await;
    let victim = e.leader().await;
    cases::stop_mid_hold(&e, victim).await;
    e.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn shepherd_waiters_member_stopped_mid_acquire() {
    let e = embedded().await;
    let victim = e.follower().await;
    cases::stop_mid_acquire(&e, victim).await;
    e.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn shepherd_partition_within_timeout_keeps_locks() {
    let e = embedded().await;
    let victim = e.follower().await;
    cases::partition_within_timeout(&e, victim).await;
    e.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn shepherd_partition_past_timeout_fires_lost() {
    let e = embedded().await;
    let victim = e.follower().await;
    cases::partition_past_timeout(&e, victim).await;
    e.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn shepherd_leader_loss_disconnects_every_member() {
    let e = embedded().await;
    quorum::leader_loss_disconnects_every_member(&e).await;
    e.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn shepherd_leader_partition_drops_every_follower_client() {
    let e = embedded().await;
    quorum::leader_partition_drops_every_follower_client(&e).await;
    e.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn shepherd_quorum_loss_serves_nothing_and_expires_nothing() {
    let e = embedded().await;
    quorum::quorum_loss_serves_nothing_and_expires_nothing(&e).await;
    e.shutdown().await;
}

/// The real ensemble; these cases are ignored unless asked for (`.ci/failover.sh` asks), and
/// asked for without one they fail saying so.
async fn real() -> TestEnsemble {
    TestEnsemble::real()
        .await
        .expect("SHEPHERD_REAL_ENSEMBLE_MEMBERS is not set: run these cases with .ci/failover.sh")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs SHEPHERD_REAL_ENSEMBLE_MEMBERS (.ci/failover.sh starts a real ensemble)"]
async fn zookeeper_follower_killed_mid_hold() {
    let e = real().await;
    let victim = e.follower().await;
    cases::stop_mid_hold(&e, victim).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs SHEPHERD_REAL_ENSEMBLE_MEMBERS (.ci/failover.sh starts a real ensemble)"]
async fn zookeeper_leader_killed_mid_hold() {
    let e = real().await;
    let victim = e.leader().await;
    cases::stop_mid_hold(&e, victim).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs SHEPHERD_REAL_ENSEMBLE_MEMBERS (.ci/failover.sh starts a real ensemble)"]
async fn zookeeper_waiters_member_killed_mid_acquire() {
    let e = real().await;
    let victim = e.follower().await;
    cases::stop_mid_acquire(&e, victim).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs SHEPHERD_REAL_ENSEMBLE_MEMBERS (.ci/failover.sh starts a real ensemble)"]
async fn zookeeper_partition_within_timeout_keeps_locks() {
    let e = real().await;
    let victim = e.follower().await;
    cases::partition_within_timeout(&e, victim).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs SHEPHERD_REAL_ENSEMBLE_MEMBERS (.ci/failover.sh starts a real ensemble)"]
async fn zookeeper_partition_past_timeout_fires_lost() {
    let e = real().await;
    let victim = e.follower().await;
    cases::partition_past_timeout(&e, victim).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs SHEPHERD_REAL_ENSEMBLE_MEMBERS (.ci/failover.sh starts a real ensemble)"]
async fn zookeeper_leader_loss_disconnects_every_member() {
    let e = real().await;
    quorum::leader_loss_disconnects_every_member(&e).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs SHEPHERD_REAL_ENSEMBLE_MEMBERS (.ci/failover.sh starts a real ensemble)"]
async fn zookeeper_quorum_loss_serves_nothing_and_expires_nothing() {
    let e = real().await;
    quorum::quorum_loss_serves_nothing_and_expires_nothing(&e).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs SHEPHERD_REAL_ENSEMBLE_MEMBERS (.ci/failover.sh starts a real ensemble)"]
async fn zookeeper_leader_partition_drops_every_follower_client() {
    let e = real().await;
    quorum::leader_partition_drops_every_follower_client(&e).await;
}
