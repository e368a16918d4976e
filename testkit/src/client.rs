//! shepherd-client sessions as tests open them, and the waits on a folder's children that the
//! lock tests build on.
//!
//! Invariant: every wait here is an event (a session, a child or exists watch), bounded by
//! [`WAIT`](crate::WAIT) unless the caller names its own bound; nothing polls.

use std::time::Duration;

use shepherd_client::Client;

use crate::wait::{Hang, WAIT, bounded, within};

/// The session timeout tests ask for unless they need another: long enough that nothing
/// expires by accident on a loaded machine (expiry in tests is always forced).
pub const SESSION_TIMEOUT: Duration = Duration::from_secs(10);

/// A client with a [`SESSION_TIMEOUT`] session.
pub async fn connect(connect: &str) -> Client {
    connect_with(connect, SESSION_TIMEOUT).await
}

/// A client asking for `timeout` as its session timeout.
pub async fn connect_with(connect: &str, timeout: Duration) -> Client {
    try_connect_with(connect, timeout, WAIT)
        .await
        .unwrap_or_else(|hang| panic!("{hang}"))
        .unwrap_or_else(|e| panic!("connect to {connect}: {e}"))
}

/// [`connect_with`] for callers that report failures as values (a matrix of cases, each with
/// its own verdict): a [`Hang`] if no session came within `limit`, else the client's outcome.
pub async fn try_connect_with(
    connect: &str,
    timeout: Duration,
    limit: Duration,
) -> Result<Result<Client, shepherd_client::Error>, Hang> {
    bounded(
        limit,
        &format!("a session with {connect}"),
        Client::builder().session_timeout(timeout).connect(connect),
    )
    .await
}

/// The children of `dir` now (none if it is missing), sorted.
pub async fn children(client: &Client, dir: &str) -> Vec<String> {
    match client.get_children(dir).await {
        Ok(mut c) => {
            c.sort();
            c
        }
        Err(e) if e.is_no_node() => Vec::new(),
        Err(e) => panic!("get_children {dir}: {e}"),
    }
}

/// The ephemeral nodes under `path` (at any depth), with their owners' session ids, sorted.
/// A folder is walked, a node that vanishes meanwhile is skipped.
pub async fn ephemerals(client: &Client, path: &str) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    let mut todo = vec![path.to_owned()];
    while let Some(p) = todo.pop() {
        let children = match client.get_children(&p).await {
            Ok(c) => c,
            Err(e) if e.is_no_node() => continue,
            Err(e) => panic!("get_children {p}: {e}"),
        };
        for child in children {
            let child = format!("{p}/{child}");
            match client.exists(&child).await.expect("exists") {
                Some(stat) if stat.ephemeral_owner != 0 => {
                    out.push((child, stat.ephemeral_owner));
                }
                Some(_) => todo.push(child),
                None => {}
            }
        }
    }
    out.sort();
    out
}

/// Waits (on child watches) until the children of `dir` satisfy `pred`; a missing `dir` counts
/// as no children. Returns them, sorted.
pub async fn wait_children(
    client: &Client,
    dir: &str,
    pred: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    within(&format!("children of {dir}"), async {
        loop {
            match client.get_children_w(dir).await {
                Ok((mut children, _, watcher)) => {
                    children.sort();
                    if pred(&children) {
                        return children;
                    }
                    watcher.await.expect("child watch");
                }
                Err(e) if e.is_no_node() => {
                    let (stat, watcher) = client.exists_w(dir).await.expect("exists");
                    if stat.is_none() {
                        if pred(&[]) {
                            return Vec::new();
                        }
                        watcher.await.expect("exists watch");
                    }
                }
                Err(e) => panic!("get_children {dir}: {e}"),
            }
        }
    })
    .await
}

/// One round trip on each client: every watch event the server sent them before now has
/// resolved its watcher when this returns (a server sends a change's notifications before the
/// reply to any later request on the same connection).
pub async fn settle(clients: &[Client]) {
    for c in clients {
        within("settle", c.exists("/")).await.expect("exists /");
    }
}
