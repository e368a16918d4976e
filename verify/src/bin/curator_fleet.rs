//! `curator_fleet`: the Rust half of the mixed fleet, in which our Curator-compatible locks
//! (`shepherd_recipes::curator`) and Apache Curator's own contend on the same paths. The Java
//! half (`tests/interop/curator/Fleet.java`) starts this binary and drives it, one command per
//! line on stdin; each reply is one line on stdout, tagged with the command's id, so that a
//! reply can come later than the next command (a `hold` that waits behind Curator's holder).
//!
//! ```text
//! curator_fleet HOST:PORT
//!   hold ID KIND PATH          take the lock (waits up to 20 s)   -> "ID held" | "ID timeout"
//!   release ID                 give back what `hold ID` took      -> "ID released"
//!   try ID KIND PATH           take it only within 300 ms, and
//!                              give it back at once               -> "ID got" | "ID busy"
//!   churn ID KIND PATH W R     W owners take it R times each      -> "ID churned N violations V"
//! ```
//!
//! KIND is one of `LockKind::as_str` (`mutex`, `semaphore-mutex`, `rw-read`, `rw-write`,
//! `multi-lock`), laid out as `shepherd_recipes::LockKind::build` lays it out, which is where
//! Curator puts the same lock. Any failure replies `ID error: WHAT`; a second holder replies
//! `ID violation: WHAT`.
//!
//! The check that catches two holders is shared with the Java half: right after taking a lock,
//! a holder marks itself under `/fleet-check<PATH>` (which the driver creates, with its
//! `readers` child), atomically, so that a marker can only be made if no conflicting one exists:
//! an exclusive holder runs `multi(create holder EPHEMERAL, delete readers)` (NodeExists: a
//! second exclusive holder; NotEmpty: a reader beside it), a shared holder creates
//! `readers/r-` EPHEMERAL_SEQUENTIAL (NoNode: an exclusive holder beside it). Leaving undoes it
//! before the lock is released.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use shepherd_client::{Client, CreateMode, CreateOptions, Error as ClientError, ErrorCode};
use shepherd_recipes::{Guard, Lock, LockKind};
use tokio::sync::{mpsc, oneshot};

/// How long a `hold` (and each churn acquisition) may wait for its turn.
const WAIT: Duration = Duration::from_secs(20);
/// How long a `try` waits: long enough for the lock to be free, short enough to call "busy".
const BRIEF: Duration = Duration::from_millis(300);
/// Where the holder markers live: `/fleet-check` followed by the lock's path.
const MARKER_ROOT: &str = "/fleet-check";

/// One parsed command line.
enum Command {
    Hold {
        id: String,
        kind: LockKind,
        path: String,
    },
    Release {
        id: String,
    },
    Try {
        id: String,
        kind: LockKind,
        path: String,
    },
    Churn {
        id: String,
        kind: LockKind,
        path: String,
        owners: usize,
        rounds: usize,
    },
}

fn parse(line: &str) -> Result<Command, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let kind = |w: &str| {
        LockKind::ALL
            .into_iter()
            .find(|k| k.as_str() == w)
            .ok_or_else(|| format!("unknown lock kind {w:?}"))
    };
    let number = |w: &str| w.parse::<usize>().map_err(|e| format!("{w:?}: {e}"));
    match words.as_slice() {
        ["hold", id, k, path] => Ok(Command::Hold {
            id: id.to_string(),
            kind: kind(k)?,
            path: path.to_string(),
        }),
        ["release", id] => Ok(Command::Release { id: id.to_string() }),
        ["try", id, k, path] => Ok(Command::Try {
            id: id.to_string(),
            kind: kind(k)?,
            path: path.to_string(),
        }),
        ["churn", id, k, path, w, r] => Ok(Command::Churn {
            id: id.to_string(),
            kind: kind(k)?,
            path: path.to_string(),
            owners: number(w)?,
            rounds: number(r)?,
        }),
        _ => Err(format!("unknown command {line:?}")),
    }
}

/// Prints one reply line; stdout's lock keeps lines whole when tasks reply at once.
fn reply(id: &str, text: &str) {
    let mut out = std::io::stdout().lock();
    // A closed stdout means the driver is gone: nothing left to tell.
    let _ = writeln!(out, "{id} {text}");
    let _ = out.flush();
}

/// A holder's mark under `/fleet-check<PATH>`: which node to undo on leaving.
enum Mark {
    Exclusive { dir: String },
    Shared { node: String },
}

/// Whether `kind` may be held beside others of its own kind.
fn shared(kind: LockKind) -> bool {
    kind.exclusive() != kind
}

/// Marks `client` as a holder of the lock at `path`: `Err` starting with "violation" if a
/// conflicting holder is marked.
async fn enter(client: &Client, kind: LockKind, path: &str) -> Result<Mark, String> {
    let dir = format!("{MARKER_ROOT}{path}");
    if shared(kind) {
        let options = CreateOptions::new(CreateMode::EphemeralSequential);
        return match client
            .create(&format!("{dir}/readers/r-"), b"rust", &options)
            .await
        {
            Ok((node, _)) => Ok(Mark::Shared { node }),
            Err(e) if e.is_no_node() => {
                Err("violation: a reader beside an exclusive holder".into())
            }
            Err(e) => Err(format!("error: marking a reader: {e}")),
        };
    }
    let result = client
        .multi()
        .create(
            &format!("{dir}/holder"),
            b"rust",
            &CreateOptions::ephemeral(),
        )
        .delete(&format!("{dir}/readers"), None)
        .commit()
        .await;
    match result {
        Ok(_) => Ok(Mark::Exclusive { dir }),
        Err(ClientError::MultiFailed {
            index: 0,
            code: ErrorCode::NodeExists,
        }) => Err("violation: two exclusive holders".into()),
        Err(ClientError::MultiFailed {
            index: 1,
            code: ErrorCode::NotEmpty,
        }) => Err("violation: an exclusive holder beside a reader".into()),
        Err(e) => Err(format!("error: marking the holder: {e}")),
    }
}

/// Undoes [`enter`].
async fn leave(client: &Client, mark: Mark) -> Result<(), String> {
    let result = match mark {
        Mark::Shared { node } => client.delete(&node, None).await,
        Mark::Exclusive { dir } => client
            .multi()
            .create(&format!("{dir}/readers"), b"", &CreateOptions::persistent())
            .delete(&format!("{dir}/holder"), None)
            .commit()
            .await
            .map(drop),
    };
    result.map_err(|e| format!("error: unmarking: {e}"))
}

/// Takes the lock within `wait`, marks, and returns the guard with its mark; `Ok(None)` when
/// the wait ran out.
async fn take(
    client: &Client,
    kind: LockKind,
    path: &str,
    wait: Duration,
) -> Result<Option<(shepherd_recipes::AnyGuard, Mark)>, String> {
    let lock = kind.build(client, path);
    let guard = match lock.acquire_timeout(wait).await {
        Ok(Some(guard)) => guard,
        Ok(None) => return Ok(None),
        Err(e) => return Err(format!("error: acquiring: {e}")),
    };
    match enter(client, kind, path).await {
        Ok(mark) => Ok(Some((guard, mark))),
        Err(e) => {
            // Give the lock back so the other side is not stuck behind a failed check.
            let _ = guard.release().await;
            Err(e)
        }
    }
}

/// Unmarks, then releases.
async fn give_back(
    client: &Client,
    guard: shepherd_recipes::AnyGuard,
    mark: Mark,
) -> Result<(), String> {
    leave(client, mark).await?;
    guard
        .release()
        .await
        .map_err(|e| format!("error: releasing: {e}"))
}

async fn connect(connect: &str) -> Result<Client, String> {
    Client::connect(connect)
        .await
        .map_err(|e| format!("error: connecting: {e}"))
}

async fn hold(
    connect_to: String,
    id: String,
    kind: LockKind,
    path: String,
    release: oneshot::Receiver<()>,
) {
    let client = match connect(&connect_to).await {
        Ok(c) => c,
        Err(e) => return reply(&id, &e),
    };
    match take(&client, kind, &path, WAIT).await {
        Ok(Some((guard, mark))) => {
            reply(&id, "held");
            // Released on `release ID`, or when the driver goes (the sender dropped).
            let _ = release.await;
            match give_back(&client, guard, mark).await {
                Ok(()) => reply(&id, "released"),
                Err(e) => reply(&id, &e),
            }
        }
        Ok(None) => reply(&id, "timeout"),
        Err(e) => reply(&id, &e),
    }
    let _ = client.close().await;
}

async fn attempt(connect_to: String, id: String, kind: LockKind, path: String) {
    let client = match connect(&connect_to).await {
        Ok(c) => c,
        Err(e) => return reply(&id, &e),
    };
    match take(&client, kind, &path, BRIEF).await {
        Ok(Some((guard, mark))) => match give_back(&client, guard, mark).await {
            Ok(()) => reply(&id, "got"),
            Err(e) => reply(&id, &e),
        },
        Ok(None) => reply(&id, "busy"),
        Err(e) => reply(&id, &e),
    }
    let _ = client.close().await;
}

/// `owners` owners, each on its own session, take the lock `rounds` times each.
async fn churn(
    connect_to: String,
    id: String,
    kind: LockKind,
    path: String,
    owners: usize,
    rounds: usize,
) {
    let taken = Arc::new(AtomicU64::new(0));
    let violations = Arc::new(AtomicU64::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..owners {
        let (connect_to, path) = (connect_to.clone(), path.clone());
        let (taken, violations) = (taken.clone(), violations.clone());
        tasks.spawn(async move {
            let client = connect(&connect_to).await?;
            for _ in 0..rounds {
                match take(&client, kind, &path, WAIT).await {
                    Ok(Some((guard, mark))) => {
                        taken.fetch_add(1, Ordering::Relaxed);
                        // Hold a moment, so that holders would overlap if they could.
                        tokio::time::sleep(Duration::from_millis(2)).await;
                        give_back(&client, guard, mark).await?;
                    }
                    Ok(None) => {
                        return Err("timeout: an owner waited 20 s for its turn".to_string());
                    }
                    Err(e) if e.starts_with("violation") => {
                        violations.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => return Err(e),
                }
            }
            let _ = client.close().await;
            Ok(())
        });
    }
    let mut failure = None;
    while let Some(done) = tasks.join_next().await {
        match done {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failure = failure.or(Some(e)),
            Err(e) => failure = failure.or(Some(format!("error: an owner's task failed: {e}"))),
        }
    }
    match failure {
        Some(e) => reply(&id, &e),
        None => reply(
            &id,
            &format!(
                "churned {} violations {}",
                taken.load(Ordering::Relaxed),
                violations.load(Ordering::Relaxed)
            ),
        ),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(connect_to), None) = (args.next(), args.next()) else {
        eprintln!("usage: curator_fleet HOST:PORT   (commands on stdin; see the module docs)");
        return ExitCode::from(2);
    };
    // stdin is read on a plain thread: the runtime has no blocking-stdin support enabled.
    let (lines_tx, mut lines) = mpsc::channel::<String>(64);
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if lines_tx.blocking_send(line).is_err() {
                break;
            }
        }
    });
    let mut releases: HashMap<String, oneshot::Sender<()>> = HashMap::new();
    let mut running = tokio::task::JoinSet::new();
    while let Some(line) = lines.recv().await {
        if line.trim().is_empty() {
            continue;
        }
        match parse(&line) {
            Ok(Command::Hold { id, kind, path }) => {
                let (tx, rx) = oneshot::channel();
                releases.insert(id.clone(), tx);
                running.spawn(hold(connect_to.clone(), id, kind, path, rx));
            }
            Ok(Command::Release { id }) => match releases.remove(&id) {
                Some(tx) => {
                    // The hold replies "released" itself once it has given the lock back.
                    let _ = tx.send(());
                }
                None => reply(&id, "error: nothing held under this id"),
            },
            Ok(Command::Try { id, kind, path }) => {
                running.spawn(attempt(connect_to.clone(), id, kind, path));
            }
            Ok(Command::Churn {
                id,
                kind,
                path,
                owners,
                rounds,
            }) => {
                running.spawn(churn(connect_to.clone(), id, kind, path, owners, rounds));
            }
            Err(e) => reply("-", &format!("error: {e}")),
        }
    }
    // The driver closed stdin: every hold gives its lock back, then we are done.
    drop(releases);
    while running.join_next().await.is_some() {}
    ExitCode::SUCCESS
}
