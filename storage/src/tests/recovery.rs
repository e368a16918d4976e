//! Recovery: snapshot then logs, falling back past a damaged snapshot, cutting a torn tail.

use std::convert::Infallible;
use std::fs;

use shepherd_protocol::Acl;
use shepherd_protocol::txn::TxnEntry;

use super::sample_entries;
use super::snapshot::{sample_nodes, write_snapshot};
use crate::{
    DataDir, RecoverOptions, RecoverySink, SnapshotNode, StorageError, ZxidDigest, inspect,
    log_name, recover, recover_with,
};

/// Records what it is given.
#[derive(Debug, Default)]
pub(super) struct Recorder {
    pub sessions: Vec<(i64, i32)>,
    pub acls: Vec<(i64, Vec<Acl>)>,
    pub nodes: Vec<SnapshotNode>,
    pub done: Vec<(i64, Option<ZxidDigest>)>,
    pub txns: Vec<TxnEntry>,
}

impl RecoverySink for Recorder {
    type Error = Infallible;
    fn session(&mut self, id: i64, timeout_ms: i32) -> Result<(), Infallible> {
        self.sessions.push((id, timeout_ms));
        Ok(())
    }
    fn acl(&mut self, id: i64, acl: Vec<Acl>) -> Result<(), Infallible> {
        self.acls.push((id, acl));
        Ok(())
    }
    fn node(&mut self, node: SnapshotNode) -> Result<(), Infallible> {
        self.nodes.push(node);
        Ok(())
    }
    fn snapshot_done(&mut self, zxid: i64, digest: Option<ZxidDigest>) -> Result<(), Infallible> {
        self.done.push((zxid, digest));
        Ok(())
    }
    fn txn(&mut self, entry: &TxnEntry) -> Result<(), Infallible> {
        assert_eq!(self.done.len(), 1, "a txn before the snapshot was done");
        self.txns.push(entry.clone());
        Ok(())
    }
}

#[test]
fn an_empty_directory_recovers_to_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::open(dir.path(), None).unwrap();
    let (sink, report) = recover(&data, Recorder::default).unwrap();
    assert_eq!(sink.done, [(0, None)]);
    assert!(sink.nodes.is_empty() && sink.txns.is_empty());
    assert_eq!(report.last_zxid, 0);
    assert_eq!(report.snapshot, None);
}

/// Logs 1..=40 (rolled at 21), snapshots at 10 and 20.
fn populated() -> (tempfile::TempDir, Vec<TxnEntry>) {
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::open(dir.path(), None).unwrap();
    let entries = sample_entries(1, 40);
    let mut log = data.txn_log(4096);
    for entry in &entries {
        if entry.header.zxid == 21 {
            log.roll().unwrap();
        }
        log.append(entry).unwrap();
        log.commit(false).unwrap();
    }
    write_snapshot(data.snap_dir(), 10, &sample_nodes()[..5]);
    write_snapshot(data.snap_dir(), 20, &sample_nodes());
    (dir, entries)
}

#[test]
fn the_newest_snapshot_then_the_later_logs() {
    let (dir, entries) = populated();
    let data = DataDir::open(dir.path(), None).unwrap();
    let (sink, report) = recover(&data, Recorder::default).unwrap();
    assert_eq!(sink.nodes, sample_nodes());
    assert_eq!(sink.done.len(), 1);
    assert_eq!(sink.done[0].0, 20);
    assert_eq!(sink.txns, entries[20..]);
    assert_eq!(
        report.snapshot,
        Some((20, data.snap_dir().join("snapshot.14")))
    );
    assert_eq!((report.txns_replayed, report.last_zxid), (20, 40));
    assert_eq!(report.tail_cut, None);
}

/// A newest snapshot cut short (ZooKeeper writes in place, so a crash leaves one under its
/// name) is passed over by its tail, as ZooKeeper does, and the older one is loaded.
#[test]
fn a_newest_snapshot_cut_short_is_passed_over_by_its_tail() {
    let (dir, entries) = populated();
    let data = DataDir::open(dir.path(), None).unwrap();
    let newest = data.snap_dir().join("snapshot.14");
    let bytes = fs::read(&newest).unwrap();
    fs::write(&newest, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let mut made = 0;
    let (sink, report) = recover(&data, || {
        made += 1;
        Recorder::default()
    })
    .unwrap();
    assert_eq!(sink.nodes, sample_nodes()[..5]);
    assert_eq!(sink.txns, entries[10..]);
    assert_eq!(report.skipped.len(), 1);
    assert!(
        report.skipped[0].reason.contains("cut short"),
        "{}",
        report.skipped[0].reason
    );
    assert_eq!(made, 2, "one sink per snapshot tried");
}

#[test]
fn a_damaged_newest_snapshot_falls_back_to_the_older_one() {
    let (dir, entries) = populated();
    let data = DataDir::open(dir.path(), None).unwrap();
    let newest = data.snap_dir().join("snapshot.14");
    let mut bytes = fs::read(&newest).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    fs::write(&newest, bytes).unwrap();
    let mut made = 0;
    let (sink, report) = recover(&data, || {
        made += 1;
        Recorder::default()
    })
    .unwrap();
    assert_eq!(made, 2, "a fresh sink for the older snapshot");
    assert_eq!(sink.nodes, sample_nodes()[..5]);
    assert_eq!(sink.txns, entries[10..]);
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(report.skipped[0].path, newest);
    assert_eq!(report.snapshot.map(|s| s.0), Some(10));
    // Every snapshot damaged: an error, never an empty tree.
    let older = data.snap_dir().join("snapshot.a");
    fs::write(&older, b"ZKSN").unwrap();
    match recover(&data, Recorder::default) {
        Err(StorageError::NoValidSnapshot { skipped, .. }) => assert_eq!(skipped.len(), 2),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_torn_tail_is_cut_and_recovery_goes_on() {
    let (dir, entries) = populated();
    let data = DataDir::open(dir.path(), None).unwrap();
    let last = data.log_dir().join(log_name(21));
    tear_last_entry(&last);
    let (sink, report) = recover(&data, Recorder::default).unwrap();
    assert_eq!(sink.txns, entries[20..39]);
    let tail = report.tail_cut.unwrap();
    assert_eq!(tail.path, last);
    assert!(fs::metadata(&last).unwrap().len() == tail.offset);
    // Recovering again finds a clean log.
    let (sink, report) = recover(&data, Recorder::default).unwrap();
    assert_eq!((sink.txns.len(), report.tail_cut), (19, None));
    // A damaged file with later files after it stops recovery.
    let first = data.log_dir().join(log_name(1));
    let mut bytes = fs::read(&first).unwrap();
    let n = bytes.iter().rposition(|b| *b == b'B').unwrap();
    bytes[n] = b'C';
    fs::write(&first, bytes).unwrap();
    fs::remove_file(data.snap_dir().join("snapshot.14")).unwrap();
    fs::remove_file(data.snap_dir().join("snapshot.a")).unwrap();
    let trust = RecoverOptions {
        trust_empty_snapshot: true,
    };
    assert!(matches!(
        recover_with(&data, trust, Recorder::default),
        Err(StorageError::CorruptLog { .. })
    ));
}

/// Tears the last entry of a preallocated log: the file cut 5 bytes before that entry's end
/// (its trailing `B`), as a crash mid-write leaves it.
fn tear_last_entry(log: &std::path::Path) {
    let len = fs::metadata(log).unwrap().len();
    let bytes = fs::read(log).unwrap();
    let end = bytes.iter().rposition(|b| *b == b'B').unwrap() as u64 + 1;
    assert!(end < len, "preallocated");
    fs::OpenOptions::new()
        .write(true)
        .open(log)
        .unwrap()
        .set_len(end - 5)
        .unwrap();
}

/// Every file of a directory with its bytes, to show that a refusal changed nothing.
fn files_of(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_of(&path));
        } else {
            out.push((path.clone(), fs::read(&path).unwrap()));
        }
    }
    out.sort();
    out
}

/// Logs with no snapshot (the snapshot volume missing, every snapshot removed by hand) are
/// refused as ZooKeeper refuses them, naming the files and the override, and nothing on disk
/// changes; trusted, they replay from an empty tree. Before the refusal, the logs were
/// replayed from zxid 0 whatever they held, so a tree missing every write before the first
/// log was served (and then made permanent by the next snapshot and purge).
#[test]
fn logs_without_any_snapshot_are_refused_unless_trusted() {
    let (dir, entries) = populated();
    let data = DataDir::open(dir.path(), None).unwrap();
    for name in ["snapshot.a", "snapshot.14"] {
        fs::remove_file(data.snap_dir().join(name)).unwrap();
    }
    // A torn tail too: a refusal must not cut it.
    tear_last_entry(&data.log_dir().join(log_name(21)));
    let before = files_of(dir.path());
    let error = recover(&data, Recorder::default).unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(
            &error,
            StorageError::LogsWithoutSnapshot { logs, first_zxid: Some(1), .. } if logs.len() == 2
        ),
        "{error:?}"
    );
    for part in [
        "No snapshot found, but there are log entries",
        "log.1",
        "log.15",
        "zookeeper.snapshot.trust.empty=true",
        "nothing was changed on disk",
    ] {
        assert!(message.contains(part), "{part:?} in {message}");
    }
    assert_eq!(files_of(dir.path()), before, "a refusal changes nothing");
    let inspection = inspect(dir.path(), None).unwrap();
    assert!(!inspection.recovers(), "{inspection}");
    assert!(
        inspection.to_string().contains("trust.empty"),
        "{inspection}"
    );
    let trust = RecoverOptions {
        trust_empty_snapshot: true,
    };
    let (sink, report) = recover_with(&data, trust, Recorder::default).unwrap();
    assert_eq!(sink.done, [(0, None)]);
    assert_eq!(sink.txns, entries[..39]);
    assert_eq!(report.last_zxid, 39);
}

/// Logs whose files hold no entry (a preallocated file the first write never reached) are
/// nothing to lose: the directory starts fresh.
#[test]
fn logs_without_entries_and_no_snapshot_start_fresh() {
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::open(dir.path(), None).unwrap();
    fs::write(data.log_dir().join(log_name(1)), [0u8; 64]).unwrap();
    let (sink, report) = recover(&data, Recorder::default).unwrap();
    assert_eq!(sink.done, [(0, None)]);
    assert!(sink.txns.is_empty());
    assert_eq!(report.last_zxid, 0);
}

/// The operator's repair will not leave what recovery refuses: cutting below the oldest
/// snapshot would set every snapshot aside and leave logs no snapshot starts.
#[test]
fn a_repair_below_the_oldest_snapshot_is_refused_and_changes_nothing() {
    let (dir, _) = populated();
    let before = files_of(dir.path());
    match crate::truncate_after(dir.path(), None, 5) {
        Err(StorageError::Refused(why)) => {
            assert!(
                why.contains("every snapshot") && why.contains("0xa"),
                "{why}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(files_of(dir.path()), before);
    crate::truncate_after(dir.path(), None, 10).unwrap();
    let data = DataDir::open(dir.path(), None).unwrap();
    let (_, report) = recover(&data, Recorder::default).unwrap();
    assert_eq!(report.last_zxid, 10);
}
