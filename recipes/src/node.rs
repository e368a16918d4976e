//! The node-level moves every recipe is made of: making the lock folder (as a container),
//! creating our contender node so that a lost reply never leaves an orphan, and deleting our
//! node exactly when it is still ours.
//!
//! Invariants:
//! * after [`Error::ConnectionLoss`] nothing is simply retried: the create may have happened,
//!   so we first look for our node by what only we could have written (a unique name prefix,
//!   or unique data for a fixed name), and the delete may have happened, so we re-read first;
//! * requests issued while disconnected wait in the client for the next connection, so
//!   "retry" here never spins; only the end of the session stops the loops;
//! * "ours" means the creation zxid (`czxid`) we recorded, so a node of the same name created
//!   later by someone else is never deleted.
//!
//! [`Error::ConnectionLoss`]: shepherd_client::Error::ConnectionLoss

use shepherd_client::{
    Client, CreateMode, CreateOptions, Error as ZkError, ErrorCode, SessionState,
};

use crate::names::join;

/// Creates `path` and any missing ancestors as container nodes (ZooKeeper 3.5+ deletes a
/// container once its last child is gone), or as persistent nodes when the server answers
/// `Unimplemented`. An existing node is fine.
pub(crate) async fn ensure_path(client: &Client, path: &str) -> Result<(), ZkError> {
    let mut options = CreateOptions::new(CreateMode::Container);
    loop {
        match client.create_all(path, b"", &options).await {
            Ok(_) => return Ok(()),
            Err(ZkError::Keeper(ErrorCode::Unimplemented))
                if options.mode == CreateMode::Container =>
            {
                options = CreateOptions::persistent();
            }
            // Outcome unknown: the retry answers that the node exists if it was made.
            Err(ZkError::ConnectionLoss) => wait_not_disconnected(client).await,
            Err(e) => return Err(e),
        }
    }
}

/// Waits until the session is not `Disconnected` (connected again, or ended).
pub(crate) async fn wait_not_disconnected(client: &Client) {
    let mut rx = client.status_watch();
    let _ = rx.wait_for(|s| s.state != SessionState::Disconnected).await;
}

/// A created contender node.
#[derive(Debug, Clone)]
pub(crate) struct Created {
    /// Its full path.
    pub(crate) path: String,
    /// Its creation zxid: the fencing token.
    pub(crate) czxid: i64,
}

/// Creates the ephemeral-sequential node `dir/prefix<seq>`, making `dir` as needed. After a
/// connection loss it looks for a child starting with `prefix` (unique to this attempt)
/// before trying again.
pub(crate) async fn create_sequential(
    client: &Client,
    dir: &str,
    prefix: &str,
    data: &[u8],
) -> Result<Created, ZkError> {
    let options = CreateOptions::new(CreateMode::EphemeralSequential);
    let target = join(dir, prefix);
    loop {
        match client.create(&target, data, &options).await {
            Ok((path, stat)) => {
                return Ok(Created {
                    path,
                    czxid: stat.czxid,
                });
            }
            Err(e) if e.is_no_node() => ensure_path(client, dir).await?,
            Err(ZkError::ConnectionLoss) => {
                if let Some(found) = find_by_prefix(client, dir, prefix).await? {
                    return Ok(found);
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// Our node under `dir`, found by its unique prefix, if the create happened.
pub(crate) async fn find_by_prefix(
    client: &Client,
    dir: &str,
    prefix: &str,
) -> Result<Option<Created>, ZkError> {
    loop {
        let children = match client.get_children(dir).await {
            Ok(c) => c,
            Err(e) if e.is_no_node() => return Ok(None),
            Err(ZkError::ConnectionLoss) => {
                wait_not_disconnected(client).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        let Some(name) = children.into_iter().find(|c| c.starts_with(prefix)) else {
            return Ok(None);
        };
        let path = join(dir, &name);
        match client.exists(&path).await {
            Ok(Some(stat)) => {
                return Ok(Some(Created {
                    path,
                    czxid: stat.czxid,
                }));
            }
            Ok(None) => return Ok(None),
            Err(ZkError::ConnectionLoss) => wait_not_disconnected(client).await,
            Err(e) => return Err(e),
        }
    }
}

/// Creates the ephemeral node `path` holding `data` (unique to this attempt). `Ok(None)` when
/// someone else's node is there. After a connection loss, a `NodeExists` is resolved by reading
/// the node back and comparing its data with ours (as [`crate::EphemeralLock`] documents).
pub(crate) async fn create_fixed(
    client: &Client,
    path: &str,
    data: &[u8],
) -> Result<Option<Created>, ZkError> {
    let mut after_loss = false;
    loop {
        match client.create(path, data, &CreateOptions::ephemeral()).await {
            Ok((path, stat)) => {
                return Ok(Some(Created {
                    path,
                    czxid: stat.czxid,
                }));
            }
            Err(e) if e.is_node_exists() && !after_loss => return Ok(None),
            Err(e) if e.is_node_exists() => match client.get_data(path).await {
                Ok((d, stat)) if d == data => {
                    return Ok(Some(Created {
                        path: path.to_owned(),
                        czxid: stat.czxid,
                    }));
                }
                Ok(_) => return Ok(None),
                Err(e) if e.is_no_node() => after_loss = false,
                Err(ZkError::ConnectionLoss) => wait_not_disconnected(client).await,
                Err(e) => return Err(e),
            },
            Err(e) if e.is_no_node() => {
                let parent = crate::names::parent(path);
                ensure_path(client, parent).await?;
            }
            Err(ZkError::ConnectionLoss) => after_loss = true,
            Err(e) => return Err(e),
        }
    }
}

/// Deletes `path` if it is still the node created at `czxid`. Gone already, or the session
/// ended (ephemerals go with it): success.
pub(crate) async fn delete_owned(client: &Client, path: &str, czxid: i64) -> Result<(), ZkError> {
    loop {
        let stat = match client.exists(path).await {
            Ok(Some(stat)) if stat.czxid == czxid => stat,
            Ok(_) => return Ok(()),
            Err(e) if e.is_session_ended() => return Ok(()),
            Err(ZkError::ConnectionLoss) => {
                wait_not_disconnected(client).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        match client.delete(path, Some(stat.version)).await {
            Ok(()) => return Ok(()),
            Err(e) if e.is_no_node() || e.is_session_ended() => return Ok(()),
            // Someone changed its data meanwhile; look again.
            Err(e) if e.is_bad_version() => {}
            Err(ZkError::ConnectionLoss) => wait_not_disconnected(client).await,
            Err(e) => return Err(e),
        }
    }
}

/// How to find and delete a node whose create may be in flight, when the path is unknown.
#[derive(Debug, Clone)]
pub(crate) enum Pending {
    /// A sequential node under `dir` whose name starts with `prefix`.
    Prefix { dir: String, prefix: String },
    /// A fixed node at `path` holding `data`.
    Data { path: String, data: Vec<u8> },
}

/// Deletes whatever a possibly applied create left (used on timeout and cancellation).
/// The client sends requests in order, so anything issued here is applied after that create.
pub(crate) async fn delete_pending(client: &Client, pending: &Pending) -> Result<(), ZkError> {
    match pending {
        Pending::Prefix { dir, prefix } => {
            if let Some(found) = find_by_prefix(client, dir, prefix).await? {
                delete_owned(client, &found.path, found.czxid).await?;
            }
            Ok(())
        }
        Pending::Data { path, data } => loop {
            match client.get_data(path).await {
                Ok((d, stat)) if d == *data => return delete_owned(client, path, stat.czxid).await,
                Ok(_) => return Ok(()),
                Err(e) if e.is_no_node() || e.is_session_ended() => return Ok(()),
                Err(ZkError::ConnectionLoss) => wait_not_disconnected(client).await,
                Err(e) => return Err(e),
            }
        },
    }
}
