//! [`SnapshotReader`]: a snapshot file read as a stream, as ZooKeeper 3.8's `FileSnap.deserialize`
//! reads it (layout in `snapshot_writer.rs` and docs/storage.md).
//!
//! The header, sessions and ACL cache are read by [`SnapshotReader::open`]; node records then
//! come one at a time from [`SnapshotReader::next_node`], so that a snapshot of any size is
//! restored in memory proportional to one node. After the `"/"` terminator the reader checks
//! the seal (the Adler-32 of every byte before it), reads the zxid digest if the file has one
//! (files from before ZooKeeper 3.6 end at the first seal) and checks the second seal.
//!
//! Invariants: nothing is trusted until the final seal checks out, so callers must treat what
//! they were given as provisional until `next_node` has returned `Ok(None)`; every length is
//! checked against what is left of the file before anything is allocated; every problem is an
//! `io::Error`, never a panic: `InvalidData` for a damaged file or one that does not end as a
//! finished snapshot does, `UnexpectedEof` for one that breaks off inside a record although
//! its last bytes look finished.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use shepherd_protocol::txn::StatPersisted;
use shepherd_protocol::{Acl, Codec, Id};

use super::snapshot_writer::SNAP_MAGIC;

/// One node record of a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotNode {
    /// The node's path; the root is `""`.
    pub path: String,
    /// Its data (null stays null).
    pub data: Option<Vec<u8>>,
    /// Its ACL's id in the snapshot's ACL cache (-1: the open ACL, which is not in the cache).
    pub acl: i64,
    /// Its stored stat.
    pub stat: StatPersisted,
}

/// The tree digest a snapshot carries: the digest of the tree once `zxid` was applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZxidDigest {
    /// The zxid the digest belongs to.
    pub zxid: i64,
    /// The digest algorithm's version (2 in ZooKeeper 3.8).
    pub version: i32,
    /// The digest.
    pub digest: i64,
}

/// Reads one snapshot; see the module docs.
#[derive(Debug)]
pub struct SnapshotReader {
    path: PathBuf,
    input: CheckedInput,
    sessions: Vec<(i64, i32)>,
    acls: Vec<(i64, Vec<Acl>)>,
    done: bool,
    digest: Option<ZxidDigest>,
}

/// Whether an open snapshot file of `len` bytes ends as a finished one does: at least 10
/// bytes, the last five the int 1 and `/` of its final seal's path, ZooKeeper 3.8's
/// `SnapStream.isValidCheckedStream`. Leaves the file at its start.
///
/// # Errors
/// The file cannot be read or sought.
pub(crate) fn ends_as_finished(file: &mut File, len: u64) -> io::Result<bool> {
    use std::io::{Seek, SeekFrom};
    if len < 10 {
        return Ok(false);
    }
    file.seek(SeekFrom::Start(len - 5))?;
    let mut tail = [0u8; 5];
    file.read_exact(&mut tail)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(tail == [0, 0, 0, 1, b'/'])
}

fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

impl SnapshotReader {
    /// Opens a snapshot and reads its header, sessions and ACL cache.
    ///
    /// A file that does not end as a finished snapshot does is refused before anything else
    /// is read: ZooKeeper writes a snapshot in place, so one cut short by a crash keeps its
    /// name, and it would otherwise be read to its end (gigabytes) only to fail there. Like
    /// ZooKeeper's `SnapStream.isValidSnapshot`, the last five bytes decide.
    ///
    /// # Errors
    /// The file cannot be read, does not end as a finished snapshot (`InvalidData`), is not a
    /// snapshot (magic), or ends or breaks before the nodes.
    pub fn open(path: &Path) -> io::Result<SnapshotReader> {
        let mut file = File::open(path)?;
        let len = file.metadata()?.len();
        if !ends_as_finished(&mut file, len)? {
            return Err(invalid(
                "it does not end as a finished snapshot does (a write cut short, or not a snapshot)",
            ));
        }
        let mut input = CheckedInput::new(file, len);
        let magic = input.int()?;
        if magic != SNAP_MAGIC {
            return Err(invalid(format!("bad magic {magic:#x} (not a snapshot)")));
        }
        let _version = input.int()?;
        let _dbid = input.long()?;
        let count = input.count(12, "sessions")?;
        let mut sessions = Vec::with_capacity(count);
        for _ in 0..count {
            sessions.push((input.long()?, input.int()?));
        }
        // ReferenceCountedACLCache: long id, vector<ACL>; an ACL is at least 12 bytes.
        let count = input.count(12, "ACL cache entries")?;
        let mut acls = Vec::with_capacity(count);
        for _ in 0..count {
            let id = input.long()?;
            let n = input.count(12, "ACLs")?;
            let mut list = Vec::with_capacity(n);
            for _ in 0..n {
                let perms = input.int()?;
                let scheme = input.string()?.unwrap_or_default();
                let id = input.string()?.unwrap_or_default();
                list.push(Acl {
                    perms,
                    id: Id { scheme, id },
                });
            }
            acls.push((id, list));
        }
        Ok(SnapshotReader {
            path: path.to_path_buf(),
            input,
            sessions,
            acls,
            done: false,
            digest: None,
        })
    }

    /// The file read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The sessions: `(id, timeout ms)`.
    pub fn sessions(&self) -> &[(i64, i32)] {
        &self.sessions
    }

    /// The ACL cache: `(id, ACL)`.
    pub fn acls(&self) -> &[(i64, Vec<Acl>)] {
        &self.acls
    }

    /// The zxid digest, once [`next_node`](Self::next_node) has returned `Ok(None)`; `None`
    /// for a file without one or with the empty digest (zxid 0).
    pub fn digest(&self) -> Option<ZxidDigest> {
        self.digest
    }

    /// The next node record, or `Ok(None)` after the last, once the seals have checked out.
    ///
    /// # Errors
    /// The file is short, damaged, or its checksum does not match; the snapshot must then be
    /// thrown away whole.
    pub fn next_node(&mut self) -> io::Result<Option<SnapshotNode>> {
        if self.done {
            return Ok(None);
        }
        let path = self
            .input
            .string()?
            .ok_or_else(|| invalid("null path in a snapshot"))?;
        if path == "/" {
            self.finish()?;
            self.done = true;
            return Ok(None);
        }
        let data = self.input.buffer()?;
        let acl = self.input.long()?;
        let mut stat = [0u8; 60];
        self.input.exact(&mut stat)?;
        let stat = StatPersisted::decode(&mut &stat[..]).map_err(|e| invalid(e.to_string()))?;
        Ok(Some(SnapshotNode {
            path,
            data,
            acl,
            stat,
        }))
    }

    /// The seal, the optional digest, and its seal (`FileSnap.deserialize`).
    fn finish(&mut self) -> io::Result<()> {
        self.input.check_seal()?;
        if self.input.remaining == 0 {
            // Written before ZooKeeper 3.6: no digest.
            return Ok(());
        }
        let zxid = self.input.long()?;
        let version = self.input.int()?;
        let digest = if version < 2 {
            // DataTree.ZxidDigest: older versions wrote the digest as a hex string.
            let text = self.input.string()?.unwrap_or_default();
            i64::from_str_radix(&text, 16).unwrap_or_default()
        } else {
            self.input.long()?
        };
        self.input.check_seal()?;
        if zxid > 0 {
            self.digest = Some(ZxidDigest {
                zxid,
                version,
                digest,
            });
        }
        Ok(())
    }
}

/// The file behind a running Adler-32, as Java's `CheckedInputStream`.
///
/// Records are read a few bytes at a time, and a checksum call per field costs more than the
/// summing itself; so the reader keeps its own buffer and sums what was consumed from it in one
/// call, when the buffer is refilled or the checksum is asked for. `summed..pos` of `buf` is
/// consumed and not yet summed; `pos..end` is read and not consumed.
struct CheckedInput {
    file: File,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    summed: usize,
    adler: simd_adler32::Adler32,
    /// Bytes of the file not yet consumed (read ahead or not).
    remaining: u64,
}

impl std::fmt::Debug for CheckedInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckedInput")
            .field("remaining", &self.remaining)
            .finish_non_exhaustive()
    }
}

/// The reader's buffer: large reads, and one checksum call per this many bytes.
const BUFFER: usize = 256 * 1024;

impl CheckedInput {
    fn new(file: File, len: u64) -> CheckedInput {
        CheckedInput {
            file,
            buf: vec![0; BUFFER].into_boxed_slice(),
            pos: 0,
            end: 0,
            summed: 0,
            adler: simd_adler32::Adler32::new(),
            remaining: len,
        }
    }

    /// Sums what was consumed and not yet summed.
    fn sum_consumed(&mut self) {
        self.adler.write(&self.buf[self.summed..self.pos]);
        self.summed = self.pos;
    }

    /// The checksum of every byte consumed so far.
    fn checksum(&mut self) -> u32 {
        self.sum_consumed();
        self.adler.finish()
    }

    fn exact(&mut self, out: &mut [u8]) -> io::Result<()> {
        if (out.len() as u64) > self.remaining {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "snapshot ends inside a record",
            ));
        }
        let mut filled = 0;
        while filled < out.len() {
            if self.pos == self.end {
                self.sum_consumed();
                self.pos = 0;
                self.summed = 0;
                self.end = 0;
                let n = loop {
                    match self.file.read(&mut self.buf) {
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        read => break read?,
                    }
                };
                if n == 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "snapshot ends inside a record",
                    ));
                }
                self.end = n;
            }
            let n = (out.len() - filled).min(self.end - self.pos);
            out[filled..filled + n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
            self.pos += n;
            filled += n;
        }
        self.remaining -= out.len() as u64;
        Ok(())
    }

    fn int(&mut self) -> io::Result<i32> {
        let mut b = [0u8; 4];
        self.exact(&mut b)?;
        Ok(i32::from_be_bytes(b))
    }

    fn long(&mut self) -> io::Result<i64> {
        let mut b = [0u8; 8];
        self.exact(&mut b)?;
        Ok(i64::from_be_bytes(b))
    }

    /// A count of elements at least `min` bytes each, checked against the file.
    fn count(&mut self, min: u64, what: &str) -> io::Result<usize> {
        let n = self.int()?;
        match u64::try_from(n) {
            Ok(n) if n.saturating_mul(min) <= self.remaining => Ok(n as usize),
            _ => Err(invalid(format!("{what}: count {n} does not fit the file"))),
        }
    }

    /// A jute buffer; `None` for null (-1).
    fn buffer(&mut self) -> io::Result<Option<Vec<u8>>> {
        let n = self.int()?;
        if n == -1 {
            return Ok(None);
        }
        match u64::try_from(n) {
            Ok(len) if len <= self.remaining => {
                let mut bytes = vec![0u8; len as usize];
                self.exact(&mut bytes)?;
                Ok(Some(bytes))
            }
            Ok(_) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "snapshot ends inside a record",
            )),
            Err(_) => Err(invalid(format!("negative length {n}"))),
        }
    }

    /// A jute ustring; invalid UTF-8 is replaced as Java's decoder replaces it.
    fn string(&mut self) -> io::Result<Option<String>> {
        Ok(self.buffer()?.map(|bytes| match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }))
    }

    /// `SnapStream.checkSealIntegrity`: the checksum of everything before the seal.
    fn check_seal(&mut self) -> io::Result<()> {
        let expected = i64::from(self.checksum());
        let stored = self.long()?;
        let _slash = self.string()?;
        if stored != expected {
            return Err(invalid(format!(
                "checksum mismatch (stored {stored:#x}, computed {expected:#x})"
            )));
        }
        Ok(())
    }
}
