//! [`SnapshotWriter`]: a snapshot file as ZooKeeper 3.8's `FileSnap.serialize` writes it
//! (docs/storage.md, "Snapshot").
//!
//! Layout, every byte under one running Adler-32: file header (`ZKSN`, 2, dbid -1); the
//! sessions (`int count`, then `long id, int timeout` each); the ACL cache (`int count`, then
//! `long id, vector<ACL>` each); node records (`ustring path`, `buffer data, long acl,
//! StatPersisted`), parents before children, the root as the empty path; the terminator path
//! `"/"`; a seal (`long adler32-so-far`, `ustring "/"`); the zxid digest (`long zxid, int
//! version, long digest`); a second seal over everything before it.
//!
//! The ACL cache precedes the nodes but is known only once the walk is done, so node records
//! stream into a temporary file first and [`SnapshotWriter::finish`] assembles the snapshot
//! under a temporary name, then renames it into place. Invariant: a file named `snapshot.*` is
//! only ever complete; the temporary names (`tmp.snapshot.…`) are ones ZooKeeper never reads,
//! and a writer dropped without finishing removes its files.

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use shepherd_protocol::txn::StatPersisted;
use shepherd_protocol::{Acl, Codec};

use super::names::{TEMP_PREFIX, snapshot_name};
use super::txn_log::FORMAT_VERSION;

/// `ZKSN` as a big-endian int: the magic of a snapshot.
pub const SNAP_MAGIC: i32 = i32::from_be_bytes(*b"ZKSN");
/// The dbid ZooKeeper writes in every snapshot header.
pub const SNAP_DBID: i64 = -1;
/// The digest algorithm version of ZooKeeper 3.8's `DigestCalculator`.
pub const DIGEST_VERSION: i32 = 2;

/// Appends one node record (`ustring path`, then `DataNode`: `buffer data, long acl,
/// StatPersisted`) as the core's snapshot slices carry them. The root's path is `""`.
///
/// Strings are UTF-8; Java writes characters outside the BMP as two three-byte surrogates
/// instead (and cannot read those back), the same difference as on the wire.
pub fn encode_node(
    out: &mut Vec<u8>,
    path: &str,
    data: Option<&[u8]>,
    acl_id: i64,
    stat: &StatPersisted,
) {
    write_bytes(out, Some(path.as_bytes()));
    write_bytes(out, data);
    acl_id.encode(out);
    stat.encode(out);
}

/// A jute buffer or ustring: its length (-1 for null), then its bytes.
fn write_bytes(out: &mut Vec<u8>, bytes: Option<&[u8]>) {
    match bytes {
        None => (-1i32).encode(out),
        Some(bytes) => {
            i32::try_from(bytes.len()).unwrap_or(i32::MAX).encode(out);
            out.extend_from_slice(bytes);
        }
    }
}

/// Writes one snapshot; see the module docs.
#[derive(Debug)]
pub struct SnapshotWriter {
    dir: PathBuf,
    zxid: i64,
    nodes_path: PathBuf,
    nodes: Option<BufWriter<File>>,
}

impl SnapshotWriter {
    /// Starts `snapshot.<hex zxid>` in `snap_dir` (a `version-2` directory); `zxid` is the last
    /// zxid applied when the walk began.
    ///
    /// # Errors
    /// The temporary file cannot be created.
    pub fn create(snap_dir: &Path, zxid: i64) -> io::Result<SnapshotWriter> {
        let nodes_path = snap_dir.join(format!("{TEMP_PREFIX}{}.nodes", snapshot_name(zxid)));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&nodes_path)?;
        Ok(SnapshotWriter {
            dir: snap_dir.to_path_buf(),
            zxid,
            nodes_path,
            nodes: Some(BufWriter::with_capacity(256 * 1024, file)),
        })
    }

    /// The zxid the snapshot is named after.
    pub fn zxid(&self) -> i64 {
        self.zxid
    }

    /// Appends node records (see [`encode_node`]), as many whole records as the slice holds.
    ///
    /// # Errors
    /// The temporary file cannot be written.
    pub fn append_nodes(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.nodes {
            Some(nodes) => nodes.write_all(bytes),
            None => Err(io::Error::other("snapshot writer already failed")),
        }
    }

    /// Assembles the snapshot and renames it into place as `snapshot.<hex zxid>`; returns its
    /// path. `acls` must hold every ACL id the node records use (other than -1, the
    /// open ACL); `digest` is the tree digest at a zxid, `(zxid, digest)`, or `None` to write
    /// the empty digest ZooKeeper writes when it has none. With `fsync`, the file and then the
    /// directory are forced to disk before this returns.
    ///
    /// Not cancellation-sensitive: it blocks; run it off the async runtime.
    ///
    /// # Errors
    /// Any I/O error; the temporary files are removed and no `snapshot.*` file is left behind.
    pub fn finish<'a>(
        mut self,
        sessions: &[(i64, i32)],
        acls: impl IntoIterator<Item = (i64, &'a [Acl])>,
        digest: Option<(i64, i64)>,
        fsync: bool,
    ) -> io::Result<PathBuf> {
        let nodes = self
            .nodes
            .take()
            .ok_or_else(|| io::Error::other("snapshot writer already failed"))?;
        let nodes = nodes.into_inner().map_err(|e| e.into_error())?;
        let final_path = self.dir.join(snapshot_name(self.zxid));
        let temp_path = self
            .dir
            .join(format!("{TEMP_PREFIX}{}", snapshot_name(self.zxid)));
        let result = assemble(&temp_path, nodes, sessions, acls, digest, fsync)
            .and_then(|()| std::fs::rename(&temp_path, &final_path))
            .and_then(|()| {
                if fsync {
                    File::open(&self.dir)?.sync_all()?;
                }
                Ok(())
            });
        if result.is_err() {
            let _ = std::fs::remove_file(&temp_path);
        }
        result.map(|()| final_path)
    }
}

impl Drop for SnapshotWriter {
    fn drop(&mut self) {
        // Best effort: a leftover is harmless (ZooKeeper ignores the name) and DataDir::open
        // removes it.
        self.nodes = None;
        let _ = std::fs::remove_file(&self.nodes_path);
    }
}

/// A buffered file writer that keeps the Adler-32 of everything written.
struct Checked {
    out: BufWriter<File>,
    adler: simd_adler32::Adler32,
}

impl Checked {
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.adler.write(bytes);
        self.out.write_all(bytes)
    }

    fn record(&mut self, scratch: &mut Vec<u8>, record: &impl Codec) -> io::Result<()> {
        scratch.clear();
        record.encode(scratch);
        self.write(scratch)
    }

    /// `SnapStream.sealStream`: the checksum so far, then the path "/".
    fn seal(&mut self, scratch: &mut Vec<u8>) -> io::Result<()> {
        let value = i64::from(self.adler.finish());
        self.record(scratch, &value)?;
        self.record(scratch, &"/".to_owned())
    }
}

fn assemble<'a>(
    temp_path: &Path,
    mut nodes: File,
    sessions: &[(i64, i32)],
    acls: impl IntoIterator<Item = (i64, &'a [Acl])>,
    digest: Option<(i64, i64)>,
    fsync: bool,
) -> io::Result<()> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(temp_path)?;
    let mut out = Checked {
        out: BufWriter::with_capacity(256 * 1024, file),
        adler: simd_adler32::Adler32::new(),
    };
    let mut scratch = Vec::new();
    let count = |n: usize| i32::try_from(n).map_err(|_| io::Error::other("count exceeds 2^31"));
    // FileSnap.serialize: the header, then SerializeUtils.serializeSnapshot.
    out.record(&mut scratch, &SNAP_MAGIC)?;
    out.record(&mut scratch, &FORMAT_VERSION)?;
    out.record(&mut scratch, &SNAP_DBID)?;
    out.record(&mut scratch, &count(sessions.len())?)?;
    for &(id, timeout) in sessions {
        out.record(&mut scratch, &id)?;
        out.record(&mut scratch, &timeout)?;
    }
    // ReferenceCountedACLCache.serialize.
    let mut acl_bytes = Vec::new();
    let mut acl_count = 0usize;
    for (id, list) in acls {
        acl_count += 1;
        id.encode(&mut acl_bytes);
        count(list.len())?.encode(&mut acl_bytes);
        for acl in list {
            acl.encode(&mut acl_bytes);
        }
    }
    out.record(&mut scratch, &count(acl_count)?)?;
    out.write(&acl_bytes)?;
    // DataTree.serializeNodes: the records, then "/".
    std::io::Seek::rewind(&mut nodes)?;
    let mut input = BufReader::with_capacity(256 * 1024, nodes);
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        out.write(&chunk[..n])?;
    }
    out.record(&mut scratch, &"/".to_owned())?;
    out.seal(&mut scratch)?;
    // DataTree.serializeZxidDigest (digest enabled, ZooKeeper's default), and its own seal.
    let (zxid, value) = digest.unwrap_or((0, 0));
    out.record(&mut scratch, &zxid)?;
    out.record(&mut scratch, &DIGEST_VERSION)?;
    out.record(&mut scratch, &value)?;
    out.seal(&mut scratch)?;
    let file = out.out.into_inner().map_err(|e| e.into_error())?;
    if fsync {
        file.sync_all()?;
    }
    Ok(())
}
