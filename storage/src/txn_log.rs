//! [`TxnLog`]: the transaction log writer, byte for byte as ZooKeeper 3.8's `FileTxnLog.java`
//! and `FilePadding.java` write it (docs/storage.md, "Transaction log").
//!
//! A log file is `log.<hex zxid of its first entry>`: a [`FileHeader`] (`ZKLG`, version 2,
//! dbid 0), then entries `long adler32, int len, byte[len] entry, byte 'B'`, then zeros up to
//! the preallocated length. Preallocation grows the file in `prealloc` steps whenever the
//! written position comes within 4 KiB of its end, by writing one zero byte at the new end
//! (sparse, as ZooKeeper's `FilePadding` does).
//!
//! The padding is also *written*, ahead of the entries, in [`ZERO_CHUNK`] steps: real zeros
//! where ZooKeeper leaves a hole. The file reads the same (a hole reads as zeros, and the
//! length is the padded one either way), but its blocks are then allocated before entries land
//! in them, so the `fdatasync` of a commit carries only the entries' data: no block allocation,
//! hence no journal commit of the file system's metadata, on all but one commit per chunk.
//!
//! Once commits have synced a MiB of entries ([`DROP_EVERY`]), their pages are dropped from
//! the page cache (`posix_fadvise(DONTNEED)`): the log is read back only by a recovery, and a durable server
//! writes its whole log through the cache, so without this the cache grows by every byte
//! written and new writes land in pages the kernel must find and clear first. The
//! `GenerateLoad` sweep showed it (docs/bench/generate-load.md): at 100 % writes the server's
//! CPU per write nearly doubled once the cache had taken its first few GiB. Only
//! pages wholly below the position handed to the file are dropped, never the zeros written
//! ahead, which the coming entries overwrite in place.
//!
//! Invariants: entries reach the file in the chunks Java's buffered stream would hand over
//! ([`JavaBufferedFile`]), so that the file, padding included, is what ZooKeeper would have
//! written for the same appends and commits; zeros are only written at or beyond the position
//! handed to the file, before any entry is written there, and never past the padded length;
//! after any I/O error the log refuses further use, since what reached the file is then
//! unknown.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use shepherd_protocol::Codec;
use shepherd_protocol::txn::{FileHeader, TxnEntry};

use super::java_buffer::JavaBufferedFile;
use super::names::log_name;

/// `ZKLG` as a big-endian int: the magic of a transaction log.
pub const TXNLOG_MAGIC: i32 = i32::from_be_bytes(*b"ZKLG");
/// The only log and snapshot format version.
pub const FORMAT_VERSION: i32 = 2;
/// The end-of-record byte after every entry (`'B'`).
pub const EOR: u8 = 0x42;
/// ZooKeeper's default `zookeeper.preAllocSize` (65536 KB), in bytes.
pub const DEFAULT_PREALLOC: u64 = 65536 * 1024;
/// The length of a log's file header.
pub const LOG_HEADER_LEN: u64 = 16;
/// How much of the padding is written with zeros at a time, ahead of the entries.
pub const ZERO_CHUNK: u64 = 1 << 20;

/// How many synced bytes gather before their pages are dropped. Each drop costs the kernel a
/// drain of its per-processor page lists; after every commit, that cost 4 % of the writes/s of
/// 64 sessions writing 16 B values.
const DROP_EVERY: u64 = 1 << 20;

/// The zeros [`ZERO_CHUNK`] is written from, a slice at a time.
static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];

/// `FilePadding.calculateFileSizeWithPadding`: the file length to extend to before writing at
/// `position` into a file already `size` long.
pub fn padded_size(position: u64, size: u64, prealloc: u64) -> u64 {
    if prealloc == 0 || position + 4096 < size {
        return size;
    }
    if position > size {
        let grown = position + prealloc;
        grown - grown % prealloc
    } else {
        size + prealloc
    }
}

/// The Adler-32 of an entry's bytes, as the long ZooKeeper stores before the entry.
pub fn entry_checksum(bytes: &[u8]) -> i64 {
    i64::from(simd_adler32::adler32(&bytes))
}

#[derive(Debug)]
struct OpenLog {
    path: PathBuf,
    out: JavaBufferedFile,
    /// `FilePadding.currentSize`: the length the file has been extended to.
    size: u64,
    /// Everything below this offset is written (entries or zeros): allocated on disk.
    zeroed: u64,
    /// The cached pages below this offset were dropped after a sync.
    uncached: u64,
}

impl OpenLog {
    /// Drops the cached pages of what the syncs made durable, once [`DROP_EVERY`] bytes have
    /// gathered: every whole page below the position handed to the file. Advice only: a
    /// refusal is logged, never an error, since the bytes are on disk either way.
    fn drop_synced_pages(&mut self) {
        let end = self.out.position();
        if end >= self.uncached + DROP_EVERY {
            drop_cached(self.out.file(), self.uncached, end - self.uncached);
            // The page holding `end` stays cached (the next entries land in it): the next
            // drop starts there, in the system's page size, so that it is dropped in its turn.
            let page = rustix::param::page_size() as u64;
            self.uncached = end - end % page;
        }
    }

    /// Writes zeros over the next [`ZERO_CHUNK`] of the padding once the position comes
    /// within half a chunk of what is already written, so that the blocks the coming entries
    /// land in are allocated before they are committed. Stays within the padded length: it
    /// never makes the file longer than ZooKeeper's.
    fn zero_ahead(&mut self) -> io::Result<()> {
        let position = self.out.position();
        // Nothing below the position is ever zeroed: it holds entries.
        self.zeroed = self.zeroed.max(position);
        if position + ZERO_CHUNK / 2 < self.zeroed || self.zeroed >= self.size {
            return Ok(());
        }
        let end = (self.zeroed + ZERO_CHUNK).min(self.size);
        while self.zeroed < end {
            let n = (end - self.zeroed).min(ZEROS.len() as u64) as usize;
            self.out.file().write_all_at(&ZEROS[..n], self.zeroed)?;
            self.zeroed += n as u64;
        }
        Ok(())
    }
}

/// Appends transactions to `log.<zxid>` files in one directory.
///
/// Not thread-safe by design: one owner (the shell's log thread) appends and commits.
/// Appends are buffered; nothing is durable before [`TxnLog::commit`] with `fsync`.
#[derive(Debug)]
pub struct TxnLog {
    dir: PathBuf,
    prealloc: u64,
    current: Option<OpenLog>,
    /// Rolled files whose last bytes are flushed but not yet synced: the next commit syncs
    /// them before the current file, as ZooKeeper's `streamsToFlush` does.
    rolled: Vec<File>,
    scratch: Vec<u8>,
    last_zxid: i64,
    failed: bool,
    /// A file was created since the directory was last synced: its name is not yet durable,
    /// whatever its bytes are, so the next fsyncing commit syncs the directory too.
    dir_unsynced: bool,
}

impl TxnLog {
    /// A writer for `log_dir` (the `version-2` directory). No file is opened until the first
    /// append. `prealloc_bytes` is ZooKeeper's `zookeeper.preAllocSize` in bytes
    /// ([`DEFAULT_PREALLOC`]); 0 turns preallocation off.
    pub fn new(log_dir: &Path, prealloc_bytes: u64) -> TxnLog {
        TxnLog {
            dir: log_dir.to_path_buf(),
            prealloc: prealloc_bytes,
            current: None,
            rolled: Vec::new(),
            scratch: Vec::new(),
            dir_unsynced: false,
            last_zxid: 0,
            failed: false,
        }
    }

    /// The file being appended to, if one is open.
    pub fn current_path(&self) -> Option<&Path> {
        self.current.as_ref().map(|log| log.path.as_path())
    }

    /// Bytes handed to the current file so far (0 with no file open), as Java's channel
    /// position says: what the snapshot size rule (`snapSizeLimitInKb`) counts.
    pub fn position(&self) -> u64 {
        self.current.as_ref().map_or(0, |log| log.out.position())
    }

    /// The zxid of the last entry appended (0 before any).
    pub fn last_zxid(&self) -> i64 {
        self.last_zxid
    }

    /// Appends one entry (buffered). Opens `log.<this entry's zxid>` with its header first when
    /// no file is open; an existing file of that name is replaced, as ZooKeeper replaces it.
    ///
    /// Entries should come in increasing zxid order; one that does not is still written (and a
    /// warning logged), as ZooKeeper does.
    ///
    /// # Errors
    /// An I/O error creating or writing the file; the log then refuses every later call.
    pub fn append(&mut self, entry: &TxnEntry) -> io::Result<()> {
        self.check_usable()?;
        let result = self.append_inner(entry);
        self.failed = result.is_err();
        result
    }

    fn append_inner(&mut self, entry: &TxnEntry) -> io::Result<()> {
        let zxid = entry.header.zxid;
        if zxid <= self.last_zxid {
            tracing::warn!(
                zxid,
                last = self.last_zxid,
                "transaction log: zxid not increasing"
            );
        } else {
            self.last_zxid = zxid;
        }
        self.scratch.clear();
        entry.encode(&mut self.scratch);
        let len = i32::try_from(self.scratch.len())
            .map_err(|_| io::Error::other("transaction log entry longer than 2 GiB"))?;
        let log = match &mut self.current {
            Some(log) => log,
            None => {
                self.dir_unsynced = true;
                self.current.insert(open_log(&self.dir, zxid)?)
            }
        };
        let size = padded_size(log.out.position(), log.size, self.prealloc);
        if size != log.size {
            log.out.file().write_all_at(&[0], size - 1)?;
            log.size = size;
        }
        if self.prealloc > 0 {
            log.zero_ahead()?;
        }
        log.out.write_long(entry_checksum(&self.scratch))?;
        log.out.write_int(len)?;
        log.out.write_array(&self.scratch)?;
        log.out.write_byte(EOR)?;
        Ok(())
    }

    /// Hands every buffered entry to the file, and with `fsync` forces the files (rolled ones
    /// first) to the disk (`fdatasync`, as ZooKeeper's `FileChannel.force(false)`).
    ///
    /// # Errors
    /// An I/O error writing or syncing; the log then refuses every later call.
    pub fn commit(&mut self, fsync: bool) -> io::Result<()> {
        self.check_usable()?;
        let result = self.commit_inner(fsync);
        self.failed = result.is_err();
        result
    }

    fn commit_inner(&mut self, fsync: bool) -> io::Result<()> {
        if let Some(log) = &mut self.current {
            log.out.flush_buffer()?;
        }
        if fsync {
            for file in &self.rolled {
                file.sync_data()?;
                drop_cached(file, 0, 0);
            }
            if let Some(log) = &mut self.current {
                log.out.file().sync_data()?;
                log.drop_synced_pages();
            }
            if self.dir_unsynced {
                File::open(&self.dir)?.sync_all()?;
                self.dir_unsynced = false;
            }
        }
        self.rolled.clear();
        Ok(())
    }

    /// Ends the current file: the next append starts `log.<its zxid>`. The current file's
    /// buffer is handed to the file now; the next [`commit`](TxnLog::commit) syncs it. Commit
    /// before rolling, so that no entry of the old file is durable only after one of the new.
    ///
    /// # Errors
    /// An I/O error flushing the buffer; the log then refuses every later call.
    pub fn roll(&mut self) -> io::Result<()> {
        self.check_usable()?;
        if let Some(mut log) = self.current.take() {
            if let Err(e) = log.out.flush_buffer() {
                self.failed = true;
                return Err(e);
            }
            self.rolled.push(log.out.into_file());
        }
        Ok(())
    }

    fn check_usable(&self) -> io::Result<()> {
        if self.failed {
            return Err(io::Error::other(
                "transaction log failed earlier; its files are in an unknown state",
            ));
        }
        Ok(())
    }
}

/// `posix_fadvise(DONTNEED)` over `len` bytes of `file` from `offset` (0: to its end). Linux
/// drops only whole, clean pages of the range; what it cannot drop stays cached.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn drop_cached(file: &File, offset: u64, len: u64) {
    use rustix::fs::{Advice, fadvise};
    let len = std::num::NonZeroU64::new(len);
    if let Err(error) = fadvise(file, offset, len, Advice::DontNeed) {
        tracing::debug!(%error, "the kernel refused to drop synced log pages from its cache");
    }
}

/// Elsewhere the pages stay cached: macOS has no `posix_fadvise`, and FreeBSD's widens the
/// range to whole blocks, which could take the page the next entries are written into.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn drop_cached(_file: &File, _offset: u64, _len: u64) {}

fn open_log(dir: &Path, zxid: i64) -> io::Result<OpenLog> {
    let path = dir.join(log_name(zxid));
    tracing::info!(path = %path.display(), "creating new transaction log file");
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)?;
    let mut out = JavaBufferedFile::new(file);
    let header = FileHeader {
        magic: TXNLOG_MAGIC,
        version: FORMAT_VERSION,
        dbid: 0,
    };
    out.write_int(header.magic)?;
    out.write_int(header.version)?;
    out.write_long(header.dbid)?;
    // ZooKeeper flushes the header before the first padding, so the padding sees position 16.
    out.flush_buffer()?;
    debug_assert_eq!(out.position(), header.to_bytes().len() as u64);
    let size = out.position();
    Ok(OpenLog {
        path,
        out,
        size,
        zeroed: size,
        uncached: 0,
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;
    use crate::tests::sample_entries;

    /// The padding ahead of the entries is written, so its blocks are allocated before the
    /// entries' commits; the file's length and bytes stay ZooKeeper's (zeros past the entries).
    #[test]
    fn the_padding_ahead_is_written_within_the_padded_length() {
        let dir = tempfile::tempdir().unwrap();
        let prealloc = 4 * ZERO_CHUNK;
        let mut log = TxnLog::new(dir.path(), prealloc);
        for entry in sample_entries(1, 50) {
            log.append(&entry).unwrap();
        }
        log.commit(true).unwrap();
        let written = log.position();
        let path = dir.path().join(log_name(1));
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(
            meta.len(),
            padded_size(LOG_HEADER_LEN, LOG_HEADER_LEN, prealloc),
            "the length is the padded one"
        );
        assert!(
            meta.blocks() * 512 >= ZERO_CHUNK,
            "a chunk ahead is allocated: {} blocks",
            meta.blocks()
        );
        assert!(
            meta.blocks() * 512 < 2 * ZERO_CHUNK + 8192,
            "no more than the chunk ahead: {} blocks",
            meta.blocks()
        );
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes[written as usize..].iter().all(|&b| b == 0));
        let read = crate::read_logs(dir.path(), 0)
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        assert_eq!(read, sample_entries(1, 50));
    }
}
