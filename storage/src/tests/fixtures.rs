//! The files Debian's ZooKeeper 3.8 wrote (storage/tests/fixtures/zk38, see its README.md):
//! we read every entry and snapshot, and writing the same records gives the same bytes.

use std::fs;
use std::path::{Path, PathBuf};

use shepherd_protocol::txn::TxnEntry;

use super::recovery::Recorder;
use crate::{
    DataDir, LOG_PREFIX, SNAPSHOT_PREFIX, SnapshotReader, SnapshotWriter, TxnLog, encode_node,
    read_logs, recover, zxid_from_name,
};

/// The preallocation the fixture was made with (`-Dzookeeper.preAllocSize=8`, in KB).
const FIXTURE_PREALLOC: u64 = 8 * 1024;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/zk38/version-2")
}

fn fixture_files(prefix: &str) -> Vec<(i64, PathBuf)> {
    let mut files: Vec<_> = fs::read_dir(fixture_dir())
        .unwrap()
        .filter_map(|e| {
            let path = e.unwrap().path();
            let zxid = zxid_from_name(path.file_name()?.to_str()?, prefix)?;
            Some((zxid, path))
        })
        .collect();
    files.sort();
    assert!(files.len() >= 3, "fixture has too few {prefix} files");
    files
}

/// The raw bytes of every entry of a log file, parsed by hand.
fn raw_entries(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut at = 16;
    let mut out = Vec::new();
    loop {
        let len = i32::from_be_bytes(bytes[at + 8..at + 12].try_into().unwrap());
        if len == 0 {
            return out;
        }
        let len = len as usize;
        out.push(bytes[at + 12..at + 12 + len].to_vec());
        assert_eq!(bytes[at + 12 + len], b'B');
        at += 12 + len + 1;
    }
}

#[test]
fn every_log_entry_reads_and_re_encodes_to_the_same_bytes() {
    let mut kinds = std::collections::BTreeSet::new();
    let mut total = 0;
    let mut digests = 0;
    for (_, path) in fixture_files(LOG_PREFIX) {
        for raw in raw_entries(&fs::read(&path).unwrap()) {
            let entry = TxnEntry::decode(&raw).unwrap_or_else(|e| panic!("{path:?}: {e}"));
            digests += usize::from(entry.digest.is_some());
            let mut again = Vec::new();
            entry.encode(&mut again);
            assert_eq!(again, raw, "{path:?} zxid {:#x}", entry.header.zxid);
            kinds.insert(entry.header.op_type);
            total += 1;
        }
    }
    // create, delete, setData, setACL, error, multi, create2, createContainer,
    // deleteContainer, createTTL, createSession, closeSession.
    for kind in [1, 2, 5, 7, -1, 14, 15, 19, 20, 21, -10, -11] {
        assert!(
            kinds.contains(&kind),
            "no txn of type {kind} in the fixture: {kinds:?}"
        );
    }
    assert!(
        digests > total / 2,
        "ZooKeeper 3.8 logs digests: {digests} of {total}"
    );
    // The reader sees the same entries across all files.
    let mut reader = read_logs(&fixture_dir(), 0).unwrap();
    let read = reader.by_ref().collect::<Result<Vec<_>, _>>().unwrap();
    assert_eq!(reader.torn_tail(), None);
    assert_eq!(read.len(), total);
    assert!(
        read.windows(2)
            .all(|w| w[1].header.zxid == w[0].header.zxid + 1)
    );
}

#[test]
fn our_writer_rewrites_each_log_byte_for_byte() {
    for (zxid, path) in fixture_files(LOG_PREFIX) {
        let original = fs::read(&path).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut log = TxnLog::new(dir.path(), FIXTURE_PREALLOC);
        // ZooKeeper committed after every entry: the script sent one request at a time.
        for raw in raw_entries(&original) {
            log.append(&TxnEntry::decode(&raw).unwrap()).unwrap();
            log.commit(false).unwrap();
        }
        let ours = fs::read(dir.path().join(path.file_name().unwrap())).unwrap();
        assert_eq!(
            ours.len(),
            original.len(),
            "{path:?}: length (preallocation)"
        );
        assert!(
            ours == original,
            "{path:?} (first log zxid {zxid:#x}) differs"
        );
    }
}

#[test]
fn every_snapshot_reads_and_rewrites_byte_for_byte() {
    for (zxid, path) in fixture_files(SNAPSHOT_PREFIX) {
        let mut reader = SnapshotReader::open(&path).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut writer = SnapshotWriter::create(dir.path(), zxid).unwrap();
        let mut count = 0;
        while let Some(n) = reader
            .next_node()
            .unwrap_or_else(|e| panic!("{path:?}: {e}"))
        {
            if count == 0 {
                assert_eq!(n.path, "", "the root comes first, as the empty path");
            }
            let mut bytes = Vec::new();
            encode_node(&mut bytes, &n.path, n.data.as_deref(), n.acl, &n.stat);
            writer.append_nodes(&bytes).unwrap();
            count += 1;
        }
        assert!(count >= 3, "{path:?}: {count} nodes");
        if zxid > 0 {
            let digest = reader
                .digest()
                .unwrap_or_else(|| panic!("{path:?}: no digest"));
            assert!(
                digest.zxid >= zxid,
                "{path:?}: digest at {:#x}",
                digest.zxid
            );
        }
        let acls = reader.acls();
        let ours = writer
            .finish(
                reader.sessions(),
                acls.iter().map(|(id, list)| (*id, list.as_slice())),
                reader.digest().map(|d| (d.zxid, d.digest)),
                false,
            )
            .unwrap();
        assert!(
            fs::read(ours).unwrap() == fs::read(&path).unwrap(),
            "{path:?} differs"
        );
    }
}

#[test]
fn the_fixture_directory_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let v2 = dir.path().join("version-2");
    fs::create_dir(&v2).unwrap();
    for entry in fs::read_dir(fixture_dir()).unwrap() {
        let path = entry.unwrap().path();
        fs::copy(&path, v2.join(path.file_name().unwrap())).unwrap();
    }
    let data = DataDir::open(dir.path(), None).unwrap();
    let (sink, report) = recover(&data, Recorder::default).unwrap();
    let newest = fixture_files(SNAPSHOT_PREFIX).last().unwrap().0;
    assert_eq!(report.snapshot.as_ref().map(|s| s.0), Some(newest));
    assert!(report.skipped.is_empty() && report.tail_cut.is_none());
    let last_logged = read_logs(&fixture_dir(), 0)
        .unwrap()
        .last()
        .unwrap()
        .unwrap();
    assert_eq!(report.last_zxid, last_logged.header.zxid);
    assert!(sink.nodes.iter().any(|n| n.path == "/app"));
}
