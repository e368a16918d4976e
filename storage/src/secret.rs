//! The data directory's secret: `DIR/shepherd.secret`, 32 bytes from the OS random source,
//! readable by its owner only (mode 0600).
//!
//! The core derives session passwords from it (a keyed hash of the session id), so that
//! sessions restored from disk keep their passwords across a restart. ZooKeeper never reads the
//! file. Invariant: the file is either absent or whole, since it is written under a temporary
//! name, synced, and renamed into place; one of any other length is an error, never replaced,
//! because replacing it would silently invalidate every session's password.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;

use rand::TryRngCore;

use super::data_dir::DataDir;
use super::error::{StorageError, at};

/// The secret file's name, at the top of the data directory.
pub const SECRET_FILE: &str = "shepherd.secret";

impl DataDir {
    /// The directory's secret, created on first use.
    ///
    /// # Errors
    /// [`StorageError::BadSecret`] for a file that is not 32 bytes, [`StorageError::Io`] when
    /// it cannot be read or created, or the OS random source fails.
    pub fn secret(&self) -> Result<[u8; 32], StorageError> {
        let path = self.root().join(SECRET_FILE);
        match File::open(&path) {
            Ok(mut file) => {
                let len = file.metadata().map_err(at(&path))?.len();
                let mut secret = [0u8; 32];
                if len != 32 {
                    return Err(StorageError::BadSecret { path, len });
                }
                file.read_exact(&mut secret).map_err(at(&path))?;
                Ok(secret)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => self.create_secret(),
            Err(e) => Err(at(&path)(e)),
        }
    }

    fn create_secret(&self) -> Result<[u8; 32], StorageError> {
        let path = self.root().join(SECRET_FILE);
        let temp = self.root().join(format!("{SECRET_FILE}.tmp"));
        let mut secret = [0u8; 32];
        rand::rngs::OsRng
            .try_fill_bytes(&mut secret)
            .map_err(|e| at(&path)(std::io::Error::other(e)))?;
        let write = || -> std::io::Result<()> {
            // A leftover from a crash may have other permissions: `mode` applies only when
            // the file is created.
            match std::fs::remove_file(&temp) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
            let mut file = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&temp)?;
            file.write_all(&secret)?;
            file.sync_all()?;
            std::fs::rename(&temp, &path)?;
            File::open(self.root())?.sync_all()
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&temp);
            at(&path)(e)
        })?;
        Ok(secret)
    }
}
