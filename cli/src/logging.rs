//! Where the `shepherd` and `shepherd-bench` commands' tracing events go, and in what shape:
//! stderr, filtered by `RUST_LOG` (else a per-command default level), as text or as JSON lines
//! (`--log-format`).
//!
//! Invariants: logs go to stderr only, so that stdout stays for what scripts read (the `shepherd
//! listening on …` line, a benchmark's table); text carries ANSI colour codes only when stderr is a
//! terminal and `NO_COLOR` is unset or empty, so that a log redirected to a file or a pipe holds no
//! escape bytes; JSON never carries them.

use std::io::{IsTerminal, Write};

use clap::{Args, ValueEnum};
use tracing_subscriber::EnvFilter;

/// The logging option every command takes.
#[derive(Args, Clone, Copy, Debug, Default)]
pub struct LogOptions {
    /// Shape of the log lines on stderr: `text` for people, `json` (one object a line) for log
    /// shippers. Which lines are shown follows RUST_LOG.
    #[arg(long = "log-format", value_enum, default_value_t, global = true)]
    pub format: LogFormat,
}

/// The shape of each log line (`--log-format`).
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines: time, level, target, message and fields.
    #[default]
    Text,
    /// One JSON object a line, with `timestamp`, `level`, `target`, `message` and the event's
    /// other fields at the top level, for log shippers.
    Json,
}

/// Installs the process-wide subscriber: `RUST_LOG` if it is set and valid, else
/// `default_level` (a `RUST_LOG`-style directive such as `"info"`).
///
/// Call once, before anything logs; a second call leaves the first subscriber in place.
pub fn init(format: LogFormat, default_level: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    // `try_init` fails only when a subscriber is already installed, which is then kept.
    let _ = match format {
        LogFormat::Text => builder.with_ansi(colour_wanted()).try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_ansi(false)
            .try_init(),
    };
}

/// Whether text logs may carry colour: stderr is a terminal and `NO_COLOR` (no-color.org) is
/// unset or empty.
fn colour_wanted() -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    std::io::stderr().is_terminal() && !no_color
}

/// Pushes out whatever the log writers hold. Stderr is unbuffered today, so this is cheap; it
/// is the one place to extend if a buffered or non-blocking writer is ever installed.
pub fn flush() {
    let _ = std::io::stderr().flush();
    let _ = std::io::stdout().flush();
}
