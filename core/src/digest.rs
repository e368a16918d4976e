//! ZooKeeper's tree digest (`DigestCalculator`, digest version 2, ZooKeeper 3.8): each node's
//! CRC32 over its path, data and stored stat, summed with wrapping 64-bit arithmetic over the
//! whole tree (`AdHash`). ZooKeeper logs the tree digest after each transaction and writes
//! one into each snapshot, and checks them on load.
//!
//! Invariants: a node's digest depends only on its path, data and `StatPersisted` (never on
//! its ACL or children); nodes under `/zookeeper/` (that prefix, slash included) count 0,
//! while `/zookeeper` itself counts; the root is hashed under the path `""`, as ZooKeeper's
//! node map holds it, so `/` and `""` agree.

use super::tree::Node;

/// `DigestCalculator.DIGEST_VERSION` in ZooKeeper 3.8.
pub(crate) const VERSION: i32 = 2;

/// `ZooDefs.ZOOKEEPER_NODE_SUBTREE`: nodes below it are left out of the digest.
const EXCLUDED_SUBTREE: &str = "/zookeeper/";

/// `DigestCalculator.calculateDigest(path, data, stat)` for one node.
pub(crate) fn node_digest(path: &str, node: &Node) -> i64 {
    if path.starts_with(EXCLUDED_SUBTREE) {
        return 0;
    }
    let path = if path == "/" { "" } else { path };
    let mut stat = [0u8; 60];
    let longs = [node.czxid, node.mzxid, node.pzxid, node.ctime, node.mtime];
    for (i, v) in longs.iter().enumerate() {
        stat[i * 8..i * 8 + 8].copy_from_slice(&v.to_be_bytes());
    }
    for (i, v) in [node.version, node.creates, node.aversion]
        .iter()
        .enumerate()
    {
        stat[40 + i * 4..44 + i * 4].copy_from_slice(&v.to_be_bytes());
    }
    stat[52..].copy_from_slice(&node.owner.raw().to_be_bytes());
    let mut crc = crc32fast::Hasher::new();
    crc.update(path.as_bytes());
    if let Some(data) = node.data() {
        crc.update(data);
    }
    crc.update(&stat);
    i64::from(crc.finalize())
}
