//! Where and how a server keeps its state on disk: `dataDir` and the keys around it, as
//! ZooKeeper 3.8 reads them from `zoo.cfg` (docs/operations.md, "Durable data directory").
//!
//! Without a data directory, the default, a server keeps everything in memory. With one, every
//! transaction is in ZooKeeper's own transaction log before anything that depends on it is
//! sent, and snapshots are taken every `snapCount` transactions.
//!
//! ZooKeeper reads several of these keys as system properties (`zookeeper.forceSync`,
//! `zookeeper.snapCount`, …) and turns any `zoo.cfg` key it does not know into one by
//! prefixing `zookeeper.`; both spellings are accepted here.

use std::path::PathBuf;
use std::time::Duration;

/// ZooKeeper's default `snapCount`: transactions between snapshots (randomised, see
/// [`Durability::snap_count`]).
pub const DEFAULT_SNAP_COUNT: u32 = 100_000;
/// ZooKeeper's default `zookeeper.snapSizeLimitInKb`: 4 GiB of log between snapshots.
pub const DEFAULT_SNAP_SIZE_LIMIT_KB: i64 = 4 * 1024 * 1024;
/// ZooKeeper's default `preAllocSize`: the transaction log grows 64 MiB at a time.
pub const DEFAULT_PREALLOC_BYTES: u64 = 64 * 1024 * 1024;
/// The fewest snapshots autopurge keeps; ZooKeeper raises any lower
/// `autopurge.snapRetainCount` to this.
pub const MIN_SNAP_RETAIN_COUNT: u32 = 3;

/// How a server keeps its state on disk. The default keeps it in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Durability {
    /// `dataDir`: where snapshots (and, without `dataLogDir`, transaction logs) live, in
    /// `DIR/version-2`. `None` keeps everything in memory.
    pub data_dir: Option<PathBuf>,
    /// `dataLogDir`: where transaction logs live, if not in `data_dir`.
    pub data_log_dir: Option<PathBuf>,
    /// `snapCount`: a snapshot is taken once more than `snap_count / 2 + r` transactions were
    /// logged since the last, `r` drawn anew each time from `0..snap_count / 2` (ZooKeeper
    /// 3.8 `SyncRequestProcessor`), so that servers do not snapshot in step.
    pub snap_count: u32,
    /// `zookeeper.snapSizeLimitInKb`: the same rule by log bytes; 0 or less turns it off.
    pub snap_size_limit_kb: i64,
    /// `forceSync`: fsync the log before acknowledging a write (default yes). `no` only flushes
    /// to the OS: a power cut may lose acknowledged writes, a crash of the process does not.
    pub force_sync: bool,
    /// `preAllocSize` (given in KB): how far ahead the log file is extended.
    pub prealloc_bytes: u64,
    /// `autopurge.snapRetainCount`: the snapshots (and the logs they need) that purge keeps;
    /// at least [`MIN_SNAP_RETAIN_COUNT`].
    pub snap_retain_count: u32,
    /// `autopurge.purgeInterval` (given in hours): how often old snapshots and logs are purged;
    /// zero, the default, for never.
    pub purge_interval: Duration,
    /// `zookeeper.snapshot.trust.empty`: recover a directory that has logs but no snapshot by
    /// replaying the logs from an empty tree. Off (as in ZooKeeper): such a directory is
    /// refused, since the snapshot the logs build on is missing (docs/storage.md, "Recovery").
    pub trust_empty_snapshot: bool,
}

impl Default for Durability {
    fn default() -> Self {
        Durability {
            data_dir: None,
            data_log_dir: None,
            snap_count: DEFAULT_SNAP_COUNT,
            snap_size_limit_kb: DEFAULT_SNAP_SIZE_LIMIT_KB,
            force_sync: true,
            prealloc_bytes: DEFAULT_PREALLOC_BYTES,
            snap_retain_count: MIN_SNAP_RETAIN_COUNT,
            purge_interval: Duration::ZERO,
            trust_empty_snapshot: false,
        }
    }
}

/// What [`Durability::apply_key`] made of one `zoo.cfg` key.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum KeyOutcome {
    /// Not one of ours.
    Unknown,
    /// Applied.
    Applied,
    /// Applied, with a warning (a value ZooKeeper would also have corrected).
    Warning(String),
}

impl Durability {
    /// Whether state is kept on disk.
    pub fn is_durable(&self) -> bool {
        self.data_dir.is_some()
    }

    /// Where the transaction logs' `version-2` lives: `dataLogDir`, else `dataDir`.
    pub fn log_dir(&self) -> Option<&PathBuf> {
        self.data_log_dir.as_ref().or(self.data_dir.as_ref())
    }

    /// Applies one `zoo.cfg` key, if it is one of ours.
    ///
    /// # Errors
    /// A short description of what was expected, for a value that does not parse.
    pub(crate) fn apply_key(&mut self, key: &str, value: &str) -> Result<KeyOutcome, String> {
        let key = key.strip_prefix("zookeeper.").unwrap_or(key);
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| "expected a number".to_string())
        };
        match key {
            "dataDir" => self.data_dir = Some(PathBuf::from(value)),
            "dataLogDir" => self.data_log_dir = Some(PathBuf::from(value)),
            "snapCount" => {
                let n = u32::try_from(number()?).map_err(|_| "too large".to_string())?;
                if n < 2 {
                    // ZooKeeper draws from 0..snapCount/2 and cannot draw from an empty range.
                    self.snap_count = 2;
                    return Ok(KeyOutcome::Warning(format!(
                        "snapCount={n} is below 2; using 2"
                    )));
                }
                self.snap_count = n;
            }
            "snapSizeLimitInKb" => {
                self.snap_size_limit_kb =
                    value.parse().map_err(|_| "expected a number".to_string())?;
            }
            // ZooKeeper: anything but "no" keeps fsync on.
            "forceSync" => self.force_sync = value != "no",
            "preAllocSize" => self.prealloc_bytes = number()?.saturating_mul(1024),
            "autopurge.snapRetainCount" => {
                let n = u32::try_from(number()?).unwrap_or(u32::MAX);
                self.snap_retain_count = n.max(MIN_SNAP_RETAIN_COUNT);
                if n < MIN_SNAP_RETAIN_COUNT {
                    return Ok(KeyOutcome::Warning(format!(
                        "autopurge.snapRetainCount={n} is below {MIN_SNAP_RETAIN_COUNT}; \
                         using {MIN_SNAP_RETAIN_COUNT}"
                    )));
                }
            }
            "autopurge.purgeInterval" => {
                self.purge_interval = Duration::from_secs(number()?.saturating_mul(3600));
            }
            // Java's Boolean.getBoolean: only "true", in any case, is true.
            "snapshot.trust.empty" => {
                self.trust_empty_snapshot = value.eq_ignore_ascii_case("true")
            }
            _ => return Ok(KeyOutcome::Unknown),
        }
        Ok(KeyOutcome::Applied)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_in_both_spellings_with_zookeepers_corrections() {
        let mut d = Durability::default();
        assert!(!d.is_durable());
        for (key, value) in [
            ("dataDir", "/var/zk"),
            ("zookeeper.forceSync", "no"),
            ("snapCount", "1000"),
            ("preAllocSize", "1024"),
            ("autopurge.purgeInterval", "2"),
            ("zookeeper.snapshot.trust.empty", "TRUE"),
        ] {
            assert_eq!(d.apply_key(key, value), Ok(KeyOutcome::Applied), "{key}");
        }
        assert!(d.is_durable());
        assert_eq!(d.log_dir(), Some(&PathBuf::from("/var/zk")));
        assert!(!d.force_sync);
        assert_eq!(d.snap_count, 1000);
        assert_eq!(d.prealloc_bytes, 1024 * 1024);
        assert_eq!(d.purge_interval, Duration::from_secs(7200));
        assert!(d.trust_empty_snapshot);
        d.apply_key("snapshot.trust.empty", "yes").unwrap();
        assert!(
            !d.trust_empty_snapshot,
            "Java's getBoolean: only true is true"
        );
        d.apply_key("dataLogDir", "/fast/zk").unwrap();
        assert_eq!(d.log_dir(), Some(&PathBuf::from("/fast/zk")));
        d.apply_key("forceSync", "whatever").unwrap();
        assert!(d.force_sync, "anything but no keeps fsync on");
        assert!(matches!(
            d.apply_key("autopurge.snapRetainCount", "1"),
            Ok(KeyOutcome::Warning(_))
        ));
        assert_eq!(d.snap_retain_count, 3);
        assert!(matches!(
            d.apply_key("snapCount", "1"),
            Ok(KeyOutcome::Warning(_))
        ));
        assert_eq!(d.snap_count, 2);
        assert!(d.apply_key("snapCount", "x").is_err());
        assert_eq!(d.apply_key("initLimit", "5"), Ok(KeyOutcome::Unknown));
    }
}
