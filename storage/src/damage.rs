//! Torn or damaged: what the end of a log file says about how reading stopped there.
//!
//! A crash in the middle of an append leaves a torn write: a prefix of the last record, then
//! the zeros the file was preallocated with (or the end of the file). Nothing after it was ever
//! acknowledged, since an entry is acknowledged only after its fsync, and the fsync covers every
//! entry before it. That is the one damage recovery may repair, by cutting it off, as ZooKeeper
//! does.
//!
//! Anything else is corruption: a whole record (its end-of-record byte in place) whose checksum
//! does not match, a record that checks out but does not decode, or any non-zero byte past the
//! damaged record. Cutting there could drop acknowledged writes, so recovery refuses and leaves
//! the files byte for byte as they were (docs/storage.md, "Torn tails").
//!
//! Invariant: deciding reads the file and never writes it; memory is one buffer, whatever the
//! file's size, and holes are skipped (`zeros.rs`).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

use super::log_reader::{TailProblem, TornTail};
use super::txn_log::EOR;
use super::zeros::first_non_zero;

/// The longest record a torn write can have begun: a request is at most `jute.maxbuffer` (1 MiB
/// by default, rarely raised past a few), and this is the default preallocation, 64 MiB, so that
/// a single flipped bit in a length field of a preallocated file is never taken for a tear.
const MAX_RECORD: u64 = 64 << 20;

/// Whether the damage `tail` reports is a torn write (the file holds nothing but zeros from
/// inside the damaged record on), which recovery may cut, rather than corruption, which it must
/// refuse.
///
/// # Errors
/// The file cannot be read.
pub fn is_torn_write(tail: &TornTail) -> io::Result<bool> {
    // The region the interrupted write could have reached: the damaged record as its length
    // field claims it (a header, for damage at the start of the file).
    let record_end = match &tail.problem {
        // A whole record, end-of-record byte and all: written completely, then damaged.
        TailProblem::ChecksumMismatch { .. } | TailProblem::Undecodable(_) => return Ok(false),
        TailProblem::MissingEor(b) if *b != 0 && *b != EOR => return Ok(false),
        TailProblem::BadMagic(magic) if *magic != 0 => return Ok(false),
        // The file ends inside the record, so nothing follows it; unless the record claims a
        // length no write makes, which is a damaged length field over the records after it.
        TailProblem::Truncated => return Ok(claimed_len(tail)? <= MAX_RECORD),
        TailProblem::BadMagic(_) => 0,
        TailProblem::BadLength(_) => tail.offset + 12,
        TailProblem::MissingEor(_) => tail.offset + 12 + claimed_len(tail)? + 1,
    };
    Ok(first_non_zero(&File::open(&tail.path)?, record_end)?.is_none())
}

/// The length field of the record at the tail's offset (0 when it cannot be read).
fn claimed_len(tail: &TornTail) -> io::Result<u64> {
    let mut file = File::open(&tail.path)?;
    file.seek(SeekFrom::Start(tail.offset + 8))?;
    let mut len = [0u8; 4];
    match file.read_exact(&mut len) {
        Ok(()) => Ok(u64::try_from(i32::from_be_bytes(len)).unwrap_or(0)),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
        Err(e) => Err(e),
    }
}
