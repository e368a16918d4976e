//! Bystander latency under each hostile client: for every attack of the hostile-client tests
//! (`server/tests/hostile/`), an embedded server on a free loopback port serves one bystander
//! session doing a fixed number of create + getData round trips while the attack runs, and the
//! same bystander alone is the baseline. The tests assert that other sessions are served; this
//! measures how well (docs/bench/hostile.md).
//!
//! Threads: the server runs on a runtime of its own (two workers, as the machine has two cores),
//! the attacker and the bystander each on a single-threaded runtime on a thread of its own, so
//! that a busy attacker delays the bystander only through the server (and the shared CPUs),
//! never by holding a worker the bystander's task waits for.
//!
//! Run: `cargo bench -p shepherd-bench --bench hostile` (name attacks as arguments to run only
//! those, e.g. `-- auth-flood loris`).

mod attacks;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use shepherd_cli::runtime::{self, Threads};
use shepherd_protocol::{CreateMode, Reply, Request};
use shepherd_server::Server;
use shepherd_testkit::{Peer, create, get_data, reply_header, within};
use tokio::runtime::Runtime;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use attacks::{Attack, Ctx, Ready};

/// The bystander's measured round trips (a create, then a getData of the node created).
const ROUND_TRIPS: usize = 2_000;

/// Round trips before the measured ones, once the attack is under way.
const WARM_UP: usize = 200;

/// One bystander round trip: a create of `path`, then a getData of it; both must succeed, or
/// the attack did touch the bystander and the benchmark fails.
async fn round_trip(peer: &mut Peer, create: &Request, read: &Request) {
    for request in [create, read] {
        let reply = peer.call(request).await;
        assert!(
            matches!(reply, Reply::Ok(..)),
            "the bystander's {:?} failed: error {}",
            request.op_code(),
            reply_header(&reply).err
        );
    }
}

/// The bystander: opens its session, tells the attacker its id (the forger's victim), waits for
/// the attack to be under way, warms up, and returns the time of each measured round trip.
async fn bystander(
    addr: SocketAddr,
    id: oneshot::Sender<i64>,
    started: oneshot::Receiver<()>,
) -> Vec<Duration> {
    let mut peer = Peer::session(addr, 30_000, 0)
        .await
        .expect("the bystander's session");
    let _ = id.send(peer.session_id());
    within("the attack to get under way", started)
        .await
        .expect("the attacker got under way");
    let requests = |name: &str| {
        let path = format!("/{name}");
        (
            create(&path, b"ok", CreateMode::Persistent),
            get_data(&path),
        )
    };
    for i in 0..WARM_UP {
        let (create, read) = requests(&format!("warm{i}"));
        round_trip(&mut peer, &create, &read).await;
    }
    let mut samples = Vec::with_capacity(ROUND_TRIPS);
    for i in 0..ROUND_TRIPS {
        let (create, read) = requests(&format!("by{i}"));
        let started = Instant::now();
        round_trip(&mut peer, &create, &read).await;
        samples.push(started.elapsed());
    }
    samples
}

/// A single-threaded runtime for one side of a run.
fn side_runtime() -> Runtime {
    runtime::start(Threads::Current).expect("a runtime")
}

/// What one run measured.
struct Outcome {
    attack: Attack,
    /// The bystander's round trips, sorted.
    samples: Vec<Duration>,
    /// The attack's own account of itself.
    report: String,
}

impl Outcome {
    /// The `q` quantile of the round trips (nearest rank).
    fn quantile(&self, q: f64) -> Duration {
        let rank = ((self.samples.len() as f64 * q).ceil() as usize).max(1);
        self.samples[rank.min(self.samples.len()) - 1]
    }
}

/// Runs `attack` against a fresh server on `server_rt` beside the bystander, and stops it once
/// the bystander is done.
fn run(attack: Attack, server_rt: &Runtime) -> Outcome {
    let server: Server = server_rt
        .block_on(attack.builder(Server::builder()).start())
        .expect("the server starts");
    let stop = CancellationToken::new();
    let (id_tx, id_rx) = oneshot::channel();
    let (started_tx, started_rx) = oneshot::channel();
    let ctx = Ctx {
        server: &server,
        server_rt: server_rt.handle().clone(),
        stop: &stop,
    };
    let (samples, report) = std::thread::scope(|scope| {
        let attacker = scope
            .spawn(|| side_runtime().block_on(attack.run(&ctx, id_rx, Ready::new(started_tx))));
        let by = scope.spawn(|| {
            // However the bystander ends, the attack ends with it.
            let _stop = stop.clone().drop_guard();
            side_runtime().block_on(bystander(server.local_addr(), id_tx, started_rx))
        });
        let samples = by.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        let report = attacker
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        (samples, report)
    });
    server_rt.block_on(server.shutdown());
    let mut samples = samples;
    samples.sort();
    Outcome {
        attack,
        samples,
        report,
    }
}

/// Microseconds, for the table.
fn us(d: Duration) -> u128 {
    d.as_micros()
}

fn main() {
    // `cargo bench` passes `--bench`; other arguments name the attacks to run.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let server_rt = runtime::start(Threads::Workers(Some(2))).expect("the server's runtime");
    let began = Instant::now();
    let mut outcomes = Vec::new();
    for attack in Attack::ALL {
        if !only.is_empty() && !only.iter().any(|o| o == attack.name()) {
            continue;
        }
        let started = Instant::now();
        let outcome = run(attack, &server_rt);
        eprintln!(
            "{:<22} {:>6.1} s  p50 {:>6} µs  p99 {:>6} µs  max {:>6} µs  {}",
            attack.name(),
            started.elapsed().as_secs_f64(),
            us(outcome.quantile(0.5)),
            us(outcome.quantile(0.99)),
            us(outcome.quantile(1.0)),
            outcome.report
        );
        outcomes.push(outcome);
    }
    let baseline = outcomes
        .iter()
        .find(|o| o.attack == Attack::Baseline)
        .map(|o| o.quantile(0.99));

    println!(
        "\n{ROUND_TRIPS} bystander round trips (create + getData) per run, after {WARM_UP} \
         to warm up; latency in µs\n"
    );
    println!("| attack | p50 | p99 | max | p99 ÷ baseline p99 | the attack meanwhile |");
    println!("|---|---:|---:|---:|---:|---|");
    for o in &outcomes {
        let ratio = baseline.map_or("—".to_owned(), |b| {
            format!(
                "{:.1}×",
                o.quantile(0.99).as_secs_f64() / b.as_secs_f64().max(1e-9)
            )
        });
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            o.attack.name(),
            us(o.quantile(0.5)),
            us(o.quantile(0.99)),
            us(o.quantile(1.0)),
            ratio,
            o.report
        );
    }
    println!("\nwhole run: {:.1} s", began.elapsed().as_secs_f64());
}
