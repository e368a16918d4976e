//! `oracle`: sends the same seeded random request sequences to two ZooKeeper-compatible
//! servers and compares every reply and event, printing a minimal reproducer for each
//! difference.
//!
//! ```text
//! cargo run -p shepherd-verify --bin oracle -- \
//!     --a "$SHEPHERD_REAL_ZK" --b "$SHEPHERD_ADDR" --seeds 200
//! ```
//!
//! Exit status: 0 when every difference found was flaky (a whole rerun agreed; each is still
//! printed and counted), 1 on a reproducible divergence, 2 when a sequence could not run at all
//! (a server unreachable, the root not created).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use shepherd_verify::oracle::differential::{Setup, check};
use shepherd_verify::oracle::generate::generate_with;
use shepherd_verify::oracle::report::render;
use shepherd_verify::oracle::run::Limits;
use shepherd_verify::oracle::step::Step;

/// Differential oracle: the same seeded request sequences on two servers, every answer compared.
#[derive(Parser, Debug)]
#[command(name = "oracle")]
struct Args {
    /// The reference server, host:port (real ZooKeeper).
    #[arg(long)]
    a: String,
    /// The server under test, host:port.
    #[arg(long)]
    b: String,
    /// The reference server's name in reports.
    #[arg(long, default_value = "zookeeper")]
    a_name: String,
    /// The tested server's name in reports.
    #[arg(long, default_value = "shepherd")]
    b_name: String,
    /// How many sequences (seeds) to run; with --duration, at most this many.
    #[arg(long)]
    seeds: Option<u64>,
    /// The first seed; seeds run in order from it.
    #[arg(long, default_value_t = 0)]
    first_seed: u64,
    /// Steps per sequence.
    #[arg(long, default_value_t = 40)]
    ops_per_seq: usize,
    /// Keep starting sequences for this many seconds (instead of, or as well as, --seeds).
    #[arg(long)]
    duration: Option<u64>,
    /// Run only these steps (indices, comma-separated) of each sequence: a printed reproducer.
    #[arg(long, value_delimiter = ',')]
    keep_steps: Option<Vec<usize>>,
    /// Report differences without shrinking them (faster when surveying many seeds).
    #[arg(long)]
    no_shrink: bool,
    /// Leave out the steps that wait for the reaper (to survey other differences quickly).
    #[arg(long)]
    no_reap: bool,
    /// Stop after this many divergent sequences.
    #[arg(long, default_value_t = 3)]
    max_divergences: usize,
    /// The longest wait for a reply, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    reply_ms: u64,
    /// The longest wait for the reaper to delete a node, in milliseconds.
    #[arg(long, default_value_t = 5_000)]
    reap_ms: u64,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = Args::parse();
    let limits = Limits {
        reply: Duration::from_millis(args.reply_ms),
        reap: Duration::from_millis(args.reap_ms),
    };
    let setup = Setup::new(
        (args.a_name.clone(), args.a.clone()),
        (args.b_name.clone(), args.b.clone()),
        limits,
    );
    let generator = format!(
        "--ops-per-seq {}{}",
        args.ops_per_seq,
        if args.no_reap { " --no-reap" } else { "" }
    );
    let started = Instant::now();
    let deadline = args.duration.map(|s| started + Duration::from_secs(s));
    // Without a duration, a default count; with one, the count is only an upper bound.
    let count = args
        .seeds
        .unwrap_or(if deadline.is_some() { u64::MAX } else { 100 });
    let (mut sequences, mut operations, mut divergences, mut flaky) = (0u64, 0u64, 0usize, 0usize);
    let mut last_seed = args.first_seed;
    let mut failure = None;
    for n in 0..count {
        if deadline.is_some_and(|d| Instant::now() >= d) || divergences >= args.max_divergences {
            break;
        }
        let Some(seed) = args.first_seed.checked_add(n) else {
            break;
        };
        let sequence = generate_with(seed, args.ops_per_seq, !args.no_reap);
        let steps: Vec<Step> = match &args.keep_steps {
            Some(keep) => keep
                .iter()
                .filter_map(|&i| sequence.steps.get(i).cloned())
                .collect(),
            None => sequence.steps.clone(),
        };
        last_seed = seed;
        sequences += 1;
        operations += steps.len() as u64;
        match check(&setup, seed, sequence.sessions, &steps, !args.no_shrink).await {
            Ok(None) => {}
            Ok(Some(d)) => {
                if d.rechecked && !d.reproduced {
                    flaky += 1;
                } else {
                    divergences += 1;
                }
                print!("{}", render(&setup, &d, &generator));
            }
            Err(e) => {
                failure = Some(format!("seed {seed}: {e}"));
                break;
            }
        }
    }
    println!(
        "oracle: {sequences} sequences, {operations} operations, {divergences} divergences, \
         {flaky} flaky (seeds {}..={last_seed}, {:.1}s, {} vs {})",
        args.first_seed,
        started.elapsed().as_secs_f64(),
        args.a_name,
        args.b_name
    );
    if let Some(e) = failure {
        eprintln!("oracle: could not run: {e}");
        return ExitCode::from(2);
    }
    if divergences > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
