//! The server's resident set as the memory benchmarks (`scale`, `tree`, `watches`, `pressure`)
//! read it: [`read`] takes one reading, [`around`] one before and one after a piece of work.
//!
//! Invariants: every reading goes through [`Target::rss`], so a `--before-reading` command
//! runs before each one; a server whose process is unknown is an error, never a zero; and
//! [`around`] waits the settle time before each of its readings, so that both are taken with
//! the server equally at rest.

use std::time::Duration;

use crate::error::{Error, Result};
use crate::target::Target;

/// The server's resident set before and after a piece of work, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Growth {
    /// Before the work.
    pub before: u64,
    /// After it.
    pub after: u64,
}

impl Growth {
    /// Bytes per item of `items` (the growth, negative if the set shrank; `items` 0 counts
    /// as 1).
    pub fn per(&self, items: usize) -> f64 {
        (self.after as f64 - self.before as f64) / items.max(1) as f64
    }
}

/// One reading of the server's resident set, bytes.
///
/// # Errors
/// [`Error::Refused`] when the server's process is unknown (`--connect` without
/// `--server-pid`); as [`Target::rss`] when it cannot be read.
pub fn read(target: &Target) -> Result<u64> {
    target.rss()?.ok_or_else(|| {
        Error::Refused("the server's process is unknown: give --server-pid".to_owned())
    })
}

/// Runs `work` between two readings of the server's resident set, each taken after `settle`.
///
/// # Errors
/// As [`read`], or `work`'s error (then the second reading is not taken).
pub async fn around<T>(
    target: &Target,
    settle: Duration,
    work: impl Future<Output = Result<T>>,
) -> Result<(T, Growth)> {
    tokio::time::sleep(settle).await;
    let before = read(target)?;
    let done = work.await?;
    tokio::time::sleep(settle).await;
    let after = read(target)?;
    Ok((done, Growth { before, after }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_per_item() {
        let growth = Growth {
            before: 1_000,
            after: 3_000,
        };
        assert_eq!(growth.per(4), 500.0);
        assert_eq!(growth.per(0), 2_000.0);
        let shrunk = Growth {
            before: 3_000,
            after: 1_000,
        };
        assert_eq!(shrunk.per(2), -1_000.0);
    }

    #[tokio::test]
    async fn around_reads_this_process_before_and_after() {
        let target = Target::remote("127.0.0.1:1", Some(std::process::id()));
        let (touched, growth) = around(&target, Duration::ZERO, async {
            let touched = vec![1u8; 64 << 20];
            Ok(std::hint::black_box(touched))
        })
        .await
        .unwrap();
        assert!(growth.after >= growth.before + (32 << 20), "{growth:?}");
        drop(touched);

        let unknown = Target::remote("127.0.0.1:1", None);
        let refused = around(&unknown, Duration::ZERO, async { Ok(()) }).await;
        assert!(matches!(refused, Err(Error::Refused(_))), "{refused:?}");
    }
}
