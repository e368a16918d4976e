//! A server process a nemesis owns together with its directory: killed with SIGKILL at will,
//! started again by its owner ([`serve`](super::serve), [`zookeeper`](super::zookeeper)).
//!
//! Invariant: at most one process at a time, and neither it nor the directory outlives this
//! value: on drop the process is killed and reaped, and the directory removed.

use std::path::{Path, PathBuf};
use std::process::Child;

/// A process slot and the directory that is this value's alone.
#[derive(Debug)]
pub struct Owned {
    dir: PathBuf,
    child: Option<Child>,
}

impl Owned {
    /// Takes `dir` over, with nothing running yet.
    pub fn new(dir: &Path) -> Owned {
        Owned {
            dir: dir.to_owned(),
            child: None,
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether a process runs (one not killed since it was started).
    pub fn running(&self) -> bool {
        self.child.is_some()
    }

    /// The process now running; one still running is killed first.
    pub fn run(&mut self, child: Child) {
        self.kill9();
        self.child = Some(child);
    }

    /// SIGKILL, and reaps the process: nothing of it runs when this returns.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        self.kill9();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
