//! [`truncate_after`]: the operator's repair of a damaged data directory, `shepherd datadir
//! repair DIR --truncate-after ZXID`. It keeps every transaction up to ZXID and moves the rest
//! (later log files, the cut part of a log, snapshots past ZXID) into a backup folder beside the
//! data, so that nothing is lost that the operator did not choose to set aside.
//!
//! Invariants: it runs only with the directory's lock (no server on it); it never cuts past a
//! damaged entry's start, so the logs it leaves read cleanly to ZXID; every byte it removes is
//! first copied into the backup folder and synced; a directory it changed is synced.

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::data_dir::DataDir;
use super::error::{StorageError, at};
use super::log_reader::read_logs;

/// What [`truncate_after`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repair {
    /// Where the removed files and the cut log's original went.
    pub backup: PathBuf,
    /// Files moved into the backup folder whole (later logs, snapshots past the zxid).
    pub moved: Vec<PathBuf>,
    /// The log cut in place, and its new length (its original is in the backup folder).
    pub cut: Option<(PathBuf, u64)>,
}

/// Keeps every transaction up to `zxid` in `data_dir` (logs in `log_dir` when separate), and
/// moves everything after it into `data_dir/shepherd-repair-<unix seconds>/`.
///
/// # Errors
/// [`StorageError::Locked`] when a server holds the directory; [`StorageError::Refused`] when
/// the logs are damaged before `zxid` (cut after the last good zxid instead);
/// [`StorageError::Io`] for a file that cannot be read, copied, moved or synced.
pub fn truncate_after(
    data_dir: &Path,
    log_dir: Option<&Path>,
    zxid: i64,
) -> Result<Repair, StorageError> {
    let dir = DataDir::open(data_dir, log_dir)?;
    // Where the logs must end: just after the last entry at or before `zxid`.
    let mut reader = read_logs(dir.log_dir(), -1).map_err(at(dir.log_dir()))?;
    let keep_to: Option<(PathBuf, u64)> = loop {
        let before = reader.entry_end().map(|(p, end)| (p.to_path_buf(), end));
        match reader.next() {
            Some(Ok(entry)) if entry.header.zxid > zxid => break before,
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(at(dir.log_dir())(e)),
            None => {
                if let Some(tail) = reader.torn_tail()
                    && tail.last_zxid < zxid
                {
                    return Err(StorageError::Refused(format!(
                        "the logs are damaged after zxid {:#x} ({tail}): --truncate-after can \
                         keep at most that much",
                        tail.last_zxid
                    )));
                }
                break reader.entry_end().map(|(p, end)| (p.to_path_buf(), end));
            }
        }
    };
    let snapshots = dir.snapshots().map_err(at(dir.snap_dir()))?;
    if let Some(&(oldest, _)) = snapshots.first()
        && oldest > zxid
    {
        return Err(StorageError::Refused(format!(
            "truncating after {zxid:#x} would set aside every snapshot (the oldest is at \
             {oldest:#x}) and leave logs that no snapshot starts, which recovery refuses; nothing \
             was changed. Truncate at {oldest:#x} or later"
        )));
    }
    let backup = backup_dir(data_dir)?;
    let mut repair = Repair {
        backup: backup.clone(),
        moved: Vec::new(),
        cut: None,
    };
    let logs = dir.logs().map_err(at(dir.log_dir()))?;
    // Files before the one that ends at `zxid` stay as they are; that one is cut; later ones go.
    let keep_index = keep_to
        .as_ref()
        .and_then(|(keep, _)| logs.iter().position(|(_, p)| p == keep));
    for (index, (_, path)) in logs.iter().enumerate() {
        match (keep_index, &keep_to) {
            (Some(k), _) if index < k => {}
            (Some(k), Some((_, end))) if index == k => {
                let len = fs::metadata(path).map_err(at(path))?.len();
                if len > *end {
                    copy_synced(path, &backup)?;
                    let file = OpenOptions::new()
                        .write(true)
                        .open(path)
                        .map_err(at(path))?;
                    file.set_len(*end).map_err(at(path))?;
                    file.sync_all().map_err(at(path))?;
                    repair.cut = Some((path.clone(), *end));
                }
            }
            _ => {
                move_synced(path, &backup)?;
                repair.moved.push(path.clone());
            }
        }
    }
    for (snap_zxid, path) in dir.snapshots().map_err(at(dir.snap_dir()))? {
        if snap_zxid > zxid {
            move_synced(&path, &backup)?;
            repair.moved.push(path);
        }
    }
    for changed in [dir.log_dir(), dir.snap_dir(), &backup] {
        sync_dir(changed)?;
    }
    Ok(repair)
}

/// A new folder `shepherd-repair-<unix seconds>[-n]` in the data directory.
fn backup_dir(data_dir: &Path) -> Result<PathBuf, StorageError> {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for n in 0..1000 {
        let name = match n {
            0 => format!("shepherd-repair-{secs}"),
            n => format!("shepherd-repair-{secs}-{n}"),
        };
        let path = data_dir.join(name);
        match fs::create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(at(&path)(e)),
        }
    }
    Err(StorageError::Refused(format!(
        "no free backup folder name in {}",
        data_dir.display()
    )))
}

/// Copies `path` into `backup`, synced, before the original is cut.
fn copy_synced(path: &Path, backup: &Path) -> Result<(), StorageError> {
    let target = backup.join(path.file_name().unwrap_or_default());
    fs::copy(path, &target).map_err(at(&target))?;
    File::open(&target)
        .and_then(|f| f.sync_all())
        .map_err(at(&target))
}

/// Moves `path` into `backup`: a rename on one file system, else a synced copy and a removal.
fn move_synced(path: &Path, backup: &Path) -> Result<(), StorageError> {
    let target = backup.join(path.file_name().unwrap_or_default());
    if fs::rename(path, &target).is_ok() {
        return Ok(());
    }
    copy_synced(path, backup)?;
    fs::remove_file(path).map_err(at(path))
}

fn sync_dir(dir: &Path) -> Result<(), StorageError> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(at(dir))
}
