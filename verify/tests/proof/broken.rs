//! The checkers' own tests against a live server: each broken mode of the embedded server
//! (test-only fault kinds) must make the matching checker say INVALID, and the same workload on
//! a server without it VALID, so that a VALID verdict elsewhere means something.
//!
//! | Broken mode | What it breaks | Workload |
//! |---|---|---|
//! | `Fault::AckBeforeApply` on setData | a write acknowledged, never applied | register, set |
//! | `Fault::StaleRead` on getData | reads answer an older version | register |
//! | `Fault::HideLowestChild` on getChildren(2) | a sequential lock granted twice | mutex |

use shepherd_protocol::OpCode;
use shepherd_server::{Fault, FaultRule};
use shepherd_verify::proof::nemesis::Target;
use shepherd_verify::proof::run::{RunConfig, RunReport, ServerKind, run_on};
use shepherd_verify::proof::workload::Workload;

/// `workload` without its nemesis on a fresh embedded server, broken by `rule` if given.
async fn run_broken(workload: Workload, rule: Option<FaultRule>) -> RunReport {
    let server = shepherd_testkit::embedded().await;
    if let Some(rule) = rule {
        server
            .embedded()
            .expect("embedded")
            .controls()
            .add_fault(rule);
    }
    let config = RunConfig {
        nemesis: false,
        ..RunConfig::new(workload, ServerKind::Embedded)
    };
    let mut target = Target::Embedded(server);
    let report = run_on(&config, &mut target).await;
    target.shutdown().await;
    println!("{report}");
    report
}

async fn invalid_when_broken(workload: Workload, rule: FaultRule) {
    let sound = run_broken(workload, None).await;
    assert!(sound.verdict.is_valid(), "unbroken: {sound}");
    let broken = run_broken(workload, Some(rule)).await;
    assert!(broken.verdict.is_invalid(), "broken: {broken}");
}

#[tokio::test]
async fn register_check_fails_writes_acknowledged_before_applied() {
    let rule = FaultRule::new(Fault::AckBeforeApply)
        .opcode(OpCode::SetData)
        .always();
    invalid_when_broken(Workload::Register, rule).await;
}

#[tokio::test]
async fn register_check_fails_stale_reads() {
    let rule = FaultRule::new(Fault::stale_read())
        .opcode(OpCode::GetData)
        .always();
    invalid_when_broken(Workload::Register, rule).await;
}

#[tokio::test]
async fn mutex_check_fails_a_lock_granted_twice() {
    // Every request: only getChildren and getChildren2 replies are rewritten.
    let rule = FaultRule::new(Fault::HideLowestChild).always();
    invalid_when_broken(Workload::Mutex, rule).await;
}

#[tokio::test]
async fn set_check_fails_adds_acknowledged_before_applied() {
    let rule = FaultRule::new(Fault::AckBeforeApply)
        .opcode(OpCode::SetData)
        .always();
    invalid_when_broken(Workload::Set, rule).await;
}
