//! Printing a divergence readably: the reproducer's steps, each followed by what every session
//! received from both servers (once when they agree, side by side when they do not), and how
//! to run it again.

use std::fmt::Write as _;

use super::differential::{Divergence, Point, Setup};

/// The report of one divergence, as lines of text. `generator` holds the options that shaped
/// the sequence (e.g. `--ops-per-seq 40`), repeated in the replay line.
pub fn render(setup: &Setup, d: &Divergence, generator: &str) -> String {
    let (a, b) = (&setup.a.0, &setup.b.0);
    let mut out = String::new();
    let where_ = match d.point {
        Point::Setup => "in the handshakes".to_string(),
        Point::Step(i) => format!("at step {i}"),
    };
    let _ = writeln!(
        out,
        "DIVERGENCE seed {} ({} sessions): {} vs {} differ {where_}{}",
        d.seed,
        d.sessions,
        a,
        b,
        match (d.rechecked, d.reproduced) {
            (false, _) => " (not shrunk)",
            (true, true) => "",
            (true, false) => " (FLAKY: a whole rerun agreed)",
        }
    );
    let _ = writeln!(
        out,
        "  reproducer: {} of the sequence's steps (kept: {:?}; {} probes)",
        d.steps.len(),
        d.kept,
        d.probes
    );
    side_by_side(&mut out, "  ", a, b, &d.pair.a.setup, &d.pair.b.setup);
    for (i, step) in d.steps.iter().enumerate() {
        let mark = if d.point == Point::Step(i) {
            ">>"
        } else {
            "  "
        };
        let _ = writeln!(out, "{mark}[{i}] {step}");
        let none = Vec::new();
        let la = d.pair.a.steps.get(i).unwrap_or(&none);
        let lb = d.pair.b.steps.get(i).unwrap_or(&none);
        side_by_side(&mut out, "      ", a, b, la, lb);
    }
    let keep: Vec<String> = d.kept.iter().map(|k| k.to_string()).collect();
    let _ = writeln!(
        out,
        "  replay: oracle --a A --b B {generator} --first-seed {} --seeds 1 --keep-steps {}",
        d.seed,
        keep.join(",")
    );
    out
}

fn side_by_side(out: &mut String, indent: &str, a: &str, b: &str, la: &[String], lb: &[String]) {
    if la == lb {
        for line in la {
            let _ = writeln!(out, "{indent}{line}");
        }
        return;
    }
    for line in la {
        let _ = writeln!(out, "{indent}{a:>9} | {line}");
    }
    for line in lb {
        let _ = writeln!(out, "{indent}{b:>9} | {line}");
    }
}
