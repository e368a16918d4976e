//! `shepherd load [FILE]`: creates the nodes of a dump (`shepherd dump`'s JSON lines), for
//! seeding a dev coordinator.
//!
//! Invariants: lines are created in file order, which a dump makes parents first; creates go
//! in atomic batches (a multi of at most [`BATCH_OPS`] ops and [`BATCH_BYTES`] of data), so a
//! batch is all or nothing; an existing node fails the load (`NodeExists`, exit 1) or is
//! skipped, as `--existing` says, and is never overwritten; ephemeral nodes are skipped with a
//! note on stderr, since they belong to a session that is not ours, or made persistent when
//! `--ephemerals persistent` says so; a line's `kind` (container, TTL with its `ttl`) is
//! created as such; a line is read with a
//! bounded buffer ([`MAX_LINE`]), so a corrupt file cannot exhaust memory.

use std::io::{BufRead, BufReader, IsTerminal, Read};
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde::Serialize;
use shepherd_client::{Acl, Client, CreateMode, CreateOptions, Error as ClientError};

use super::dump::{DumpLine, NodeKind};
use super::error::{AtPath, CliError};
use super::output::Out;
use crate::progress::Progress;

/// The most ops in one multi.
pub const BATCH_OPS: usize = 100;
/// The most data bytes in one multi: well under `jute.maxbuffer` (1 MiB).
pub const BATCH_BYTES: usize = 256 * 1024;
/// The longest line accepted: a node's 1 MiB of data as base64, and room for the rest.
pub const MAX_LINE: usize = 2 * 1024 * 1024;

/// What to do with a node that exists already.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Existing {
    /// Stop with `NodeExists` (exit 1); the batches before it stay created.
    Fail,
    /// Leave it as it is and go on.
    Skip,
}

/// What to do with a node a session owned when it was dumped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Ephemerals {
    /// Leave it out, with a note: it belongs to a session that is not ours.
    Skip,
    /// Create it as a persistent node.
    Persistent,
}

/// `shepherd load [FILE]`.
#[derive(Args, Debug)]
pub struct LoadArgs {
    /// The dump to read (`-` or nothing: stdin).
    pub file: Option<PathBuf>,
    /// What to do with a node that exists already.
    #[arg(long, value_enum, default_value_t = Existing::Fail)]
    pub existing: Existing,
    /// What to do with the dump's ephemeral nodes.
    #[arg(long, value_enum, default_value_t = Ephemerals::Skip)]
    pub ephemerals: Ephemerals,
}

/// A node to create.
struct Pending {
    path: String,
    data: Vec<u8>,
    acl: Vec<Acl>,
    kind: Option<NodeKind>,
    ttl: Option<u64>,
}

#[derive(Debug, Default, Serialize)]
struct Summary {
    created: usize,
    existing: usize,
    ephemeral: usize,
}

/// Reads the dump and creates its nodes; prints what it did.
pub async fn load(client: &Client, args: &LoadArgs, out: &mut Out) -> Result<(), CliError> {
    // A file's size is known, so its progress is shown in bytes read; stdin has no total.
    let (input, total): (Box<dyn Read>, u64) = match &args.file {
        None => (Box::new(std::io::stdin()), 0),
        Some(path) if path.as_os_str() == "-" => (Box::new(std::io::stdin()), 0),
        Some(path) => {
            let file = std::fs::File::open(path)
                .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?;
            let len = file.metadata().map_or(0, |m| m.len());
            (Box::new(file), len)
        }
    };
    let progress =
        Progress::with_visibility(total, "bytes", total > 0 && std::io::stderr().is_terminal());
    let mut reader = BufReader::new(input);
    let mut summary = Summary::default();
    let mut batch: Vec<Pending> = Vec::new();
    let mut batch_bytes = 0;
    let mut line = String::new();
    for number in 1u64.. {
        line.clear();
        let read = (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_line(&mut line)
            .map_err(|e| CliError::Usage(format!("line {number}: {e}")))?;
        if read == 0 {
            break;
        }
        progress.inc(read as u64);
        if line.len() > MAX_LINE {
            return Err(CliError::Usage(format!(
                "line {number} is longer than {MAX_LINE} bytes"
            )));
        }
        if line.trim().is_empty() {
            continue;
        }
        let node = parse_line(&line).map_err(|e| CliError::Usage(format!("line {number}: {e}")))?;
        if node.ephemeral && args.ephemerals == Ephemerals::Skip {
            eprintln!(
                "note: skipped ephemeral {} (it belongs to a session)",
                node.path
            );
            summary.ephemeral += 1;
            continue;
        }
        if node.path == "/" {
            summary.existing += 1;
            continue;
        }
        let data = node
            .data
            .decode()
            .map_err(|e| CliError::Usage(format!("line {number}: {e}")))?;
        let acl = node
            .acl
            .iter()
            .map(|a| a.to_acl())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| CliError::Usage(format!("line {number}: {e}")))?;
        if batch.len() == BATCH_OPS || batch_bytes + data.len() > BATCH_BYTES {
            create_batch(
                client,
                std::mem::take(&mut batch),
                args.existing,
                &mut summary,
            )
            .await?;
            batch_bytes = 0;
            progress.set_message(format!("{} nodes created", summary.created));
        }
        batch_bytes += data.len();
        if node.kind == Some(NodeKind::Ttl) && node.ttl.is_none_or(|ttl| ttl == 0) {
            return Err(CliError::Usage(format!(
                "line {number}: a ttl node needs \"ttl\": milliseconds above 0"
            )));
        }
        batch.push(Pending {
            path: node.path,
            data,
            acl,
            kind: node.kind,
            ttl: node.ttl,
        });
    }
    create_batch(client, batch, args.existing, &mut summary).await?;
    progress.finish();
    if out.json {
        out.json_line(&summary)
    } else {
        out.line(format!(
            "created {} nodes; skipped {} existing, {} ephemeral",
            summary.created, summary.existing, summary.ephemeral
        ))
    }
}

/// One dump line, checked.
fn parse_line(line: &str) -> Result<DumpLine, String> {
    let node: DumpLine = serde_json::from_str(line).map_err(|e| e.to_string())?;
    if !node.path.starts_with('/') {
        return Err(format!("path {:?} is not absolute", node.path));
    }
    Ok(node)
}

/// The create options of a node: persistent, container or TTL, with its ACL (the open ACL if
/// it had none).
fn options(node: &Pending) -> CreateOptions {
    let options = match (node.kind, node.ttl) {
        (Some(NodeKind::Container), _) => CreateOptions::new(CreateMode::Container),
        (Some(NodeKind::Ttl), Some(ttl)) => CreateOptions::new(CreateMode::PersistentWithTTL)
            .with_ttl(std::time::Duration::from_millis(ttl)),
        _ => CreateOptions::persistent(),
    };
    if node.acl.is_empty() {
        options
    } else {
        options.with_acl(node.acl.clone())
    }
}

/// Creates a batch in one multi; if a node exists and existing nodes are skipped, creates the
/// batch node by node instead.
async fn create_batch(
    client: &Client,
    batch: Vec<Pending>,
    existing: Existing,
    summary: &mut Summary,
) -> Result<(), CliError> {
    if batch.is_empty() {
        return Ok(());
    }
    let multi = batch.iter().fold(client.multi(), |multi, node| {
        multi.create(&node.path, &node.data, &options(node))
    });
    match multi.commit().await {
        Ok(_) => {
            summary.created += batch.len();
            Ok(())
        }
        Err(ClientError::MultiFailed { code, .. })
            if existing == Existing::Skip && code == shepherd_client::ErrorCode::NodeExists =>
        {
            for node in &batch {
                match client.create(&node.path, &node.data, &options(node)).await {
                    Ok(_) => summary.created += 1,
                    Err(error) if error.is_node_exists() => summary.existing += 1,
                    Err(error) => return Err(error).at(&node.path),
                }
            }
            Ok(())
        }
        Err(ClientError::MultiFailed { index, code }) => {
            let path = batch.get(index).map_or("", |n| n.path.as_str());
            Err(ClientError::Keeper(code)).at(path)
        }
        Err(error) => Err(error).at(batch.first().map_or("", |n| n.path.as_str())),
    }
}
