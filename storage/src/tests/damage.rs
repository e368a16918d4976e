//! Torn writes are cut; corruption is refused and leaves every file as it was.

use std::fs;
use std::path::{Path, PathBuf};

use super::recovery::Recorder;
use super::sample_entries;
use crate::{
    DataDir, RecoverOptions, StorageError, TailProblem, TxnLog, inspect, log_name, recover,
    recover_with, truncate_after,
};

/// The preallocation of the logs written here, as ZooKeeper's default is 64 MiB: enough that
/// every entry is followed by zeros.
const PREALLOC: u64 = 256 * 1024;

/// A data directory with one preallocated log of `n` entries (zxids 1..=n) after a first
/// snapshot at zxid 0 (as both servers write one before the first transaction); the log's
/// path and the offset where each entry starts (index 0: zxid 1).
fn one_log(n: usize) -> (tempfile::TempDir, PathBuf, Vec<u64>) {
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::open(dir.path(), None).unwrap();
    first_snapshot(&data);
    let entries = sample_entries(1, n);
    let mut log = data.txn_log(PREALLOC);
    for entry in &entries {
        log.append(entry).unwrap();
        log.commit(false).unwrap();
    }
    drop(log);
    // Where each entry starts: after the 16-byte file header and the entries before it.
    let offsets = entries
        .iter()
        .scan(16, |at, entry| {
            let start = *at;
            *at += entry_len(entry);
            Some(start)
        })
        .collect();
    let path = data.log_dir().join(log_name(1));
    (dir, path, offsets)
}

/// The bytes one entry takes in a log: checksum, length, record, end byte.
fn entry_len(entry: &shepherd_protocol::txn::TxnEntry) -> u64 {
    let scratch = tempfile::tempdir().unwrap();
    let mut log = TxnLog::new(scratch.path(), 0);
    log.append(entry).unwrap();
    log.commit(false).unwrap();
    let file = fs::metadata(scratch.path().join(log_name(entry.header.zxid))).unwrap();
    file.len() - 16
}

/// Every file under `dir`, with its bytes.
fn snapshot_of(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = fs::read(&path).unwrap();
                files.push((path, bytes));
            }
        }
    }
    files.sort();
    files
}

fn flip(path: &Path, at: u64, mask: u8) {
    let mut bytes = fs::read(path).unwrap();
    bytes[at as usize] ^= mask;
    fs::write(path, bytes).unwrap();
}

/// Recovery refuses with `DamagedLog` after zxid `last_good`, and nothing on disk changed.
fn assert_refused_unchanged(dir: &Path, last_good: i64) {
    let before = snapshot_of(dir);
    let data = DataDir::open(dir, None).unwrap();
    match recover(&data, Recorder::default) {
        Err(StorageError::DamagedLog { tail }) => {
            assert_eq!(tail.last_zxid, last_good, "{tail}");
            let message = StorageError::DamagedLog { tail }.to_string();
            assert!(
                message.contains("log.1") && message.contains("offset"),
                "{message}"
            );
        }
        other => panic!("expected DamagedLog, got {other:?}"),
    }
    drop(data);
    assert_eq!(snapshot_of(dir), before, "files changed");
}

#[test]
fn a_flipped_bit_in_a_middle_entry_is_refused_and_the_files_are_unchanged() {
    // Entry 21 of 52: a bit of its record, of its checksum, of its end byte.
    let (dir, path, offsets) = one_log(52);
    let start = offsets[20];
    let end = offsets[21];
    for (at, mask) in [(start + 20, 0x04), (start + 3, 0x80), (end - 1, 0x01)] {
        flip(&path, at, mask);
        assert_refused_unchanged(dir.path(), 20);
        flip(&path, at, mask);
    }
    // Undamaged again: all 52 recover.
    let data = DataDir::open(dir.path(), None).unwrap();
    let (sink, report) = recover(&data, Recorder::default).unwrap();
    assert_eq!((sink.txns.len(), report.tail_cut), (52, None));
}

#[test]
fn a_damaged_length_is_corruption_not_the_end() {
    let (dir, path, offsets) = one_log(52);
    let len_at = offsets[20] + 8;
    // A high bit: the length runs past the end of the file, longer than any record.
    flip(&path, len_at, 0x40);
    assert_refused_unchanged(dir.path(), 20);
    flip(&path, len_at, 0x40);
    // Zeroed: reads like the preallocated end, but data follows.
    let mut bytes = fs::read(&path).unwrap();
    let saved = bytes[len_at as usize..len_at as usize + 4].to_vec();
    bytes[len_at as usize..len_at as usize + 4].fill(0);
    fs::write(&path, &bytes).unwrap();
    assert_refused_unchanged(dir.path(), 20);
    bytes[len_at as usize..len_at as usize + 4].copy_from_slice(&saved);
    fs::write(&path, &bytes).unwrap();
}

#[test]
fn a_torn_write_in_a_preallocated_log_is_cut() {
    // The last entry half written: its first half on disk, then the preallocated zeros.
    let (dir, path, offsets) = one_log(10);
    let start = offsets[9];
    let full = fs::read(&path).unwrap();
    let last_end = full.iter().rposition(|b| *b != 0).unwrap() as u64 + 1;
    let mut torn = full.clone();
    let half = start + (last_end - start) / 2;
    torn[half as usize..last_end as usize].fill(0);
    fs::write(&path, &torn).unwrap();
    let data = DataDir::open(dir.path(), None).unwrap();
    let (sink, report) = recover(&data, Recorder::default).unwrap();
    assert_eq!(sink.txns.len(), 9);
    let tail = report.tail_cut.unwrap();
    assert_eq!((tail.offset, tail.last_zxid), (start, 9));
    assert_eq!(tail.problem, TailProblem::MissingEor(0));
    assert_eq!(fs::metadata(&path).unwrap().len(), start);
    // Only the checksum and length written: a torn header of the record, cut as well.
    let (dir, path, offsets) = one_log(10);
    let start = offsets[9];
    let mut bytes = fs::read(&path).unwrap();
    bytes[start as usize + 12..].fill(0);
    fs::write(&path, &bytes).unwrap();
    let data = DataDir::open(dir.path(), None).unwrap();
    let (sink, report) = recover(&data, Recorder::default).unwrap();
    assert_eq!(
        (sink.txns.len(), report.tail_cut.map(|t| t.offset)),
        (9, Some(start))
    );
}

#[test]
fn check_reports_the_damage_and_repair_keeps_a_copy_of_what_it_cuts() {
    let (dir, path, offsets) = one_log(52);
    let clean = inspect(dir.path(), None).unwrap();
    assert!(clean.recovers() && clean.damage.is_none(), "{clean}");
    assert_eq!((clean.entries, clean.last_zxid), (52, 52));
    flip(&path, offsets[20] + 20, 0x04);
    let damaged_bytes = fs::read(&path).unwrap();
    let before = snapshot_of(dir.path());
    let found = inspect(dir.path(), None).unwrap();
    assert_eq!(snapshot_of(dir.path()), before, "check changes nothing");
    assert!(!found.recovers(), "{found}");
    let damage = found.damage.clone().unwrap();
    // Not torn: recovery refuses it.
    assert_eq!(
        (damage.refusal.is_some(), damage.tail.last_zxid),
        (true, 20)
    );
    assert!(
        found.to_string().contains("--truncate-after 0x14"),
        "{found}"
    );

    // Keeping more than the damage allows is refused, and changes nothing.
    assert!(matches!(
        truncate_after(dir.path(), None, 30),
        Err(StorageError::Refused(_))
    ));
    assert_eq!(snapshot_of(dir.path()), before);

    let repair = truncate_after(dir.path(), None, 20).unwrap();
    assert_eq!(repair.cut, Some((path.clone(), offsets[20])));
    let copy = repair.backup.join(path.file_name().unwrap());
    assert_eq!(
        fs::read(&copy).unwrap(),
        damaged_bytes,
        "the original is kept"
    );
    let data = DataDir::open(dir.path(), None).unwrap();
    let (sink, report) = recover(&data, Recorder::default).unwrap();
    assert_eq!((sink.txns.len(), report.tail_cut), (20, None));
    drop(data);
    assert!(inspect(dir.path(), None).unwrap().recovers());
}

/// The snapshot of a fresh tree at zxid 0 that a new directory starts with.
fn first_snapshot(data: &DataDir) {
    super::snapshot::write_snapshot(data.snap_dir(), 0, &super::snapshot::sample_nodes()[..2]);
}

/// Logs 1..=30 in three files (rolled at 11 and 21) after the first snapshot.
fn three_logs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::open(dir.path(), None).unwrap();
    first_snapshot(&data);
    let mut log = data.txn_log(PREALLOC);
    for entry in &sample_entries(1, 30) {
        if matches!(entry.header.zxid, 11 | 21) {
            log.roll().unwrap();
        }
        log.append(entry).unwrap();
        log.commit(false).unwrap();
    }
    dir
}

/// Recovery refuses with `LogGap` after `after`, next `found`, and nothing on disk changed.
fn assert_gap_refused_unchanged(dir: &Path, after: i64, found: i64) {
    let before = snapshot_of(dir);
    let data = DataDir::open(dir, None).unwrap();
    match recover(&data, Recorder::default) {
        Err(error @ StorageError::LogGap { .. }) => {
            let message = error.to_string();
            let StorageError::LogGap {
                after: a, found: f, ..
            } = error
            else {
                unreachable!()
            };
            assert_eq!((a, f), (after, found), "{message}");
            assert!(message.contains(&log_name(found)), "{message}");
        }
        Ok((_, report)) => panic!("expected LogGap, recovered: {report}"),
        Err(other) => panic!("expected LogGap, got {other}"),
    }
    drop(data);
    assert_eq!(snapshot_of(dir), before, "files changed");
}

#[test]
fn a_missing_middle_log_file_is_refused_and_the_files_are_unchanged() {
    let dir = three_logs();
    let data = DataDir::open(dir.path(), None).unwrap();
    fs::remove_file(data.log_dir().join(log_name(11))).unwrap();
    drop(data);
    assert_gap_refused_unchanged(dir.path(), 10, 21);
}

#[test]
fn a_snapshot_its_logs_do_not_follow_is_refused_and_the_files_are_unchanged() {
    // The first file gone and a snapshot at 5 (as if copied from another server's directory):
    // the logs resume at 11, so transactions 6..=10 are missing.
    let dir = three_logs();
    let data = DataDir::open(dir.path(), None).unwrap();
    fs::remove_file(data.log_dir().join(log_name(1))).unwrap();
    super::snapshot::write_snapshot(data.snap_dir(), 5, &super::snapshot::sample_nodes());
    drop(data);
    assert_gap_refused_unchanged(dir.path(), 5, 11);
    // After the first snapshot (zxid 0), the logs must begin at 1 as well.
    let data = DataDir::open(dir.path(), None).unwrap();
    fs::remove_file(data.snap_dir().join("snapshot.5")).unwrap();
    drop(data);
    assert_gap_refused_unchanged(dir.path(), 0, 11);
    // Trusted without any snapshot, the logs alone recover wherever they start.
    let data = DataDir::open(dir.path(), None).unwrap();
    fs::remove_file(data.snap_dir().join("snapshot.0")).unwrap();
    let trust = RecoverOptions {
        trust_empty_snapshot: true,
    };
    let (sink, _) = recover_with(&data, trust, Recorder::default).unwrap();
    assert_eq!(sink.txns.len(), 20);
}
