//! `shepherd datadir check DIR` and `shepherd datadir repair DIR --truncate-after ZXID`: the
//! operator's view of a data directory that a server refused (docs/storage.md, "Torn tails").
//! `check` reads it as recovery would and changes nothing; `repair` keeps every transaction up
//! to ZXID and moves everything after it into a backup folder in DIR, only when asked.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use shepherd_server::storage::{inspect, truncate_after};

/// `shepherd datadir ...`.
#[derive(Subcommand, Debug)]
pub enum DatadirCommand {
    /// Read DIR (ZooKeeper's dataDir, holding version-2/) as recovery would, changing nothing,
    /// and say whether a server would start from it: every snapshot, the log entries after the
    /// newest usable one, and any damage, torn (cut at start) or not (refused). Exit 0 when it
    /// recovers, 1 when a server would refuse it, 2 when it cannot be read.
    Check {
        /// The data directory (zoo.cfg's dataDir).
        dir: PathBuf,
        /// The transaction log directory, when separate (zoo.cfg's dataLogDir).
        #[arg(long = "log-dir", value_name = "DIR")]
        log_dir: Option<PathBuf>,
    },
    /// Keep every transaction up to ZXID and move the rest (the log after it, later log files,
    /// snapshots past it) into DIR/shepherd-repair-<time>/, the cut log's original included.
    /// Refused while a server holds DIR, and when the logs are damaged before ZXID. Exit 0 when
    /// repaired, 1 when refused, 2 on an I/O error.
    Repair {
        /// The data directory (zoo.cfg's dataDir).
        dir: PathBuf,
        /// The transaction log directory, when separate (zoo.cfg's dataLogDir).
        #[arg(long = "log-dir", value_name = "DIR")]
        log_dir: Option<PathBuf>,
        /// The last zxid to keep, decimal or 0x-prefixed hex (`check` names the last good one).
        #[arg(long = "truncate-after", value_name = "ZXID", value_parser = parse_zxid)]
        truncate_after: i64,
    },
}

/// A zxid as ZooKeeper's tools print it (`0x1400000003`) or in decimal.
fn parse_zxid(text: &str) -> Result<i64, String> {
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => i64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|e| format!("not a zxid: {e}"))
}

/// Runs a `shepherd datadir` command; see the variants for the exit codes.
pub fn main(command: &DatadirCommand) -> ExitCode {
    match command {
        DatadirCommand::Check { dir, log_dir } => match inspect(dir, log_dir.as_deref()) {
            Ok(found) => {
                println!("{found}");
                if found.recovers() {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                }
            }
            Err(error) => {
                eprintln!("error: {error}");
                ExitCode::from(2)
            }
        },
        DatadirCommand::Repair {
            dir,
            log_dir,
            truncate_after: zxid,
        } => match truncate_after(dir, log_dir.as_deref(), *zxid) {
            Ok(repair) => {
                if let Some((path, len)) = &repair.cut {
                    println!("cut {} to {len} bytes", path.display());
                }
                for path in &repair.moved {
                    println!("moved {}", path.display());
                }
                println!("backup: {}", repair.backup.display());
                ExitCode::SUCCESS
            }
            Err(error @ shepherd_server::storage::StorageError::Io { .. }) => {
                eprintln!("error: {error}");
                ExitCode::from(2)
            }
            Err(error) => {
                eprintln!("error: {error}");
                ExitCode::FAILURE
            }
        },
    }
}
