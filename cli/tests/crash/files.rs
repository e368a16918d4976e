//! Damage done to a stopped server's data directory, as a crash or a bad disk would: the
//! newest transaction log cut inside its last entry, a bit flipped in the newest snapshot.
//!
//! The log layout is ZooKeeper 3.8's (`FileTxnLog.java`, docs/storage.md): a 16-byte file
//! header, then entries of `crc: i64, length: i32, payload, 0x42 ('B')`, then the zeros of the
//! preallocation, where a length of 0 ends the log.

use std::path::{Path, PathBuf};

use shepherd_protocol::txn::TxnEntry;

/// The newest file named `<prefix>.<hex zxid>` in `dir/version-2`, by zxid.
pub fn newest(data_dir: &Path, prefix: &str) -> PathBuf {
    let dir = data_dir.join("version-2");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let hex = name.strip_prefix(prefix)?.strip_prefix('.')?;
            Some((i64::from_str_radix(hex, 16).ok()?, e.path()))
        })
        .max()
        .unwrap_or_else(|| panic!("no {prefix}.<zxid> file in {}", dir.display()))
        .1
}

/// One entry's place in a log file and the zxid it holds.
pub struct Entry {
    pub offset: usize,
    pub len: usize,
    pub zxid: i64,
}

/// The entries of one log file, in file order, up to the first that does not read whole.
pub fn entries(log: &Path) -> Vec<Entry> {
    let bytes = std::fs::read(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let mut out = Vec::new();
    let mut at = 16;
    while let Some(head) = bytes.get(at..at + 12) {
        let len = i32::from_be_bytes([head[8], head[9], head[10], head[11]]);
        let Ok(len) = usize::try_from(len) else { break };
        let Some(payload) = bytes.get(at + 12..at + 12 + len) else {
            break;
        };
        if len == 0 || bytes.get(at + 12 + len) != Some(&b'B') {
            break;
        }
        let Ok(entry) = TxnEntry::decode(payload) else {
            break;
        };
        out.push(Entry {
            offset: at,
            len: 12 + len + 1,
            zxid: entry.header.zxid,
        });
        at += 12 + len + 1;
    }
    out
}

/// Cuts `log` in the middle of its last entry's payload, as a crash during the write would,
/// and returns that entry's zxid.
pub fn tear_last_entry(log: &Path) -> i64 {
    let last = entries(log)
        .pop()
        .unwrap_or_else(|| panic!("{} holds no entry to tear", log.display()));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(log)
        .expect("open the log");
    file.set_len((last.offset + last.len / 2) as u64)
        .expect("truncate the log");
    last.zxid
}

/// Flips one bit in the middle of `file`.
pub fn flip_a_bit(file: &Path) {
    let mut bytes = std::fs::read(file).expect("read the file");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x10;
    std::fs::write(file, bytes).expect("write the file back");
}
