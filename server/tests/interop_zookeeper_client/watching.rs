//! Looking at watches and events without waiting for time to pass: polling a watcher once,
//! awaiting the next event or state bounded by [`WAIT`](shepherd_testkit::WAIT), a round-trip
//! barrier after which "no event" means none, and the server's own list of watches (`wchp`).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use shepherd_protocol::FourLetterWord;
use shepherd_testkit::{four_letter_word, within};
use zookeeper_client::{self as zk, EventType, SessionState, WatchedEvent};

use crate::Ctx;

/// Polls `future` once, without waiting.
pub fn poll_now<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    Pin::new(future).poll(&mut cx)
}

/// The output of `future`, which must be complete already.
pub fn ready<F: Future + Unpin>(future: &mut F, what: &str) -> F::Output {
    match poll_now(future) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("{what}: not delivered yet, but it must be by now"),
    }
}

/// `future` must not be complete yet.
pub fn assert_pending<F>(future: &mut F, what: &str)
where
    F: Future + Unpin,
    F::Output: std::fmt::Debug,
{
    if let Poll::Ready(output) = poll_now(future) {
        panic!("{what}: expected nothing yet, got {output:?}");
    }
}

/// A pending one-shot watch, pollable without consuming it.
pub type Oneshot = Pin<Box<dyn Future<Output = WatchedEvent> + Send>>;

/// `watcher` as a pollable [`Oneshot`].
pub fn oneshot(watcher: zk::OneshotWatcher) -> Oneshot {
    Box::pin(watcher.changed())
}

/// The event a node watch reports.
pub fn event(event_type: EventType, path: &str) -> WatchedEvent {
    // 3.8 notifications carry zxid -1 in their header (docs/protocol.md §0, §9.5); the crate reports it as is.
    WatchedEvent::new(event_type, path)
}

/// Awaits the event of a one-shot watch, bounded by [`WAIT`](shepherd_testkit::WAIT), and
/// asserts that it is `event_type` on `path`.
pub async fn assert_fires(
    watcher: impl Future<Output = WatchedEvent>,
    event_type: EventType,
    path: &str,
) {
    let what = format!("{event_type:?} on {path}");
    assert_eq!(
        within(&what, watcher).await,
        event(event_type, path),
        "{what}"
    );
}

/// After a round trip on `client`'s connection, the server holds no data-table watch of its
/// session under this run's root (a fired one-shot watch is consumed, docs/protocol.md §9.1).
pub async fn assert_unwatched(ctx: &Ctx, client: &zk::Client) {
    barrier(client).await;
    let left = watched_paths(ctx, client.session_id()).await;
    assert_eq!(
        left,
        Vec::<String>::new(),
        "watches left after a round trip"
    );
}

/// The next event of a persistent watch.
pub async fn next_event(watcher: &mut zk::PersistentWatcher) -> WatchedEvent {
    within("a persistent watch event", watcher.changed()).await
}

/// After a round trip on the watcher's connection: no event is waiting.
pub fn assert_no_event(watcher: &mut zk::PersistentWatcher, what: &str) {
    let mut next = Box::pin(watcher.changed());
    assert_pending(&mut next, what);
}

/// The next session state.
pub async fn next_state(watcher: &mut zk::StateWatcher) -> SessionState {
    within("a session state change", watcher.changed()).await
}

/// A round trip on `client`'s connection: every event triggered before it has been dispatched
/// when it returns (docs/protocol.md §9.6).
pub async fn barrier(client: &zk::Client) {
    within("a sync round trip", client.sync("/"))
        .await
        .expect("sync");
}

/// The paths under this run's root where the server holds a data-table watch (data, exist,
/// persistent or recursive) for `session`, according to `wchp` (docs/protocol.md §14.3).
pub async fn watched_paths(ctx: &Ctx, session: zk::SessionId) -> Vec<String> {
    let text = four_letter_word(&ctx.connect, FourLetterWord::Wchp).await;
    let me = format!("\t0x{:x}", session.0);
    let mut current = "";
    let mut paths = Vec::new();
    for line in text.lines() {
        if line.starts_with('\t') {
            if line == me && (current == ctx.root || current.starts_with(&ctx.path(""))) {
                paths.push(current.to_string());
            }
        } else {
            current = line;
        }
    }
    paths.sort();
    paths.dedup();
    paths
}
