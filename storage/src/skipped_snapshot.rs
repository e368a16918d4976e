//! [`SkippedSnapshot`]: a snapshot that recovery did not use. Its own file because both the
//! recovery that makes it and the error that reports it ([`crate::StorageError`]) need it, and
//! neither may depend on the other (the recovery returns that error).

use std::path::PathBuf;

/// A snapshot recovery did not use, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedSnapshot {
    /// The file.
    pub path: PathBuf,
    /// What was wrong with it.
    pub reason: String,
}
