//! Every workload, a few hundred operations on a fresh embedded server with its nemesis (cut
//! and held connections): each history must be judged VALID.

use shepherd_verify::proof::run::{RunConfig, ServerKind, run};
use shepherd_verify::proof::workload::Workload;

async fn valid(workload: Workload) {
    let report = run(&RunConfig::new(workload, ServerKind::Embedded)).await;
    println!("{report}");
    assert!(!report.history.events.is_empty(), "{report}");
    assert!(report.verdict.is_valid(), "{report}");
}

#[tokio::test]
async fn register_is_linearizable_on_the_embedded_server() {
    valid(Workload::Register).await;
}

#[tokio::test]
async fn set_keeps_every_acknowledged_add() {
    valid(Workload::Set).await;
}

#[tokio::test]
async fn unique_ids_are_unique() {
    valid(Workload::UniqueIds).await;
}

#[tokio::test]
async fn counter_reads_lie_within_the_increments() {
    valid(Workload::Counter).await;
}

#[tokio::test]
async fn queue_delivers_each_element_exactly_once() {
    valid(Workload::Queue).await;
}

#[tokio::test]
async fn every_exclusive_lock_excludes() {
    valid(Workload::Mutex).await;
}
