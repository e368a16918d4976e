//! How the herd benchmark's results are shown: the table printed as runs finish, the CSV
//! (`--csv`, read back by `--from-csv`), and the chart (`--plot`).
//!
//! Invariants: the CSV format is fixed ([`CSV_HEADER`], one row per run, a failed run keeps
//! its recipe and contenders and leaves the measurements empty), since the published results
//! in `docs/bench/` and any script reading them depend on it; reading a CSV and writing it
//! again gives the same text. The chart draws one series per recipe that ran, in
//! [`Recipe::ALL`] order, from successful runs only.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use super::chart::{Series, log_log_chart};
use super::recipe::Recipe;
use super::run::{Measured, RunResult};
use crate::error::{Error, Result};

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
        Ok(m) => {
            let (name, n) = (r.recipe.name(), r.contenders);
            let (handoffs, notifs, notifs_per, children_per, wall_ms, p50_us) = columns(m);
            format!(
                "{name:<24}{n:>6}{handoffs:>10}{notifs:>15}{notifs_per:>16.2}{children_per:>21.2}{wall_ms:>11.1}{p50_us:>10}"
            )
        }
        Err(e) => format!("{:<24}{:>6}  FAILED: {e}", r.recipe.name(), r.contenders),
    }
}

/// A run's measurements in the column order the table and the CSV share after the recipe and
/// the contenders: hand-offs, notifications, notifications and getChildren calls per
/// hand-off, wall time in ms, median hand-off in µs.
fn columns(m: &Measured) -> (u64, u64, f64, f64, f64, u128) {
    (
        m.handoffs,
        m.notifications,
        m.notifications_per_handoff(),
        m.get_children_per_handoff(),
        m.wall.as_secs_f64() * 1e3,
        m.handoff_p50.as_micros(),
    )
}

/// The CSV document: [`CSV_HEADER`], then one row per run (a failed run keeps its recipe and
/// contenders and leaves the measurements empty).
pub fn csv(results: &[RunResult]) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for r in results {
        // `write!` into a String cannot fail.
        let _ = match &r.outcome {
            Ok(m) => {
                let (name, n) = (r.recipe.name(), r.contenders);
                let (handoffs, notifs, notifs_per, children_per, wall_ms, p50_us) = columns(m);
                writeln!(
                    out,
                    "{name},{n},{handoffs},{notifs},{notifs_per:.3},{children_per:.3},{wall_ms:.1},{p50_us}"
                )
            }
            Err(_) => writeln!(out, "{},{},,,,,,", r.recipe.name(), r.contenders),
        };
    }
    out
}

/// The runs of a CSV document as [`csv`] writes it (`path` names it in errors).
///
/// The CSV keeps getChildren calls per hand-off only, to three decimals: the count is
/// recovered from it exactly whenever the hand-offs divide 1000 or number fewer than 1000.
///
/// # Errors
/// [`Error::Csv`] at the first line that [`csv`] would not have written.
pub fn parse_csv(text: &str, path: &Path) -> Result<Vec<RunResult>> {
    let bad = |line: usize, reason: String| Error::Csv {
        path: path.to_owned(),
        line,
        reason,
    };
    let mut lines = text.lines().enumerate();
    if lines.next().map(|(_, header)| header) != Some(CSV_HEADER) {
        return Err(bad(1, format!("the first line is not `{CSV_HEADER}`")));
    }
    lines
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| parse_row(line).map_err(|reason| bad(i + 1, reason)))
        .collect()
}

/// One data row of the CSV; the error says what is wrong with it.
fn parse_row(line: &str) -> Result<RunResult, String> {
    let fields: Vec<&str> = line.split(',').collect();
    let [
        recipe,
        contenders,
        handoffs,
        notifications,
        _,
        get_children,
        wall_ms,
        p50_us,
    ] = fields[..]
    else {
        return Err(format!("{} fields, not 8", fields.len()));
    };
    let recipe =
        Recipe::from_name(recipe).ok_or_else(|| format!("no recipe is called `{recipe}`"))?;
    let contenders = number(contenders, "contenders")?;
    let measurements = [handoffs, notifications, get_children, wall_ms, p50_us];
    let outcome = if measurements.iter().all(|f| f.is_empty()) {
        Err(Error::Recorded)
    } else {
        let handoffs: u64 = number(handoffs, "handoffs")?;
        let per_handoff: f64 = number(get_children, "get_children_per_handoff")?;
        let wall_ms: f64 = number(wall_ms, "wall_ms")?;
        Ok(Measured {
            handoffs,
            notifications: number(notifications, "notifications")?,
            get_children: (per_handoff * handoffs.max(1) as f64).round() as u64,
            wall: Duration::try_from_secs_f64(wall_ms / 1e3)
                .map_err(|e| format!("wall_ms `{wall_ms}`: {e}"))?,
            handoff_p50: Duration::from_micros(number(p50_us, "handoff_p50_us")?),
        })
    };
    Ok(RunResult {
        recipe,
        contenders,
        outcome,
    })
}

/// A field, parsed; the error names the column.
fn number<T: std::str::FromStr>(field: &str, column: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    field
        .parse()
        .map_err(|e| format!("{column} `{field}`: {e}"))
}

/// The SVG chart: notifications per hand-off against contenders, one line per recipe, titled
/// with the `server` measured when it is known.
///
/// # Errors
/// [`Error::Plot`] if the chart cannot be drawn.
pub fn plot(results: &[RunResult], server: Option<&str>) -> Result<String> {
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
    let title = match server {
        Some(server) => format!("Herd benchmark: {server}"),
        None => "Herd benchmark".to_owned(),
    };
    log_log_chart(
        &title,
        "contenders (sessions queued on one lock)",
        "watch notifications per lock hand-off",
        &series,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The published results read back and written again are the same text.
    #[test]
    fn published_csvs_read_back_unchanged() {
        for (name, text) in [
            (
                "herd-shepherd.csv",
                include_str!("../../../docs/bench/herd-shepherd.csv"),
            ),
            (
                "herd-zookeeper.csv",
                include_str!("../../../docs/bench/herd-zookeeper.csv"),
            ),
        ] {
            let results = parse_csv(text, Path::new(name)).unwrap();
            assert_eq!(results.len(), text.lines().count() - 1, "{name}");
            assert_eq!(csv(&results), text, "{name}");
        }
    }

    #[test]
    fn failed_rows_and_bad_lines() {
        let path = Path::new("f.csv");
        let text = format!("{CSV_HEADER}\ncurator-mutex,7,,,,,,\n");
        let results = parse_csv(&text, path).unwrap();
        assert!(matches!(results[0].outcome, Err(Error::Recorded)));
        assert_eq!(csv(&results), text);
        let svg = plot(&results, None).unwrap();
        let lines: Vec<&str> = svg.lines().collect();
        assert!(lines.contains(&"curator-mutex") && lines.contains(&"Herd benchmark"));
        for (text, line) in [
            ("recipe,contenders\n".to_owned(), 1),
            (format!("{CSV_HEADER}\nmutex,2,2,2,1.000,1.000,0.1,1\n"), 2),
            (format!("{CSV_HEADER}\n\ncurator-mutex,2,2,2,1.000\n"), 3),
            (
                format!("{CSV_HEADER}\ncurator-mutex,2,x,2,1.000,1.000,0.1,1\n"),
                2,
            ),
            (
                format!("{CSV_HEADER}\ncurator-mutex,2,2,2,1.000,1.000,-1,1\n"),
                2,
            ),
        ] {
            match parse_csv(&text, path) {
                Err(Error::Csv { line: l, .. }) => assert_eq!(l, line, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
    }
}
