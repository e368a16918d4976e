//! Where a log file's zeros end: the question both the reader (is a zero length the
//! preallocated end, or a damaged length with data after it?) and the damage check (is anything
//! written after a damaged record?) ask.
//!
//! Invariant: holes are skipped, not read. A log's preallocation is mostly a hole (one byte
//! written at the new end, as ZooKeeper's `FilePadding` does), so asking costs what was written,
//! a chunk of zeros ahead of the entries, not the 64 MiB the file is long.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use rustix::fs::{SeekFrom, seek};
use rustix::io::Errno;

/// The offset of the first non-zero byte of `file` at or after `from`, or `None` when there is
/// none.
///
/// # Errors
/// The file cannot be read.
pub(crate) fn first_non_zero(file: &File, from: u64) -> io::Result<Option<u64>> {
    let len = file.metadata()?.len();
    let mut buf = vec![0u8; 64 * 1024];
    let mut at = from;
    while at < len {
        // The next byte that is not in a hole (file systems without holes answer `at` itself).
        at = match seek(file, SeekFrom::Data(at)) {
            Ok(data) => data,
            Err(Errno::NXIO) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let want = usize::try_from((len - at).min(buf.len() as u64)).unwrap_or(buf.len());
        let n = file.read_at(&mut buf[..want], at)?;
        if n == 0 {
            return Ok(None);
        }
        if let Some(i) = buf[..n].iter().position(|b| *b != 0) {
            return Ok(Some(at + i as u64));
        }
        at += n as u64;
    }
    Ok(None)
}
