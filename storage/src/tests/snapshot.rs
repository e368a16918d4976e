//! Snapshots: round trips, and every truncation or flipped bit is an error.

use std::fs;
use std::path::{Path, PathBuf};

use shepherd_protocol::txn::StatPersisted;
use shepherd_protocol::{Acl, Id, perms};

use crate::{SnapshotNode, SnapshotReader, SnapshotWriter, ZxidDigest, encode_node};

pub(super) fn stat(zxid: i64) -> StatPersisted {
    StatPersisted {
        czxid: zxid,
        mzxid: zxid,
        ctime: 1_700_000_000_000 + zxid,
        mtime: 1_700_000_000_000 + zxid,
        version: 0,
        cversion: 0,
        aversion: 0,
        ephemeral_owner: 0,
        pzxid: zxid,
    }
}

pub(super) fn sample_nodes() -> Vec<SnapshotNode> {
    let mut nodes = vec![
        SnapshotNode {
            path: String::new(),
            data: Some(Vec::new()),
            acl: -1,
            stat: stat(0),
        },
        SnapshotNode {
            path: "/zookeeper".into(),
            data: Some(Vec::new()),
            acl: -1,
            stat: stat(0),
        },
    ];
    for i in 1..40 {
        nodes.push(SnapshotNode {
            path: format!("/n{i}"),
            data: (i % 7 != 0).then(|| vec![i as u8; i * 3]),
            acl: if i % 2 == 0 { 1 } else { 2 },
            stat: stat(i as i64),
        });
    }
    nodes
}

pub(super) fn sample_acls() -> Vec<(i64, Vec<Acl>)> {
    vec![
        (1, Acl::open_unsafe()),
        (
            2,
            vec![Acl {
                perms: perms::READ,
                id: Id::new("digest", "user:hash="),
            }],
        ),
    ]
}

/// Writes a snapshot of `nodes` in slices of 7 records.
pub(super) fn write_snapshot(dir: &Path, zxid: i64, nodes: &[SnapshotNode]) -> PathBuf {
    let mut writer = SnapshotWriter::create(dir, zxid).unwrap();
    for chunk in nodes.chunks(7) {
        let mut bytes = Vec::new();
        for n in chunk {
            encode_node(&mut bytes, &n.path, n.data.as_deref(), n.acl, &n.stat);
        }
        writer.append_nodes(&bytes).unwrap();
    }
    let acls = sample_acls();
    writer
        .finish(
            &[(0x100, 30_000), (0x101, 4_000)],
            acls.iter().map(|(id, list)| (*id, list.as_slice())),
            Some((zxid, 0x1234_5678_9abc)),
            true,
        )
        .unwrap()
}

fn read_snapshot(path: &Path) -> std::io::Result<(SnapshotReader, Vec<SnapshotNode>)> {
    let mut reader = SnapshotReader::open(path)?;
    let mut nodes = Vec::new();
    while let Some(node) = reader.next_node()? {
        nodes.push(node);
    }
    Ok((reader, nodes))
}

#[test]
fn a_snapshot_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = sample_nodes();
    let path = write_snapshot(dir.path(), 0x2a, &nodes);
    assert_eq!(path, dir.path().join("snapshot.2a"));
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["snapshot.2a"], "no temporary file left behind");
    let (reader, read) = read_snapshot(&path).unwrap();
    assert_eq!(read, nodes);
    assert_eq!(reader.sessions(), [(0x100, 30_000), (0x101, 4_000)]);
    assert_eq!(reader.acls(), sample_acls());
    assert_eq!(
        reader.digest(),
        Some(ZxidDigest {
            zxid: 0x2a,
            version: 2,
            digest: 0x1234_5678_9abc
        })
    );
}

#[test]
fn an_unfinished_writer_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = SnapshotWriter::create(dir.path(), 5).unwrap();
    writer.append_nodes(b"partial").unwrap();
    drop(writer);
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// Writes `cut` to `bad` with a finished snapshot's last five bytes after it (so that it
/// passes the tail check) and asserts that the reader still refuses it.
fn assert_sealed_cut_refused(bad: &Path, cut: &[u8]) {
    let mut sealed = cut.to_vec();
    sealed.extend_from_slice(&[0, 0, 0, 1, b'/']);
    fs::write(bad, &sealed).unwrap();
    assert!(
        read_snapshot(bad).is_err(),
        "a cut of {} bytes, sealed, read as whole",
        cut.len()
    );
}

#[test]
fn every_truncation_and_flipped_bit_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = sample_nodes()[..6].to_vec();
    let path = write_snapshot(dir.path(), 9, &nodes);
    let good = fs::read(&path).unwrap();
    let bad = dir.path().join("bad");
    // A file that ends at the first seal is whole: snapshots from before ZooKeeper 3.6 have
    // no digest section (20 bytes) nor its seal (8 + 4 + 1).
    let without_digest = good.len() - 33;
    for cut in 0..good.len() {
        fs::write(&bad, &good[..cut]).unwrap();
        if cut == without_digest {
            assert_eq!(read_snapshot(&bad).unwrap().0.digest(), None);
            continue;
        }
        assert!(read_snapshot(&bad).is_err(), "cut at {cut} read as whole");
        // The same cut given a finished file's last five bytes passes the tail check, so the
        // reader's own checks (lengths against the file, the seals) must refuse it. Not so a
        // cut that leaves a seal's checksum whole: the path after it is read and ignored, as
        // ZooKeeper's `checkSealIntegrity` does, so the file reads as whole.
        if cut + 5 >= good.len() || cut + 5 == without_digest {
            continue;
        }
        assert_sealed_cut_refused(&bad, &good[..cut]);
    }
    // The very last byte is the second seal's "/", which ZooKeeper reads and ignores too.
    for byte in 0..good.len() - 1 {
        let mut flipped = good.clone();
        flipped[byte] ^= 0x04;
        fs::write(&bad, &flipped).unwrap();
        assert!(read_snapshot(&bad).is_err(), "flip at {byte} read as whole");
    }
}

/// A snapshot larger than the reader's buffer, with records across its refills and one data
/// field larger than the whole buffer, reads back whole; a flipped bit anywhere in the nodes
/// (summed over several refills) or a cut is still an error.
#[test]
fn a_snapshot_larger_than_the_read_buffer_round_trips_and_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let mut nodes = sample_nodes();
    for i in 0..3_000 {
        nodes.push(SnapshotNode {
            path: format!("/big/{i:05}"),
            data: Some(vec![(i % 251) as u8; 300 + i % 17]),
            acl: -1,
            stat: stat(1_000 + i as i64),
        });
    }
    nodes.push(SnapshotNode {
        path: "/huge".into(),
        data: Some((0..700_000u32).map(|b| (b % 253) as u8).collect()),
        acl: 1,
        stat: stat(9_999),
    });
    let path = write_snapshot(dir.path(), 0x51, &nodes);
    let good = fs::read(&path).unwrap();
    assert!(
        good.len() > 3 * 256 * 1024,
        "spans several buffers: {}",
        good.len()
    );
    let (reader, read) = read_snapshot(&path).unwrap();
    assert_eq!(read, nodes);
    assert!(reader.digest().is_some());
    let bad = dir.path().join("bad");
    for byte in [
        100,
        256 * 1024 - 1,
        256 * 1024,
        600_000,
        good.len() / 2,
        good.len() - 40,
    ] {
        let mut flipped = good.clone();
        flipped[byte] ^= 0x10;
        fs::write(&bad, &flipped).unwrap();
        assert!(read_snapshot(&bad).is_err(), "flip at {byte} read as whole");
    }
    for cut in [256 * 1024, 256 * 1024 + 1, good.len() - 34] {
        fs::write(&bad, &good[..cut]).unwrap();
        assert!(read_snapshot(&bad).is_err(), "cut at {cut} read as whole");
        assert_sealed_cut_refused(&bad, &good[..cut]);
    }
}
