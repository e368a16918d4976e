//! The data directory: layout, lock, secret, purge.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use super::sample_entries;
use super::snapshot::{sample_nodes, write_snapshot};
use crate::{DataDir, SECRET_FILE, StorageError};

#[test]
fn a_second_open_fails_until_the_first_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let first = DataDir::open(dir.path(), None).unwrap();
    assert!(first.snap_dir().ends_with("version-2") && first.snap_dir().is_dir());
    match DataDir::open(dir.path(), None) {
        Err(e @ StorageError::Locked { .. }) => {
            assert!(e.to_string().contains("in use by another server"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    drop(first);
    DataDir::open(dir.path(), None).unwrap();
}

/// A tidy-up that deletes every file at the top of the directories (a stale-pid clean-up
/// removing what looks like a lock file) cannot let a second server in: the lock is on the
/// directories themselves.
#[test]
fn deleting_files_cannot_break_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let (snaps, logs) = (dir.path().join("data"), dir.path().join("logs"));
    for log_dir in [None, Some(logs.as_path())] {
        let first = DataDir::open(&snaps, log_dir).unwrap();
        first.secret().unwrap();
        for top in [&snaps, &logs] {
            for entry in fs::read_dir(top).into_iter().flatten() {
                let path = entry.unwrap().path();
                if path.is_file() {
                    fs::remove_file(&path).unwrap();
                }
            }
        }
        match DataDir::open(&snaps, log_dir) {
            Err(StorageError::Locked { dir }) => assert_eq!(dir, snaps),
            other => panic!("a second open after the tidy-up: {other:?}"),
        }
        if let Some(logs) = log_dir {
            // The log directory alone, under another data directory, is guarded too.
            match DataDir::open(&dir.path().join("other"), Some(logs)) {
                Err(StorageError::Locked { dir }) => assert_eq!(dir, logs),
                other => panic!("a second server on the log directory: {other:?}"),
            }
        }
        drop(first);
        DataDir::open(&snaps, log_dir).unwrap();
    }
}

#[test]
fn a_separate_log_directory_must_not_hold_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let (snaps, logs) = (dir.path().join("data"), dir.path().join("logs"));
    let data = DataDir::open(&snaps, Some(&logs)).unwrap();
    assert_eq!(data.log_dir(), logs.join("version-2"));
    write_snapshot(data.log_dir(), 3, &sample_nodes()[..2]);
    drop(data);
    assert!(matches!(
        DataDir::open(&snaps, Some(&logs)),
        Err(StorageError::Misplaced { .. })
    ));
}

#[test]
fn an_unwritable_directory_is_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    fs::write(&file, b"").unwrap();
    let err = DataDir::open(&file.join("sub"), None).unwrap_err();
    assert!(matches!(err, StorageError::NotWritable { .. }), "{err:?}");
    assert!(err.to_string().contains("plain-file"), "{err}");
}

#[test]
fn the_secret_is_created_once_private_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::open(dir.path(), None).unwrap();
    let secret = data.secret().unwrap();
    assert_ne!(secret, [0; 32]);
    let path = dir.path().join(SECRET_FILE);
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(data.secret().unwrap(), secret);
    drop(data);
    let data = DataDir::open(dir.path(), None).unwrap();
    assert_eq!(data.secret().unwrap(), secret);
    fs::write(&path, b"short").unwrap();
    assert!(matches!(
        data.secret(),
        Err(StorageError::BadSecret { len: 5, .. })
    ));
}

#[test]
fn purge_keeps_the_newest_snapshots_and_the_logs_they_need() {
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::open(dir.path(), None).unwrap();
    // Logs starting at 1, 11, 21, 31, 41; snapshots at 5, 15, 25, 35, 45.
    let entries = sample_entries(1, 50);
    let mut log = data.txn_log(0);
    for e in &entries {
        if e.header.zxid % 10 == 1 {
            log.roll().unwrap();
        }
        log.append(e).unwrap();
    }
    log.commit(false).unwrap();
    for zxid in [5, 15, 25, 35, 45] {
        write_snapshot(data.snap_dir(), zxid, &sample_nodes()[..3]);
    }
    // An unfinished snapshot does not count among the ones kept.
    fs::write(data.snap_dir().join("snapshot.64"), b"ZKSN torn").unwrap();
    let mut removed = data.purge(3).unwrap();
    removed.sort();
    let names: Vec<_> = removed
        .iter()
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_owned())
        .collect();
    // The oldest kept is snapshot.19 (25): log.15 (21) covers it and stays.
    assert_eq!(names, ["log.1", "log.b", "snapshot.5", "snapshot.f"]);
    let left: Vec<_> = data.logs().unwrap().into_iter().map(|(z, _)| z).collect();
    assert_eq!(left, [21, 31, 41]);
}
