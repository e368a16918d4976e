//! [`LogReader`]: the transaction log entries after a zxid, across `log.<zxid>` files, as
//! ZooKeeper 3.8's `FileTxnLog.FileTxnIterator` reads them; and [`truncate_torn_tail`].
//!
//! Which files: the newest whose first zxid is at or before the starting point, and every
//! later one (`FileTxnLog.getLogFiles`). Within a file, a zero length (the preallocated zeros)
//! or the end of the file ends it cleanly. Anything else that is not a whole, checked entry —
//! bytes cut short, an Adler-32 mismatch, a missing end-of-record byte, a negative length, a
//! zero length with data after it, an undecodable record, a header without the `ZKLG` magic —
//! is a [`TornTail`]: reading stops there, and the reader reports where and why. ZooKeeper
//! silently treats some of these as the end of the file and refuses to start on others (a
//! checksum mismatch); we stop at the first, so that nothing after a damaged entry is ever
//! applied, and recovery cuts only a torn write (`damage.rs`; docs/storage.md, "Torn tails").
//!
//! Invariants: memory per entry is bounded by what is left of the file, whatever its length
//! field says; entries come out in strictly increasing zxid order, and entries at or before
//! the starting point or not after the previous one are skipped (the latter with a warning).

use std::collections::VecDeque;
use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use shepherd_protocol::DecodeError;
use shepherd_protocol::txn::TxnEntry;

use super::names::{LOG_PREFIX, list};
use super::txn_log::{EOR, LOG_HEADER_LEN, TXNLOG_MAGIC, entry_checksum};
use super::zeros::first_non_zero;

/// What is wrong at the point where reading stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TailProblem {
    /// The file ends inside the header or an entry (a write cut short).
    Truncated,
    /// The file header's magic is not `ZKLG`.
    BadMagic(i32),
    /// A length below zero.
    BadLength(i32),
    /// The stored Adler-32 does not match the entry's bytes.
    ChecksumMismatch {
        /// The checksum stored before the entry.
        stored: i64,
        /// The checksum of the bytes read.
        computed: i64,
    },
    /// The byte after the entry is not `'B'`.
    MissingEor(u8),
    /// The entry's bytes check out but do not decode.
    Undecodable(DecodeError),
}

impl fmt::Display for TailProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TailProblem::Truncated => write!(f, "the file ends inside a record"),
            TailProblem::BadMagic(m) => write!(f, "bad magic {m:#x} (not a transaction log)"),
            TailProblem::BadLength(n) => write!(f, "negative entry length {n}"),
            TailProblem::ChecksumMismatch { stored, computed } => {
                write!(
                    f,
                    "checksum mismatch (stored {stored:#x}, computed {computed:#x})"
                )
            }
            TailProblem::MissingEor(b) => write!(f, "end-of-record byte is {b:#04x}, not 'B'"),
            TailProblem::Undecodable(e) => write!(f, "entry does not decode: {e}"),
        }
    }
}

/// Where and why reading stopped before the end of the logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    /// The log file.
    pub path: PathBuf,
    /// The offset of the first byte that is not part of a valid entry (the start of the
    /// damaged entry, or 0 for a damaged header).
    pub offset: u64,
    /// What is wrong there.
    pub problem: TailProblem,
    /// The zxid of the last whole entry before the damage (the starting point when there was
    /// none): everything up to it reads and checks out.
    pub last_zxid: i64,
    /// Log files after this one, which were not read.
    pub later_files: Vec<PathBuf>,
}

impl fmt::Display for TornTail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at offset {} (after zxid {:#x}): {}",
            self.path.display(),
            self.offset,
            self.last_zxid,
            self.problem
        )
    }
}

/// Opens the entries after `after_zxid` in `log_dir` (a `version-2` directory).
///
/// # Errors
/// The directory cannot be listed.
pub fn read_logs(log_dir: &Path, after_zxid: i64) -> io::Result<LogReader> {
    let files = list(log_dir, LOG_PREFIX)?;
    // FileTxnLog.getLogFiles: the newest file starting at or before the point, and all later.
    let first = files
        .iter()
        .rposition(|(zxid, _)| *zxid <= after_zxid)
        .unwrap_or(0);
    Ok(LogReader {
        files: files.into_iter().skip(first).map(|(_, p)| p).collect(),
        after: after_zxid,
        last: after_zxid,
        current: None,
        tail: None,
        entry_end: None,
        fresh_file: false,
    })
}

/// An iterator of entries in zxid order; see the module docs. After it returns `None`,
/// [`LogReader::torn_tail`] says whether it stopped early.
#[derive(Debug)]
pub struct LogReader {
    files: VecDeque<PathBuf>,
    after: i64,
    last: i64,
    current: Option<FileCursor>,
    tail: Option<TornTail>,
    /// The file of the last entry returned and the offset just after it.
    entry_end: Option<(PathBuf, u64)>,
    /// The current file has returned no entry yet: its first one names it in `entry_end`.
    fresh_file: bool,
}

impl LogReader {
    /// Where reading stopped before the end, once the iterator has returned `None`.
    pub fn torn_tail(&self) -> Option<&TornTail> {
        self.tail.as_ref()
    }

    /// The zxid of the last entry returned (the starting point before any).
    pub fn last_zxid(&self) -> i64 {
        self.last
    }

    /// The file of the last entry returned and the offset just after that entry: where a log
    /// would be cut to keep everything up to [`last_zxid`](Self::last_zxid).
    pub fn entry_end(&self) -> Option<(&Path, u64)> {
        self.entry_end
            .as_ref()
            .map(|(path, end)| (path.as_path(), *end))
    }

    fn stop(&mut self, path: PathBuf, offset: u64, problem: TailProblem) {
        let later_files = self.files.drain(..).collect();
        self.tail = Some(TornTail {
            path,
            offset,
            problem,
            last_zxid: self.last,
            later_files,
        });
    }
}

impl Iterator for LogReader {
    type Item = io::Result<TxnEntry>;

    fn next(&mut self) -> Option<io::Result<TxnEntry>> {
        loop {
            if self.tail.is_some() {
                return None;
            }
            let cursor = match &mut self.current {
                Some(cursor) => cursor,
                None => {
                    let path = self.files.pop_front()?;
                    match FileCursor::open(path) {
                        Ok(Ok(cursor)) => {
                            self.fresh_file = true;
                            self.current.insert(cursor)
                        }
                        Ok(Err((path, problem))) => {
                            self.stop(path, 0, problem);
                            return None;
                        }
                        Err(e) => {
                            self.files.clear();
                            return Some(Err(e));
                        }
                    }
                }
            };
            match cursor.next_entry() {
                Ok(Read1::Entry(entry)) => {
                    let zxid = entry.header.zxid;
                    if zxid <= self.last {
                        // Entries before the start are expected (the first file may begin
                        // before it); an entry after the start that goes backwards is not.
                        if zxid > self.after {
                            tracing::warn!(
                                path = %cursor.path.display(),
                                zxid,
                                last = self.last,
                                "transaction log: skipping an entry whose zxid does not increase"
                            );
                        }
                        continue;
                    }
                    self.last = zxid;
                    // The path is taken once per file, not compared per entry: recovery reads
                    // every entry through here.
                    match &mut self.entry_end {
                        Some((_, end)) if !self.fresh_file => *end = cursor.offset,
                        slot => *slot = Some((cursor.path.clone(), cursor.offset)),
                    }
                    self.fresh_file = false;
                    return Some(Ok(entry));
                }
                Ok(Read1::End) => self.current = None,
                Ok(Read1::Torn(offset, problem)) => {
                    let path = cursor.path.clone();
                    self.current = None;
                    self.stop(path, offset, problem);
                    return None;
                }
                Err(e) => {
                    self.current = None;
                    self.files.clear();
                    return Some(Err(e));
                }
            }
        }
    }
}

/// Cuts a log file where reading stopped: to the tail's offset, or removes the file when even
/// its header is damaged (ZooKeeper cannot start on a log file without a whole header). Later
/// files are left alone; recovery refuses to cut when there are any (docs/storage.md).
///
/// # Errors
/// The file cannot be truncated, removed or synced.
pub fn truncate_torn_tail(tail: &TornTail) -> io::Result<()> {
    if tail.offset < LOG_HEADER_LEN {
        std::fs::remove_file(&tail.path)?;
        if let Some(dir) = tail.path.parent() {
            File::open(dir)?.sync_all()?;
        }
        return Ok(());
    }
    let file = std::fs::OpenOptions::new().write(true).open(&tail.path)?;
    file.set_len(tail.offset)?;
    file.sync_all()
}

enum Read1 {
    Entry(TxnEntry),
    End,
    Torn(u64, TailProblem),
}

#[derive(Debug)]
struct FileCursor {
    path: PathBuf,
    input: BufReader<File>,
    offset: u64,
    len: u64,
}

impl FileCursor {
    /// Opens a file and checks its header; `Ok(Err(..))` is a damaged header.
    #[allow(clippy::type_complexity)]
    fn open(path: PathBuf) -> io::Result<Result<FileCursor, (PathBuf, TailProblem)>> {
        let file = File::open(&path)?;
        let len = file.metadata()?.len();
        let mut cursor = FileCursor {
            path,
            input: BufReader::with_capacity(64 * 1024, file),
            offset: 0,
            len,
        };
        let mut header = [0u8; LOG_HEADER_LEN as usize];
        if cursor.read_full(&mut header)? < header.len() {
            return Ok(Err((cursor.path, TailProblem::Truncated)));
        }
        let magic = i32::from_be_bytes([header[0], header[1], header[2], header[3]]);
        if magic != TXNLOG_MAGIC {
            return Ok(Err((cursor.path, TailProblem::BadMagic(magic))));
        }
        Ok(Ok(cursor))
    }

    /// Reads until `buf` is full or the file ends; returns the bytes read.
    fn read_full(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.input.read(&mut buf[done..]) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.offset += done as u64;
        Ok(done)
    }

    /// Whether every byte from here to the end of the file is zero (holes skipped, `zeros.rs`).
    fn rest_is_zero(&self) -> io::Result<bool> {
        Ok(first_non_zero(self.input.get_ref(), self.offset)?.is_none())
    }

    fn next_entry(&mut self) -> io::Result<Read1> {
        let start = self.offset;
        let torn = |problem| Ok(Read1::Torn(start, problem));
        let mut prefix = [0u8; 12];
        match self.read_full(&mut prefix)? {
            0 => return Ok(Read1::End),
            12 => {}
            _ => return torn(TailProblem::Truncated),
        }
        let (crc, len) = prefix.split_at(8);
        let stored = i64::from_be_bytes(crc.try_into().unwrap_or_default());
        let len = i32::from_be_bytes(len.try_into().unwrap_or_default());
        // Util.readTxnBytes: since the file is preallocated, an empty entry is the end; but only
        // if the zeros go on to the end of the file. Data after it means a damaged length, and
        // taking it for the end would silently drop every entry after it.
        if len == 0 {
            if crc.iter().all(|b| *b == 0) && self.rest_is_zero()? {
                return Ok(Read1::End);
            }
            return torn(TailProblem::BadLength(0));
        }
        let Ok(len) = u64::try_from(len) else {
            return torn(TailProblem::BadLength(len));
        };
        // The entry and its EOR byte must fit in the file: nothing is allocated beyond it.
        if len + 1 > self.len.saturating_sub(self.offset) {
            return torn(TailProblem::Truncated);
        }
        let mut bytes = vec![0u8; len as usize + 1];
        if self.read_full(&mut bytes)? < bytes.len() {
            return torn(TailProblem::Truncated);
        }
        let eor = bytes.pop().unwrap_or_default();
        if eor != EOR {
            return torn(TailProblem::MissingEor(eor));
        }
        let computed = entry_checksum(&bytes);
        if computed != stored {
            return torn(TailProblem::ChecksumMismatch { stored, computed });
        }
        match TxnEntry::decode(&bytes) {
            Ok(entry) => Ok(Read1::Entry(entry)),
            Err(e) => torn(TailProblem::Undecodable(e)),
        }
    }
}
