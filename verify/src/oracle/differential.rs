//! The differential check: one sequence on both servers at once, the first point where their
//! transcripts differ, and, on a difference, the shrink to a minimal reproducer.
//!
//! Invariants: both servers always run the same steps under the same root, fresh on every
//! attempt (`/oracle-<run>-<seed>-<attempt>`), so no attempt sees another's nodes; a
//! reproducer keeps the step where the difference first showed, so shrinking cannot wander off
//! to another difference; a difference that a whole rerun does not show again is reported as
//! flaky, never dropped, and only a reproducible one fails the run.

use std::time::{SystemTime, UNIX_EPOCH};

use super::run::{Limits, Transcript, run};
use super::shrink::{Probe, shrink};
use super::step::Step;

/// The two servers compared, and how to run against them.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The first server (`host:port`) and its name in reports.
    pub a: (String, String),
    /// The second server and its name.
    pub b: (String, String),
    /// Bounds on waits.
    pub limits: Limits,
    /// The most probes one shrink runs.
    pub max_probes: usize,
    /// A tag unique to this process, in every root.
    pub run_id: String,
}

impl Setup {
    /// A setup with a run id from the process id and the clock.
    pub fn new(a: (String, String), b: (String, String), limits: Limits) -> Setup {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Setup {
            a,
            b,
            limits,
            max_probes: 150,
            run_id: format!("{:x}{:x}", std::process::id(), nanos & 0xffff_ffff),
        }
    }
}

/// Where two transcripts first differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// In the sessions' handshakes.
    Setup,
    /// At this step.
    Step(usize),
}

/// The first point where `a` and `b` differ, if any.
pub fn first_difference(a: &Transcript, b: &Transcript) -> Option<Point> {
    if a.setup != b.setup {
        return Some(Point::Setup);
    }
    let n = a.steps.len().max(b.steps.len());
    (0..n)
        .find(|&i| a.steps.get(i) != b.steps.get(i))
        .map(Point::Step)
}

/// Both servers' transcripts of one attempt.
#[derive(Debug, Clone)]
pub struct Pair {
    /// The first server's.
    pub a: Transcript,
    /// The second server's.
    pub b: Transcript,
}

/// A difference found, shrunk.
#[derive(Debug, Clone)]
pub struct Divergence {
    /// The seed of the sequence.
    pub seed: u64,
    /// Sessions in the sequence.
    pub sessions: usize,
    /// Indices (into the generated sequence) of the steps kept.
    pub kept: Vec<usize>,
    /// The steps kept.
    pub steps: Vec<Step>,
    /// Both servers' answers to the kept steps.
    pub pair: Pair,
    /// Where they differ.
    pub point: Point,
    /// Whether the sequence was run a second time to shrink it.
    pub rechecked: bool,
    /// False if that second run of the whole sequence agreed.
    pub reproduced: bool,
    /// Probes the shrink ran.
    pub probes: usize,
}

/// Runs `steps` on both servers at once under a fresh root.
///
/// # Errors
/// A message naming the server that could not run it.
pub async fn run_pair(
    setup: &Setup,
    seed: u64,
    attempt: usize,
    sessions: usize,
    steps: &[Step],
) -> Result<Pair, String> {
    let root = format!("/oracle-{}-{seed}-{attempt}", setup.run_id);
    let (a, b) = tokio::join!(
        run(&setup.a.1, sessions, steps, &root, setup.limits),
        run(&setup.b.1, sessions, steps, &root, setup.limits),
    );
    let a = a.map_err(|e| format!("{}: {e}", setup.a.0))?;
    let b = b.map_err(|e| format!("{}: {e}", setup.b.0))?;
    Ok(Pair { a, b })
}

/// Probes for the shrink: indices into the original steps; fails when the pair still differs
/// at the same step as first seen.
struct Reprobe<'a> {
    setup: &'a Setup,
    seed: u64,
    sessions: usize,
    steps: &'a [Step],
    target: Option<usize>,
    attempt: usize,
    last: Option<(Vec<usize>, Pair, Point)>,
}

impl Probe<usize> for Reprobe<'_> {
    async fn fails(&mut self, candidate: &[usize]) -> bool {
        if let Some(t) = self.target
            && !candidate.contains(&t)
        {
            return false;
        }
        self.attempt += 1;
        let steps: Vec<Step> = candidate.iter().map(|&i| self.steps[i].clone()).collect();
        let Ok(pair) = run_pair(self.setup, self.seed, self.attempt, self.sessions, &steps).await
        else {
            return false;
        };
        let point = first_difference(&pair.a, &pair.b);
        let same = match (point, self.target) {
            (Some(Point::Setup), None) => true,
            (Some(Point::Step(i)), Some(t)) => candidate.get(i) == Some(&t),
            _ => false,
        };
        if same && let Some(point) = point {
            self.last = Some((candidate.to_vec(), pair, point));
        }
        same
    }
}

/// How many whole reruns a difference gets before it counts as reproducible: flaky if any of
/// them agrees.
pub const RECHECKS: usize = 2;

/// Runs the sequence of `steps` for `seed`; on a difference, shrinks it (unless `shrink_it`
/// is false) and returns it.
///
/// # Errors
/// A message if a server could not run the sequence at all.
pub async fn check(
    setup: &Setup,
    seed: u64,
    sessions: usize,
    steps: &[Step],
    shrink_it: bool,
) -> Result<Option<Divergence>, String> {
    let pair = run_pair(setup, seed, 0, sessions, steps).await?;
    let Some(point) = first_difference(&pair.a, &pair.b) else {
        return Ok(None);
    };
    let all: Vec<usize> = (0..steps.len()).collect();
    let target = match point {
        Point::Setup => None,
        Point::Step(i) => Some(i),
    };
    let first = Divergence {
        seed,
        sessions,
        kept: all.clone(),
        steps: steps.to_vec(),
        pair,
        point,
        rechecked: false,
        reproduced: false,
        probes: 0,
    };
    if !shrink_it {
        return Ok(Some(first));
    }
    // Background work a server does on its own clock (ZooKeeper's container reaper issues its
    // deletes asynchronously, so one decided before a cleanup can land in a later sequence)
    // can move one server's zxids in the middle of a sequence. A difference that a whole
    // rerun does not show again is reported as flaky, never dropped.
    for attempt in 1..=RECHECKS {
        let again = run_pair(setup, seed, 1_000 + attempt, sessions, steps).await?;
        if first_difference(&again.a, &again.b).is_none() {
            return Ok(Some(Divergence {
                rechecked: true,
                ..first
            }));
        }
    }
    let mut probe = Reprobe {
        setup,
        seed,
        sessions,
        steps,
        target,
        attempt: 0,
        last: None,
    };
    if !probe.fails(&all).await {
        return Ok(Some(Divergence {
            rechecked: true,
            ..first
        }));
    }
    let shrunk = shrink(all, &mut probe, setup.max_probes).await;
    let Some((kept, pair, point)) = probe.last.take().filter(|(k, ..)| *k == shrunk.items) else {
        // The last failing probe is always the shrink's result; keep the full run otherwise.
        return Ok(Some(Divergence {
            rechecked: true,
            reproduced: true,
            probes: shrunk.probes,
            ..first
        }));
    };
    Ok(Some(Divergence {
        seed,
        sessions,
        steps: kept.iter().map(|&i| steps[i].clone()).collect(),
        kept,
        pair,
        point,
        rechecked: true,
        reproduced: true,
        probes: shrunk.probes + 1,
    }))
}
