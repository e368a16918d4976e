//! [`inspect`]: what a data directory holds and whether recovery would accept it, read without
//! changing anything: no lock taken, no temporary file removed, no tail cut. What
//! `shepherd datadir check` prints.
//!
//! Invariant: the judgement is recovery's own, not a copy: a snapshot is read by the loader
//! [`recover`](crate::recover) uses (into a sink that keeps nothing), the logs are read after
//! the newest usable snapshot as recovery replays them, and their damage is judged by the rule
//! recovery applies, whose refusal is reported in its own words.

use std::fmt;
use std::path::{Path, PathBuf};

use super::error::{StorageError, at};
use super::log_reader::{TornTail, read_logs};
use super::names::{LOG_PREFIX, SNAPSHOT_PREFIX, VERSION_DIR, list};
use super::recovery::{RecoverySink, judge_tail, load_snapshot, refuse_logs_without_snapshot};
use super::snapshot_reader::{SnapshotNode, ZxidDigest};

/// A snapshot file and what reading it found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotCheck {
    /// Its zxid, from its name.
    pub zxid: i64,
    /// The file.
    pub path: PathBuf,
    /// Why recovery would skip it; `None` when it reads completely.
    pub problem: Option<String>,
}

/// Damage in the logs, and what recovery does with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogDamage {
    /// Where reading stopped, and why.
    pub tail: TornTail,
    /// Recovery's refusal, as it says it; `None` for a torn write in the last file, which
    /// recovery cuts.
    pub refusal: Option<String>,
}

/// What [`inspect`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    /// Every snapshot file, oldest first.
    pub snapshots: Vec<SnapshotCheck>,
    /// Every log file, oldest first: the zxid its name gives and its path.
    pub logs: Vec<(i64, PathBuf)>,
    /// The newest snapshot that reads completely, whose zxid the logs are read after.
    pub base_zxid: i64,
    /// Log entries after it that read and check out.
    pub entries: u64,
    /// The last of them (the base zxid when there are none).
    pub last_zxid: i64,
    /// Where the logs stop before their end, if they do.
    pub damage: Option<LogDamage>,
    /// Recovery's refusal of logs with no snapshot to start from, as it says it.
    pub no_snapshot: Option<String>,
}

impl Inspection {
    /// Whether recovery would start from this directory: a usable snapshot (or none at all),
    /// and logs that are clean or end in a torn write it cuts.
    pub fn recovers(&self) -> bool {
        let snapshot_ok =
            self.snapshots.is_empty() || self.snapshots.iter().any(|s| s.problem.is_none());
        let logs_ok = self.damage.as_ref().is_none_or(|d| d.refusal.is_none());
        snapshot_ok && logs_ok && self.no_snapshot.is_none()
    }
}

impl fmt::Display for Inspection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for snapshot in &self.snapshots {
            match &snapshot.problem {
                None => writeln!(f, "snapshot {}: ok", snapshot.path.display())?,
                Some(why) => writeln!(f, "snapshot {}: unusable: {why}", snapshot.path.display())?,
            }
        }
        writeln!(
            f,
            "logs: {} file(s); {} entries after zxid {:#x} read and check out, the last {:#x}",
            self.logs.len(),
            self.entries,
            self.base_zxid,
            self.last_zxid
        )?;
        match &self.damage {
            None => writeln!(f, "damage: none")?,
            Some(LogDamage {
                tail,
                refusal: None,
            }) => writeln!(
                f,
                "damage: a torn write (a partial last record, then zeros) in {tail}; recovery \
                 cuts it"
            )?,
            Some(LogDamage {
                refusal: Some(refusal),
                ..
            }) => writeln!(f, "damage: {refusal}")?,
        }
        if let Some(refusal) = &self.no_snapshot {
            writeln!(f, "snapshots: none: {refusal}")?;
        }
        let verdict = if self.recovers() {
            "recovers"
        } else {
            "refused"
        };
        write!(f, "verdict: {verdict}")
    }
}

/// Reads the data directory `data_dir` (and its separate log directory, if any) as recovery
/// would, without changing it.
///
/// # Errors
/// [`StorageError::Io`] for a directory or file that cannot be read.
pub fn inspect(data_dir: &Path, log_dir: Option<&Path>) -> Result<Inspection, StorageError> {
    let snap_dir = data_dir.join(VERSION_DIR);
    let log_dir = log_dir.unwrap_or(data_dir).join(VERSION_DIR);
    let snapshots: Vec<SnapshotCheck> = list(&snap_dir, SNAPSHOT_PREFIX)
        .map_err(at(&snap_dir))?
        .into_iter()
        .map(|(zxid, path)| {
            let problem = load_snapshot(&mut Discard, &path, zxid).err();
            SnapshotCheck {
                zxid,
                path,
                problem,
            }
        })
        .collect();
    let base_zxid = snapshots
        .iter()
        .rev()
        .find(|s| s.problem.is_none())
        .map_or(0, |s| s.zxid);
    let no_snapshot = if snapshots.is_empty() {
        match refuse_logs_without_snapshot(&snap_dir, &log_dir) {
            Ok(()) => None,
            Err(e @ StorageError::Io { .. }) => return Err(e),
            Err(refused) => Some(refused.to_string()),
        }
    } else {
        None
    };
    let logs = list(&log_dir, LOG_PREFIX).map_err(at(&log_dir))?;
    let mut reader = read_logs(&log_dir, base_zxid).map_err(at(&log_dir))?;
    let mut entries = 0;
    for entry in reader.by_ref() {
        entry.map_err(at(&log_dir))?;
        entries += 1;
    }
    let damage = match reader.torn_tail() {
        None => None,
        Some(tail) => Some(LogDamage {
            refusal: match judge_tail(tail) {
                Ok(()) => None,
                Err(e @ StorageError::Io { .. }) => return Err(e),
                Err(refused) => Some(refused.to_string()),
            },
            tail: tail.clone(),
        }),
    };
    Ok(Inspection {
        snapshots,
        logs,
        base_zxid,
        entries,
        last_zxid: reader.last_zxid(),
        damage,
        no_snapshot,
    })
}

/// A sink that takes a snapshot and keeps nothing: what reading one to its end needs.
struct Discard;

impl RecoverySink for Discard {
    type Error = std::convert::Infallible;

    fn session(&mut self, _: i64, _: i32) -> Result<(), Self::Error> {
        Ok(())
    }

    fn acl(&mut self, _: i64, _: Vec<shepherd_protocol::Acl>) -> Result<(), Self::Error> {
        Ok(())
    }

    fn node(&mut self, _: SnapshotNode) -> Result<(), Self::Error> {
        Ok(())
    }

    fn snapshot_done(&mut self, _: i64, _: Option<ZxidDigest>) -> Result<(), Self::Error> {
        Ok(())
    }

    fn txn(&mut self, _: &shepherd_protocol::txn::TxnEntry) -> Result<(), Self::Error> {
        Ok(())
    }
}
