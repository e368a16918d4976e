//! [`DataDir`]: a data directory (and optional separate data log directory) opened for one
//! server, laid out as ZooKeeper 3.8's `FileTxnSnapLog` lays it out (docs/storage.md).
//!
//! `DIR/version-2` holds snapshots, `LOGDIR/version-2` logs (the same directory when there is
//! no separate log directory). Shepherd adds one file at the top of `DIR`, where ZooKeeper
//! never looks: `shepherd.secret` ([`DataDir::secret`]).
//!
//! The guard against a second server is an `flock` on the directories themselves (`DIR`, and
//! `LOGDIR` when separate), held on an open descriptor for as long as the [`DataDir`] lives. A
//! lock on a file inside would be lost to anyone who deletes the file (a tidy-up script, a
//! stale-pid clean-up): the next server would create a new file, lock that, and two servers
//! would write one directory. A directory cannot be deleted while it holds the data, and the
//! kernel drops the lock when the process dies, so there are no stale locks either. A file
//! system that cannot lock a directory descriptor (NFS emulates flock with byte-range locks,
//! which need one open for writing) falls back to a locked `shepherd.lock` file, with a
//! warning that deleting it would defeat the guard.
//!
//! Invariants: while a `DataDir` exists its process is the only Shepherd writing there;
//! leftover temporary snapshot files (`tmp.snapshot.…`) are removed at open, after the locks
//! are held.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, flock};

use super::error::{StorageError, at};
use super::names::{LOG_PREFIX, SNAPSHOT_PREFIX, TEMP_PREFIX, VERSION_DIR, list};
use super::snapshot_reader::ends_as_finished;
use super::txn_log::TxnLog;

/// The lock file of a file system that does not lock directories (see [`lock`]).
const FALLBACK_LOCK_FILE: &str = "shepherd.lock";

/// An open data directory; see the module docs.
#[derive(Debug)]
pub struct DataDir {
    root: PathBuf,
    snap_dir: PathBuf,
    log_dir: PathBuf,
    _locks: Vec<File>,
}

impl DataDir {
    /// Opens (creating as needed) `data_dir/version-2` for snapshots and
    /// `data_log_dir/version-2` (or the same) for logs, and locks them.
    ///
    /// # Errors
    /// [`StorageError::NotWritable`] for a directory that cannot be created or written,
    /// [`StorageError::Locked`] when another server holds it, [`StorageError::Misplaced`] for
    /// snapshots in a separate log directory or logs in the snapshot directory (as ZooKeeper
    /// refuses them), [`StorageError::Io`] otherwise.
    pub fn open(data_dir: &Path, data_log_dir: Option<&Path>) -> Result<DataDir, StorageError> {
        let log_root = data_log_dir.unwrap_or(data_dir);
        let snap_dir = data_dir.join(VERSION_DIR);
        let log_dir = log_root.join(VERSION_DIR);
        let mut locks = vec![lock(data_dir)?];
        let separate = canonical(log_root) != canonical(data_dir);
        if separate {
            locks.push(lock(log_root)?);
        }
        for dir in [&snap_dir, &log_dir] {
            ensure_writable(dir)?;
        }
        if separate {
            if !list(&log_dir, SNAPSHOT_PREFIX)
                .map_err(at(&log_dir))?
                .is_empty()
            {
                return Err(StorageError::Misplaced {
                    dir: log_dir,
                    what: "the transaction log directory holds snapshot files",
                });
            }
            if !list(&snap_dir, LOG_PREFIX)
                .map_err(at(&snap_dir))?
                .is_empty()
            {
                return Err(StorageError::Misplaced {
                    dir: snap_dir,
                    what: "the snapshot directory holds transaction log files",
                });
            }
        }
        remove_temporaries(&snap_dir)?;
        Ok(DataDir {
            root: data_dir.to_path_buf(),
            snap_dir,
            log_dir,
            _locks: locks,
        })
    }

    /// The data directory given to [`open`](Self::open).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where snapshots live (`DIR/version-2`).
    pub fn snap_dir(&self) -> &Path {
        &self.snap_dir
    }

    /// Where transaction logs live (`LOGDIR/version-2`).
    pub fn log_dir(&self) -> &Path {
        &self.log_dir
    }

    /// Snapshot files, oldest first: `(zxid, path)`.
    ///
    /// # Errors
    /// The directory cannot be read.
    pub fn snapshots(&self) -> io::Result<Vec<(i64, PathBuf)>> {
        list(&self.snap_dir, SNAPSHOT_PREFIX)
    }

    /// Log files, oldest first: `(zxid of the first entry, path)`.
    ///
    /// # Errors
    /// The directory cannot be read.
    pub fn logs(&self) -> io::Result<Vec<(i64, PathBuf)>> {
        list(&self.log_dir, LOG_PREFIX)
    }

    /// A log writer for this directory (see [`TxnLog::new`]).
    pub fn txn_log(&self, prealloc_bytes: u64) -> TxnLog {
        TxnLog::new(&self.log_dir, prealloc_bytes)
    }

    /// Deletes old files as ZooKeeper's `PurgeTxnLog.purge` does: keeps the newest `retain`
    /// valid snapshots (fewer than 3 counts as 3, as ZooKeeper's `DatadirCleanupManager` has
    /// it), the log file that covers the oldest kept snapshot and every later log, and deletes
    /// every other snapshot and log file older than that snapshot. Returns the files deleted.
    ///
    /// # Errors
    /// A directory cannot be read or a file cannot be deleted (files deleted before the
    /// failure stay deleted).
    pub fn purge(&self, retain: usize) -> Result<Vec<PathBuf>, StorageError> {
        let retain = retain.max(3);
        let snapshots = self.snapshots().map_err(at(&self.snap_dir))?;
        let valid: Vec<_> = snapshots
            .iter()
            .rev()
            .filter(|(_, path)| looks_complete(path))
            .take(retain)
            .collect();
        let Some(&&(least, _)) = valid.last() else {
            return Ok(Vec::new());
        };
        let logs = self.logs().map_err(at(&self.log_dir))?;
        // FileTxnLog.getLogFiles(least): the newest log starting at or before it is needed.
        let needed = logs
            .iter()
            .rposition(|(zxid, _)| *zxid <= least)
            .unwrap_or(0);
        let mut doomed: Vec<PathBuf> = logs[..needed]
            .iter()
            .filter(|(zxid, _)| *zxid < least)
            .map(|(_, p)| p.clone())
            .collect();
        doomed.extend(
            snapshots
                .iter()
                .filter(|(zxid, _)| *zxid < least)
                .map(|(_, p)| p.clone()),
        );
        for path in &doomed {
            tracing::info!(path = %path.display(), "purging");
            std::fs::remove_file(path).map_err(at(path))?;
        }
        Ok(doomed)
    }
}

/// `SnapStream.isValidSnapshot`: a cheap look at the file's end (uncompressed: the `"/"` of the
/// last seal) or start (compressed: the stream's magic), not a full read.
fn looks_complete(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let check = || -> io::Result<bool> {
        let mut file = File::open(path)?;
        let ext = name
            .rsplit('.')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let magic: &[u8] = match ext.as_str() {
            _ if name.split('.').count() <= 2 => &[],
            "gz" => &[0x1f, 0x8b],
            "snappy" => &[0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0],
            _ => &[],
        };
        if !magic.is_empty() {
            let mut head = vec![0u8; magic.len()];
            return Ok(file.read_exact(&mut head).is_ok() && head == magic);
        }
        let len = file.metadata()?.len();
        ends_as_finished(&mut file, len)
    };
    check().unwrap_or(false)
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// Creates `dir` (with parents) and takes the lock on the directory itself (see the module
/// docs).
fn lock(dir: &Path) -> Result<File, StorageError> {
    std::fs::create_dir_all(dir).map_err(|source| StorageError::NotWritable {
        path: dir.to_path_buf(),
        source,
    })?;
    // O_DIRECTORY: the descriptor is the directory's, whatever the path names by now.
    let handle = OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::DIRECTORY.bits() as i32)
        .open(dir)
        .map_err(at(dir))?;
    match flock(&handle, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(handle),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Err(StorageError::Locked {
            dir: dir.to_path_buf(),
        }),
        // NFS turns flock into a byte-range lock, which needs a descriptor open for writing:
        // a directory's cannot be. There the guard falls back to a file in the directory.
        Err(e)
            if [
                rustix::io::Errno::BADF,
                rustix::io::Errno::NOLCK,
                rustix::io::Errno::OPNOTSUPP,
            ]
            .contains(&e) =>
        {
            lock_file(dir)
        }
        Err(e) => Err(at(dir)(e.into())),
    }
}

/// The guard where the file system does not lock a directory: `DIR/shepherd.lock`, open for
/// writing and locked. A file can be deleted while the server runs, which would let a second
/// server in, so this is said once at start.
fn lock_file(dir: &Path) -> Result<File, StorageError> {
    let path = dir.join(FALLBACK_LOCK_FILE);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .open(&path)
        .map_err(at(&path))?;
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {
            tracing::warn!(
                dir = %dir.display(),
                lock = %path.display(),
                "this file system does not lock a directory (NFS?): the guard against a second \
                 server is the lock file, and deleting it while the server runs would defeat it"
            );
            Ok(file)
        }
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Err(StorageError::Locked {
            dir: dir.to_path_buf(),
        }),
        Err(e) => Err(at(&path)(e.into())),
    }
}

/// Creates `dir` and proves it writable by creating and removing a file there.
fn ensure_writable(dir: &Path) -> Result<(), StorageError> {
    let not_writable = |source| StorageError::NotWritable {
        path: dir.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(not_writable)?;
    let probe = dir.join(format!("{TEMP_PREFIX}write-check"));
    File::create(&probe).map_err(not_writable)?;
    std::fs::remove_file(&probe).map_err(not_writable)
}

/// Removes the temporary files of snapshots a crash interrupted.
fn remove_temporaries(dir: &Path) -> Result<(), StorageError> {
    for entry in std::fs::read_dir(dir).map_err(at(dir))? {
        let entry = entry.map_err(at(dir))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with(&format!("{TEMP_PREFIX}{SNAPSHOT_PREFIX}.")) {
            let path = entry.path();
            tracing::info!(path = %path.display(), "removing an unfinished snapshot");
            std::fs::remove_file(&path).map_err(at(&path))?;
        }
    }
    Ok(())
}
