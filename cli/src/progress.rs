//! Progress of a long-running command (the herd benchmark; loading a dump), as a bar on stderr
//! when stderr is a terminal, and nothing at all otherwise.
//!
//! Invariants: the bar is drawn on stderr only, so that stdout holds exactly what it would
//! without it; when stderr is not a terminal (a pipe, a file, CI) nothing is drawn and no
//! escape byte is written; lines printed through [`Progress::println`] never interleave with
//! the bar.

use std::borrow::Cow;
use std::io::{IsTerminal, Write as _};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A count of units of work done out of a known total, shown as a bar while it lives.
///
/// Dropping it (or [`Progress::finish`]) clears the bar.
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar for `total` units named `unit` (e.g. `"runs"`), drawn if stderr is a terminal.
    pub fn new(total: u64, unit: &str) -> Progress {
        Progress::with_visibility(total, unit, std::io::stderr().is_terminal())
    }

    /// As [`Progress::new`], drawn on stderr if `visible` and never otherwise.
    pub fn with_visibility(total: u64, unit: &str, visible: bool) -> Progress {
        let target = if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(total), target);
        // The template is a constant; should it ever fail to parse, the default style is still
        // a bar.
        if let Ok(style) = ProgressStyle::with_template(&format!(
            "[{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}} {unit} {{wide_msg}}"
        )) {
            bar.set_style(style);
        }
        Progress { bar }
    }

    /// Counts `n` more units done.
    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
    }

    /// Says what is under way, after the count.
    pub fn set_message(&self, message: impl Into<Cow<'static, str>>) {
        self.bar.set_message(message);
    }

    /// Prints `line` on stdout, with the bar (if any) out of the way while it does. A reader
    /// that has gone away (`| head`) loses the line; that is not worth a panic.
    pub fn println(&self, line: &str) {
        self.bar.suspend(|| {
            let _ = writeln!(std::io::stdout().lock(), "{line}");
        });
    }

    /// Clears the bar: the work is over.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        // A command that ends early (an error) leaves no half-drawn bar behind.
        if !self.bar.is_finished() {
            self.bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hidden_bar_still_counts() {
        let progress = Progress::with_visibility(3, "runs", false);
        assert!(progress.bar.is_hidden());
        progress.inc(1);
        progress.inc(1);
        progress.set_message("shared-herd 50");
        assert_eq!(progress.bar.position(), 2);
        progress.finish();
    }
}
