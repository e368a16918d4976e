//! The chaos run in `cargo test`: a fixed seed, 50 clients on every lock kind, on a paused
//! tokio clock with in-memory connections, so that freezes and pauses past the session timeout
//! cost no wall time and the run is bounded by work, not by waiting.
//!
//! Besides "no violation", the test demands that the chaos did happen: every fault kind was
//! carried out, locks changed hands on every family, sessions were lost and replaced, late
//! writes were refused, and the recorded holds make a history the mutex checks find valid. A
//! run that injected nothing would prove nothing.

use std::sync::Arc;
use std::time::Duration;

use shepherd_server::Server;

use super::report::Report;
use super::transport::Transport;
use super::{ChaosConfig, run};
use crate::proof::nemesis::session::FaultKind;
use crate::proof::workload::mutex::family::FAMILIES;

const SEED: u64 = 20_240_601;
const CLIENTS: usize = 50;
const SESSION_TIMEOUT: Duration = Duration::from_secs(4);
/// Virtual time.
const DURATION: Duration = Duration::from_secs(90);

fn chaos(seed: u64) -> Report {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let server = Arc::new(
            Server::builder()
                .tick_time(SESSION_TIMEOUT / 4)
                .container_check_interval(Duration::from_secs(1))
                .start()
                .await
                .expect("the server starts"),
        );
        let config = ChaosConfig {
            transport: Transport::InMemory,
            ..ChaosConfig::new(seed, CLIENTS, DURATION, SESSION_TIMEOUT)
        };
        let report = run(server.clone(), config).await;
        server.shutdown().await;
        report
    })
}

#[test]
fn fifty_clients_on_every_lock_under_faults_keep_exclusion_and_fencing() {
    let wall = std::time::Instant::now();
    let report = chaos(SEED);
    println!("{report}\nwall time {:?}", wall.elapsed());
    assert_eq!(report.violation_count(), 0, "{report}");
    assert!(report.verdict.is_valid(), "{report}");
    assert!(report.events > 1000, "{report}");
    let c = &report.counters;
    for (kind, n) in FaultKind::ALL.iter().zip(&report.faults) {
        assert!(
            n.get() > 0,
            "no {} fault was carried out\n{report}",
            kind.as_str()
        );
    }
    for (family, n) in FAMILIES.iter().zip(&c.acquired) {
        assert!(
            n.get() >= 10,
            "{} changed hands only {} times\n{report}",
            family.name,
            n.get()
        );
    }
    assert!(c.acquired_read.get() > 0, "{report}");
    assert!(c.writes_accepted.get() > 100, "{report}");
    assert!(c.reads_validated.get() > 0, "{report}");
    assert!(c.sessions_replaced.get() > 0, "{report}");
    assert!(c.late_writes.get() > 0, "{report}");
    assert!(
        c.writes_refused_lost.get() + c.writes_refused_stale.get() > 0,
        "no late write was refused\n{report}"
    );
    let lost: u64 = c.lost.iter().map(|n| n.get()).sum();
    assert!(lost > 0, "{report}");
}
