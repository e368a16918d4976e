//! Memory per znode: the server's resident memory before and after creating N nodes of one
//! value size in one folder.
//!
//! The nodes are created by [`FILL_SESSIONS`] sessions with [`FILL_IN_FLIGHT`] creates in
//! flight each, through the load benchmark's create phase; against a `--connect` server they
//! are deleted again afterwards, so that the next measurement starts from about the same tree.
//!
//! Invariant: the figure is only reported when every create succeeded; a failed create makes
//! the measurement an error, since the memory would then be for fewer nodes.

use std::sync::Arc;
use std::time::Duration;

use super::measurement::Measurement;
use crate::error::{Error, Result};
use crate::folder;
use crate::load::{Phase, phase::Drive};
use crate::rss;
use crate::sessions::connect_many;
use crate::target::Target;

/// Sessions creating the nodes.
const FILL_SESSIONS: usize = 4;
/// Creates in flight per filling session.
const FILL_IN_FLIGHT: usize = 256;

/// Creates `nodes` nodes of `value_size` bytes under `dir` and measures the server's memory
/// before and after; `settle` is waited before each reading. With `cleanup`, deletes them
/// (and `dir`) afterwards.
///
/// # Errors
/// When the sessions cannot connect, a create fails, or the server's memory cannot be read.
pub async fn measure(
    target: &Target,
    dir: &str,
    nodes: usize,
    value_size: usize,
    settle: Duration,
    cleanup: bool,
) -> Result<Measurement> {
    let mut clients = Vec::new();
    connect_many(&target.connect, FILL_SESSIONS, &mut clients).await?;
    folder::ensure(&clients[0], dir).await?;
    let mut drive = Drive {
        phase: Phase::Create,
        dir: dir.to_owned(),
        nodes,
        in_flight: FILL_IN_FLIGHT,
        rate: None,
        value: Arc::from(vec![b'v'; value_size]),
    };
    let (created, rss) = rss::around(target, settle, async {
        let created = drive.run(&clients).await?;
        match created.first_error {
            Some(error) => Err(Error::Refused(format!(
                "{} of {nodes} creates failed, the first: {error}",
                created.errors
            ))),
            None => Ok(created),
        }
    })
    .await?;
    if cleanup {
        drive.phase = Phase::Delete;
        let _ = drive.run(&clients).await?;
        let _ = clients[0].delete(dir, None).await;
    }
    for client in &clients {
        let _ = tokio::time::timeout(Duration::from_secs(10), client.close()).await;
    }
    Ok(Measurement {
        what: "nodes",
        count: nodes,
        value_size: Some(value_size),
        rss,
        seconds: created.wall.as_secs_f64(),
        lost: 0,
    })
}
