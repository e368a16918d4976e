//! How the herd benchmark's results are shown: the table printed as runs finish, the CSV
//! (`--csv`), and the chart (`--plot`).
//!
//! Invariants: the CSV format is fixed ([`CSV_HEADER`], one row per run, a failed run keeps
//! its recipe and contenders and leaves the measurements empty), since the published results
//! in `docs/bench/` and any script reading them depend on it; the chart draws one series per
//! recipe that ran, in [`Recipe::ALL`] order, from successful runs only.

use std::fmt::Write as _;

use super::recipe::Recipe;
use super::run::RunResult;
use crate::bench::svg::{Series, log_log_chart};

/// The first line of `--csv`.
pub const CSV_HEADER: &str = "recipe,contenders,handoffs,notifications,notifications_per_handoff,get_children_per_handoff,wall_ms,handoff_p50_us";

/// The table's header line.
pub fn table_header() -> String {
    format!(
        "{:<24}{:>6}{:>10}{:>15}{:>16}{:>21}{:>11}{:>10}",
        "recipe",
        "N",
        "handoffs",
        "notifications",
        "notif/handoff",
        "getChildren/handoff",
        "wall ms",
        "p50 µs"
    )
}

/// The table's line for one run.
pub fn table_row(r: &RunResult) -> String {
    match &r.outcome {
        Ok(m) => format!(
            "{:<24}{:>6}{:>10}{:>15}{:>16.2}{:>21.2}{:>11.1}{:>10}",
            r.recipe.name(),
            r.contenders,
            m.handoffs,
            m.notifications,
            m.notifications_per_handoff(),
            m.get_children_per_handoff(),
            m.wall.as_secs_f64() * 1e3,
            m.handoff_p50.as_micros()
        ),
        Err(e) => format!("{:<24}{:>6}  FAILED: {e}", r.recipe.name(), r.contenders),
    }
}

/// The CSV document: [`CSV_HEADER`], then one row per run (a failed run keeps its recipe and
/// contenders and leaves the measurements empty).
pub fn csv(results: &[RunResult]) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for r in results {
        // `write!` into a String cannot fail.
        let _ = match &r.outcome {
            Ok(m) => writeln!(
                out,
                "{},{},{},{},{:.3},{:.3},{:.1},{}",
                r.recipe.name(),
                r.contenders,
                m.handoffs,
                m.notifications,
                m.notifications_per_handoff(),
                m.get_children_per_handoff(),
                m.wall.as_secs_f64() * 1e3,
                m.handoff_p50.as_micros()
            ),
            Err(_) => writeln!(out, "{},{},,,,,,", r.recipe.name(), r.contenders),
        };
    }
    out
}

/// The SVG chart: notifications per hand-off against contenders, one line per recipe.
pub fn plot(results: &[RunResult], server: &str) -> String {
    let series: Vec<Series> = Recipe::ALL
        .iter()
        .filter(|recipe| results.iter().any(|r| r.recipe == **recipe))
        .map(|&recipe| Series {
            name: recipe.name().to_owned(),
            points: results
                .iter()
                .filter(|r| r.recipe == recipe)
                .filter_map(|r| {
                    let m = r.outcome.as_ref().ok()?;
                    Some((f64::from(r.contenders), m.notifications_per_handoff()))
                })
                .collect(),
        })
        .collect();
    log_log_chart(
        &format!("Herd benchmark: {server}"),
        "contenders (sessions queued on one lock)",
        "watch notifications per lock hand-off",
        &series,
    )
}
