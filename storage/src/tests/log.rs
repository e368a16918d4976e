//! The transaction log: round trips, preallocation, torn and corrupt tails.

use std::fs;
use std::path::Path;

use super::sample_entries;
use crate::{TailProblem, TxnLog, log_name, padded_size, read_logs, truncate_torn_tail};

fn write_log(dir: &Path, entries: &[shepherd_protocol::txn::TxnEntry], prealloc: u64) {
    let mut log = TxnLog::new(dir, prealloc);
    for entry in entries {
        log.append(entry).unwrap();
        log.commit(false).unwrap();
    }
}

fn read_all(
    dir: &Path,
    after: i64,
) -> (
    Vec<shepherd_protocol::txn::TxnEntry>,
    Option<crate::TornTail>,
) {
    let mut reader = read_logs(dir, after).unwrap();
    let entries = reader.by_ref().collect::<Result<Vec<_>, _>>().unwrap();
    (entries, reader.torn_tail().cloned())
}

#[test]
fn padding_follows_zookeeper_file_padding() {
    // FilePadding.calculateFileSizeWithPadding, including its own test cases.
    assert_eq!(padded_size(16, 16, 64), 80);
    assert_eq!(padded_size(0, 4096, 4096), 8192);
    assert_eq!(
        padded_size(1, 4096 + 2, 4096),
        4096 + 2,
        "more than 4 KiB left"
    );
    assert_eq!(
        padded_size(5000, 4096, 4096),
        8192,
        "past the end: rounded up"
    );
    assert_eq!(padded_size(100, 16, 0), 16, "no preallocation");
}

#[test]
fn a_preallocated_log_reads_back_exactly_its_entries() {
    let dir = tempfile::tempdir().unwrap();
    let entries = sample_entries(1, 200);
    write_log(dir.path(), &entries, 16 * 1024);
    let path = dir.path().join(log_name(1));
    let len = fs::metadata(&path).unwrap().len();
    assert_eq!((len - 16) % (16 * 1024), 0, "grown in whole steps: {len}");
    let (read, tail) = read_all(dir.path(), 0);
    assert_eq!(read, entries);
    assert_eq!(tail, None);
    // From the middle, and past the end.
    let (read, _) = read_all(dir.path(), 150);
    assert_eq!(read, entries[150..]);
    let (read, _) = read_all(dir.path(), 1000);
    assert!(read.is_empty());
}

#[test]
fn rolled_files_are_read_in_order_from_the_right_file() {
    let dir = tempfile::tempdir().unwrap();
    let entries = sample_entries(1, 30);
    let mut log = TxnLog::new(dir.path(), 4096);
    for (i, entry) in entries.iter().enumerate() {
        if i == 10 || i == 20 {
            log.commit(true).unwrap();
            log.roll().unwrap();
        }
        log.append(entry).unwrap();
    }
    log.commit(true).unwrap();
    for name in ["log.1", "log.b", "log.15"] {
        assert!(dir.path().join(name).exists(), "{name}");
    }
    // A stray file that is not a log is ignored.
    fs::write(dir.path().join("tmp.snapshot.3"), b"junk").unwrap();
    for after in [0, 5, 10, 11, 15, 25, 30] {
        let (read, tail) = read_all(dir.path(), after);
        assert_eq!(read, entries[after as usize..], "after {after}");
        assert_eq!(tail, None);
    }
}

#[test]
fn a_torn_last_entry_is_reported_and_cut_at_every_offset() {
    let dir = tempfile::tempdir().unwrap();
    let entries = sample_entries(1, 6);
    write_log(dir.path(), &entries, 0);
    let path = dir.path().join(log_name(1));
    let full = fs::read(&path).unwrap();
    // Where the last entry starts: write the first five alone.
    let five = tempfile::tempdir().unwrap();
    write_log(five.path(), &entries[..5], 0);
    let start = fs::metadata(five.path().join(log_name(1))).unwrap().len() as usize;
    for cut in start..full.len() {
        fs::write(&path, &full[..cut]).unwrap();
        let (read, tail) = read_all(dir.path(), 0);
        assert_eq!(read, entries[..5], "cut at {cut}");
        if cut == start {
            assert_eq!(tail, None, "a cut between entries is a clean end");
            continue;
        }
        let tail = tail.unwrap_or_else(|| panic!("cut at {cut}: no tail reported"));
        assert_eq!(
            (tail.offset, &tail.problem),
            (start as u64, &TailProblem::Truncated)
        );
        truncate_torn_tail(&tail).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().len(), start as u64);
        assert_eq!(read_all(dir.path(), 0), (entries[..5].to_vec(), None));
    }
}

#[test]
fn a_torn_header_removes_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write_log(dir.path(), &sample_entries(1, 3), 0);
    let path = dir.path().join(log_name(4));
    fs::write(&path, b"ZKLG\0\0").unwrap();
    let (read, tail) = read_all(dir.path(), 0);
    assert_eq!(read.len(), 3);
    let tail = tail.unwrap();
    assert_eq!(
        (tail.offset, tail.problem.clone()),
        (0, TailProblem::Truncated)
    );
    truncate_torn_tail(&tail).unwrap();
    assert!(!path.exists());
}

#[test]
fn a_flipped_bit_in_the_last_entry_stops_reading_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let entries = sample_entries(1, 6);
    write_log(dir.path(), &entries, 0);
    let path = dir.path().join(log_name(1));
    let full = fs::read(&path).unwrap();
    let five = tempfile::tempdir().unwrap();
    write_log(five.path(), &entries[..5], 0);
    let start = fs::metadata(five.path().join(log_name(1))).unwrap().len() as usize;
    for byte in start..full.len() {
        let mut bad = full.clone();
        bad[byte] ^= 0x10;
        fs::write(&path, &bad).unwrap();
        let (read, tail) = read_all(dir.path(), 0);
        assert_eq!(read, entries[..5], "flip at {byte}");
        let Some(tail) = tail else {
            // Only a length that grew past the file's end reads as truncated... or a length
            // flipped to zero, which ZooKeeper also reads as the end.
            assert!(
                (start + 8..start + 12).contains(&byte),
                "flip at {byte}: no tail"
            );
            continue;
        };
        assert_eq!(tail.offset, start as u64, "flip at {byte}");
        let expected_kind = match byte - start {
            0..8 => "checksum",
            8..12 => "any",
            n if n == full.len() - start - 1 => "eor",
            _ => "checksum",
        };
        match (expected_kind, &tail.problem) {
            ("checksum", TailProblem::ChecksumMismatch { .. })
            | ("eor", TailProblem::MissingEor(_))
            | ("any", _) => {}
            (kind, problem) => panic!("flip at {byte}: expected {kind}, got {problem}"),
        }
    }
}

#[test]
fn a_damaged_middle_file_reports_the_later_files() {
    let dir = tempfile::tempdir().unwrap();
    let entries = sample_entries(1, 10);
    let mut log = TxnLog::new(dir.path(), 0);
    for (i, entry) in entries.iter().enumerate() {
        if i == 5 {
            log.commit(false).unwrap();
            log.roll().unwrap();
        }
        log.append(entry).unwrap();
    }
    log.commit(false).unwrap();
    let first = dir.path().join(log_name(1));
    let mut bytes = fs::read(&first).unwrap();
    let last = bytes.len() - 3;
    bytes[last] ^= 1;
    fs::write(&first, bytes).unwrap();
    let (read, tail) = read_all(dir.path(), 0);
    assert_eq!(read, entries[..4]);
    let tail = tail.unwrap();
    assert_eq!(tail.path, first);
    assert_eq!(tail.later_files, vec![dir.path().join(log_name(6))]);
}
