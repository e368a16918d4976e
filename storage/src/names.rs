//! File names in `version-2`: `log.<hex zxid>` and `snapshot.<hex zxid>`, read and written as
//! ZooKeeper 3.8's `Util.java` (`makeLogName`, `makeSnapshotName`, `getZxidFromName`) does.
//!
//! Invariant: a name this module does not parse is not ours and not ZooKeeper's, and every
//! lister here skips it, exactly as ZooKeeper's `getZxidFromName` answering -1 makes it skip the
//! file. Temporary files are named so that they never parse (`tmp.snapshot.…`).

use std::io;
use std::path::{Path, PathBuf};

/// The prefix of transaction log files.
pub const LOG_PREFIX: &str = "log";
/// The prefix of snapshot files.
pub const SNAPSHOT_PREFIX: &str = "snapshot";
/// The subdirectory of a data (or data log) directory that holds the files, for format version 2.
pub const VERSION_DIR: &str = "version-2";
/// The prefix of the temporary files a snapshot is written to before its rename; ZooKeeper's
/// `getZxidFromName` does not parse it, so neither its loader nor `PurgeTxnLog` touches them.
pub const TEMP_PREFIX: &str = "tmp.";

/// `log.<zxid in lowercase hex>`; a negative zxid is written as Java's `Long.toHexString` does,
/// in two's complement.
pub fn log_name(zxid: i64) -> String {
    format!("{LOG_PREFIX}.{zxid:x}")
}

/// `snapshot.<zxid in lowercase hex>` (the uncompressed form; ZooKeeper adds `.gz` or `.snappy`
/// only when `zookeeper.snapshot.compression.method` asks for compression).
pub fn snapshot_name(zxid: i64) -> String {
    format!("{SNAPSHOT_PREFIX}.{zxid:x}")
}

/// The zxid in a file name with the given prefix, as `Util.getZxidFromName`: the name split on
/// dots must have at least two parts, the first equal to `prefix`, the second a (signed) hex
/// long. `None` where ZooKeeper answers -1, -1 itself included.
pub fn zxid_from_name(name: &str, prefix: &str) -> Option<i64> {
    let mut parts = name.split('.');
    if parts.next() != Some(prefix) {
        return None;
    }
    let zxid = i64::from_str_radix(parts.next()?, 16).ok()?;
    (zxid != -1).then_some(zxid)
}

/// Whether a snapshot's name asks for a compressed stream (ZooKeeper's `SnapStream.getStreamMode`
/// reads the last dot-separated part): `gz` or `snappy`, which we do not read.
pub fn is_compressed_snapshot(name: &str) -> bool {
    let mut parts = name.split('.');
    let count = parts.clone().count();
    count > 2
        && parts
            .nth(count - 1)
            .is_some_and(|ext| ext.eq_ignore_ascii_case("gz") || ext.eq_ignore_ascii_case("snappy"))
}

/// The files of `dir` whose names parse with `prefix`, in ascending zxid order.
///
/// # Errors
/// The directory cannot be read.
pub fn list(dir: &Path, prefix: &str) -> io::Result<Vec<(i64, PathBuf)>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(zxid) = zxid_from_name(name, prefix) {
            files.push((zxid, entry.path()));
        }
    }
    // Two names may parse to one zxid ("log.1" and "log.01"); the path breaks the tie so that
    // the order does not depend on the directory's.
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_as_zookeeper_parses_them() {
        assert_eq!(log_name(0x1_0000_002a), "log.10000002a");
        assert_eq!(snapshot_name(0), "snapshot.0");
        assert_eq!(
            zxid_from_name("log.10000002a", LOG_PREFIX),
            Some(0x1_0000_002a)
        );
        assert_eq!(
            zxid_from_name("snapshot.1f.gz", SNAPSHOT_PREFIX),
            Some(0x1f)
        );
        assert_eq!(zxid_from_name("log.", LOG_PREFIX), None);
        assert_eq!(zxid_from_name("log", LOG_PREFIX), None);
        assert_eq!(zxid_from_name("log.-1", LOG_PREFIX), None);
        assert_eq!(zxid_from_name("log.zz", LOG_PREFIX), None);
        assert_eq!(zxid_from_name("tmp.snapshot.5", SNAPSHOT_PREFIX), None);
        assert_eq!(zxid_from_name("snapshot.5", LOG_PREFIX), None);
        assert!(is_compressed_snapshot("snapshot.5.gz"));
        assert!(is_compressed_snapshot("snapshot.5.SNAPPY"));
        assert!(!is_compressed_snapshot("snapshot.5"));
    }
}
