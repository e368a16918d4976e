//! Delta debugging: the smallest list of steps that still shows a failure, found by dropping
//! chunks of steps while the failure stays (Zeller's ddmin, complements only).
//!
//! Invariants: the result is a sub-list of the input, in the input's order, and the probe said
//! it fails (or it is the input itself, which the caller saw fail); the number of probes is
//! bounded by `max_probes`.

use std::future::Future;

/// Runs a candidate list and says whether the failure is still there.
pub trait Probe<T> {
    /// True if `candidate` still fails.
    fn fails(&mut self, candidate: &[T]) -> impl Future<Output = bool>;
}

/// What a shrink found, and what it cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shrunk<T> {
    /// The smallest failing list found.
    pub items: Vec<T>,
    /// How many probes ran.
    pub probes: usize,
}

/// Shrinks `items` (which fail) with `probe`, running it at most `max_probes` times.
pub async fn shrink<T: Clone, P: Probe<T>>(
    items: Vec<T>,
    probe: &mut P,
    max_probes: usize,
) -> Shrunk<T> {
    let mut items = items;
    let mut probes = 0;
    let mut n = 2usize;
    'outer: while items.len() >= 2 && probes < max_probes {
        let len = items.len();
        let chunk = len.div_ceil(n);
        for start in (0..len).step_by(chunk) {
            if probes >= max_probes {
                break 'outer;
            }
            let end = (start + chunk).min(len);
            let complement: Vec<T> = items[..start]
                .iter()
                .chain(&items[end..])
                .cloned()
                .collect();
            probes += 1;
            if probe.fails(&complement).await {
                items = complement;
                n = n.saturating_sub(1).max(2);
                continue 'outer;
            }
        }
        if n >= len {
            break;
        }
        n = (n * 2).min(len);
    }
    // A single step may be all that is needed: try dropping the last one too.
    if items.len() == 1 && probes < max_probes {
        probes += 1;
        if probe.fails(&[]).await {
            items.clear();
        }
    }
    Shrunk { items, probes }
}
