//! shepherd-client sessions as tests open them, and the waits on a folder's children that the
//! lock tests build on.
//!
//! Invariant: every wait here is an event (a child or exists watch), bounded by
//! [`WAIT`](crate::WAIT); nothing polls.

use std::time::Duration;

use shepherd_client::Client;

use crate::wait::within;

/// The session timeout tests ask for unless they need another: long enough that nothing
/// expires by accident on a loaded machine (expiry in tests is always forced).
pub const SESSION_TIMEOUT: Duration = Duration::from_secs(10);

/// A client with a [`SESSION_TIMEOUT`] session.
pub async fn connect(connect: &str) -> Client {
    connect_with(connect, SESSION_TIMEOUT).await
}

/// A client asking for `timeout` as its session timeout.
pub async fn connect_with(connect: &str, timeout: Duration) -> Client {
    within(
        &format!("a session with {connect}"),
        Client::builder().session_timeout(timeout).connect(connect),
    )
    .await
    .unwrap_or_else(|e| panic!("connect to {connect}: {e}"))
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
