//! A data directory written by real ZooKeeper 3.8 (`storage/tests/fixtures/zk38`, see its README),
//! loaded the way ZooKeeper loads it: each snapshot restored through `core::Restore`, every
//! later log entry replayed with `Core::replay`. ZooKeeper's own digests must agree with the
//! core's tree digest wherever ZooKeeper itself compares them (`FileSnap.deserialize`,
//! `DataTree.compareSnapshotDigests`, `DataTree.compareDigest`), and every snapshot, followed
//! by the log, must come to the same tree as the oldest one followed by the log.

use std::path::{Path, PathBuf};

use shepherd_server::core::{Core, CoreConfig, NodeInfo, Now, Restore};
use shepherd_server::storage::{SnapshotReader, read_logs};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../storage/tests/fixtures/zk38/version-2")
}

const NOW: Now = Now {
    mono_ms: 0,
    wall_ms: 1_700_000_000_000,
};

fn config() -> CoreConfig {
    CoreConfig {
        log_txns: true,
        extended_types_enabled: true,
        ..CoreConfig::default()
    }
}

/// The snapshots, oldest first, by the zxid in their names.
fn snapshots() -> Vec<(i64, PathBuf)> {
    let mut all: Vec<(i64, PathBuf)> = std::fs::read_dir(fixture())
        .expect("the fixture")
        .map(|e| e.expect("an entry").path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            let zxid = i64::from_str_radix(name.strip_prefix("snapshot.")?, 16).ok()?;
            Some((zxid, p))
        })
        .collect();
    all.sort();
    all
}

/// Restores one snapshot and replays the log after it, checking digests as ZooKeeper does.
/// Returns the core and how many digests were compared.
fn load(zxid: i64, path: &Path) -> (Core, usize) {
    let mut reader = SnapshotReader::open(path).expect("a readable snapshot");
    let mut restore = Restore::new(config(), NOW);
    for &(id, timeout) in reader.sessions() {
        restore.session(id, timeout);
    }
    for (id, acl) in reader.acls() {
        restore.acl(*id, acl.clone());
    }
    while let Some(node) = reader.next_node().expect("a node") {
        restore
            .node(&node.path, node.data, node.acl, node.stat)
            .expect("a node that fits");
    }
    let mut core = restore.finish(zxid).expect("a root");
    let mut compared = 0;
    // A snapshot whose digest is at its own zxid is compared at once; a fuzzy one once the
    // log reaches the digest's zxid, and no entry is compared before that.
    let mut pending = reader.digest();
    if let Some(d) = pending.filter(|d| d.zxid == zxid) {
        assert_eq!(core.tree_digest(), Some(d.digest), "{path:?}");
        compared += 1;
        pending = None;
    }
    for entry in read_logs(&fixture(), zxid).expect("logs") {
        let entry = entry.expect("an entry");
        if entry.header.zxid <= zxid {
            continue;
        }
        core.replay(&entry, NOW).expect("replayable");
        match pending {
            Some(d) if d.zxid == entry.header.zxid => {
                assert_eq!(core.tree_digest(), Some(d.digest), "{path:?} digest");
                compared += 1;
                pending = None;
            }
            Some(_) => {}
            None => {
                if let Some(d) = &entry.digest {
                    assert_eq!(d.version, 2);
                    assert_eq!(core.tree_digest(), Some(d.tree_digest), "after {entry:?}");
                    compared += 1;
                }
            }
        }
    }
    (core, compared)
}

fn tree(core: &Core) -> Vec<NodeInfo> {
    core.dump_tree()
}

#[test]
fn zookeeper_data_dir_replays_with_matching_digests() {
    let snaps = snapshots();
    assert!(snaps.len() >= 2, "the fixture has several snapshots");
    let (oldest, compared) = load(snaps[0].0, &snaps[0].1);
    assert!(compared > 20, "only {compared} digests compared");
    for (zxid, path) in &snaps[1..] {
        let (core, _) = load(*zxid, path);
        assert_eq!(core.last_zxid(), oldest.last_zxid());
        assert_eq!(tree(&core), tree(&oldest), "{path:?}");
        assert_eq!(core.tree_digest(), oldest.tree_digest());
    }
}
