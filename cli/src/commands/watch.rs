//! `shepherd watch PATH`: prints the events of a persistent watch (persistent recursive with
//! `-R`) until Ctrl-C or SIGTERM.
//!
//! Invariants: the line `watching PATH …` goes to stderr once the watch is armed on the server,
//! so that whatever happens after it is reported (a script or test waits for it before
//! changing anything); each event is flushed to stdout as it arrives; session events (a
//! disconnection, the reconnection) are printed too, since events during a disconnection are
//! not replayed; the end of the session ends the command with its error.

use clap::Args;
use serde::Serialize;
use shepherd_client::{AddWatchMode, Client, EventType, WatchedEvent};

use super::error::{AtPath, CliError};
use super::output::Out;

/// `shepherd watch PATH`.
#[derive(Args, Debug)]
pub struct WatchArgs {
    /// The node to watch (it need not exist).
    #[arg(value_parser = super::znode_path::parse)]
    pub path: String,
    /// Watch the whole subtree (persistent recursive), not just the node.
    #[arg(long, short = 'R')]
    pub recursive: bool,
}

#[derive(Serialize)]
struct EventJson<'a> {
    #[serde(rename = "type")]
    event_type: &'a str,
    state: &'a str,
    path: &'a str,
}

/// The line an event prints as: `NodeCreated /a/b`, or `session Disconnected`.
pub fn event_text(event: &WatchedEvent) -> String {
    if event.event_type == EventType::None {
        format!("session {}", event.state.name())
    } else {
        format!("{} {}", event.event_type.name(), event.path)
    }
}

/// Prints events until a stop signal (exit 0) or the end of the session (its error).
pub async fn watch(client: &Client, args: &WatchArgs, out: &mut Out) -> Result<(), CliError> {
    let mode = if args.recursive {
        AddWatchMode::PersistentRecursive
    } else {
        AddWatchMode::Persistent
    };
    let mut watcher = client.add_watch(&args.path, mode).await.at(&args.path)?;
    let stop = super::wait::stop_signal()?;
    eprintln!(
        "watching {} ({}); Ctrl-C to stop",
        args.path,
        if args.recursive {
            "persistent recursive"
        } else {
            "persistent"
        }
    );
    tokio::pin!(stop);
    loop {
        let event = tokio::select! {
            () = &mut stop => return Ok(()),
            event = watcher.next_event() => event,
        };
        let Some(event) = event else {
            // The stream ends with the session: report why.
            let error = client
                .exists("/")
                .await
                .err()
                .unwrap_or(shepherd_client::Error::Closed);
            return Err(error).at(&args.path);
        };
        if out.json {
            out.json_line(&EventJson {
                event_type: event.event_type.name(),
                state: event.state.name(),
                path: &event.path,
            })?;
        } else {
            out.line(event_text(&event))?;
        }
        out.flush()?;
    }
}
