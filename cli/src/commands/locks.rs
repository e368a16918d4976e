//! `shepherd locks PATH`: the lock nodes under a path, the way a person debugging a stuck
//! lock wants them: per lock folder, the holder(s) then the waiters in queue order, each with
//! its recipe, its owning session, how long it has been there, whom it waits for and the
//! start of its data (where Curator and kazoo put the owner's identity).
//!
//! Invariants: the queue is read by `shepherd_recipes::lock_queue`, the rule the recipes
//! acquire by, so the holder shown is the one the locks would grant; an ephemeral lock
//! (`EphemeralLock`'s fixed node, named `lock`) is shown as its folder's holder; a lock node
//! deleted while the command runs is left out (it was released); the result is a snapshot,
//! not a transaction.

use clap::Args;
use futures_util::{StreamExt, stream};
use serde::Serialize;
use shepherd_client::Client;
use shepherd_recipes::lock_queue;

use super::error::{AtPath, CliError};
use super::output::{Out, age, session_text, time_text};
use super::walk::{IN_FLIGHT, Unreadable, join, walk};

/// The bytes of a node's data shown.
const DATA_SHOWN: usize = 64;

/// `shepherd locks PATH`.
#[derive(Args, Debug)]
pub struct LocksArgs {
    /// Where to look for lock folders (the whole subtree).
    #[arg(default_value = "/", value_parser = super::znode_path::parse)]
    pub path: String,
}

/// One lock node as shown.
#[derive(Debug, Serialize)]
struct ContenderOut {
    name: String,
    path: String,
    /// `holder` or `waiter`.
    role: &'static str,
    /// 0 for the first in the queue.
    position: usize,
    recipe: &'static str,
    /// `read` (shared) or `write` (exclusive).
    mode: &'static str,
    sequence: Option<u32>,
    /// The owning session (`0x…`), `None` for a persistent node.
    session: Option<String>,
    /// Creation time, RFC 3339.
    since: String,
    /// Milliseconds since creation, by this machine's clock.
    age_ms: u128,
    waits_for: Option<String>,
    /// The start of the data, as UTF-8 (lossy).
    data: String,
}

/// One lock folder as shown.
#[derive(Debug, Serialize)]
struct LockOut {
    lock: String,
    contenders: Vec<ContenderOut>,
}

/// A contender before its node is read.
struct Candidate {
    name: String,
    path: String,
    position: usize,
    recipe: &'static str,
    reader: bool,
    sequence: Option<u32>,
    waits_for: Option<String>,
}

/// Prints every lock folder under the path, or a line saying there is none.
pub async fn locks(client: &Client, args: &LocksArgs, out: &mut Out) -> Result<(), CliError> {
    let skip_system = client.chroot().is_none();
    let nodes = walk(client, &args.path, skip_system).await?;
    let mut found = 0;
    let mut unreadable = Unreadable::default();
    for node in &nodes {
        if let Some(code) = node.refused {
            unreadable.add(code, &node.path);
        }
        // Only the layouts of lock recipes: a folder of queue items or jobs is no lock.
        let mut candidates: Vec<Candidate> = lock_queue(&node.children)
            .into_iter()
            .filter(|c| c.is_known_layout())
            .enumerate()
            .map(|(position, c)| Candidate {
                path: join(&node.path, &c.name),
                name: c.name,
                position,
                recipe: c.recipe,
                reader: c.reader,
                sequence: Some(c.sequence),
                waits_for: c.blocked_by,
            })
            .collect();
        if node.children.iter().any(|c| c == "lock") {
            candidates.insert(
                0,
                Candidate {
                    name: "lock".into(),
                    path: join(&node.path, "lock"),
                    position: 0,
                    recipe: "ephemeral lock",
                    reader: false,
                    sequence: None,
                    waits_for: None,
                },
            );
        }
        if candidates.is_empty() {
            continue;
        }
        let read: Vec<_> = stream::iter(candidates)
            .map(|c| async move {
                let data = client.get_data(&c.path).await;
                (c, data)
            })
            .buffered(IN_FLIGHT)
            .collect()
            .await;
        let mut contenders = Vec::new();
        for (c, data) in read {
            let (data, stat) = match data {
                Ok(read) => read,
                Err(error) if error.is_no_node() => continue,
                Err(shepherd_client::Error::Keeper(code)) => {
                    unreadable.add(code, &c.path);
                    continue;
                }
                Err(error) => return Err(error).at(&c.path),
            };
            // Every lock recipe's node is ephemeral: a persistent `lock` or `…-lock-0000000001`
            // is a node that happens to be named so.
            if stat.ephemeral_owner == 0 {
                continue;
            }
            let shown = &data[..data.len().min(DATA_SHOWN)];
            contenders.push(ContenderOut {
                role: if c.waits_for.is_none() {
                    "holder"
                } else {
                    "waiter"
                },
                name: c.name,
                path: c.path,
                position: c.position,
                recipe: c.recipe,
                mode: if c.reader { "read" } else { "write" },
                sequence: c.sequence,
                session: (stat.ephemeral_owner != 0).then(|| session_text(stat.ephemeral_owner)),
                since: time_text(stat.ctime),
                age_ms: age(stat.ctime).as_millis(),
                waits_for: c.waits_for,
                data: String::from_utf8_lossy(shown).into_owned(),
            });
        }
        if contenders.is_empty() {
            continue;
        }
        found += 1;
        let lock = LockOut {
            lock: node.path.clone(),
            contenders,
        };
        if out.json {
            out.json_line(&lock)?;
        } else {
            write_lock(out, &lock)?;
        }
    }
    if found == 0 && !out.json {
        out.line(format!("no lock nodes under {}", args.path))?;
    }
    unreadable.finish()
}

/// The text form of one lock folder.
fn write_lock(out: &mut Out, lock: &LockOut) -> Result<(), CliError> {
    let holders: Vec<&str> = lock
        .contenders
        .iter()
        .filter(|c| c.role == "holder")
        .map(|c| c.name.as_str())
        .collect();
    let waiting = lock.contenders.len() - holders.len();
    out.line(format!(
        "{}: held by {}; {waiting} waiting",
        lock.lock,
        holders.join(", ")
    ))?;
    let width = lock
        .contenders
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(0);
    for c in &lock.contenders {
        let role = if c.role == "holder" {
            "holder".to_owned()
        } else {
            format!("wait {}", c.position)
        };
        let session = c.session.as_deref().unwrap_or("none (persistent)");
        let mut line = format!(
            "  {role:<7} {:<width$}  {}, {}, session {session}, for {:.1}s",
            c.name,
            c.recipe,
            c.mode,
            c.age_ms as f64 / 1000.0
        );
        if let Some(waits_for) = &c.waits_for {
            line.push_str(&format!(", waits for {waits_for}"));
        }
        if !c.data.is_empty() {
            line.push_str(&format!(", data {:?}", c.data));
        }
        out.line(line)?;
    }
    Ok(())
}
